"""Study 9, reported uncertainty vs COVER (paper Table 11; SPEC §6.9).

A grounder that reports Gaussian boundary uncertainty (``start_std``, ``end_std``)
turned into its nominal region at ``1 - alpha`` (the library's Gaussian nominal
region), against COVER's calibrated NORM and SEC regions on the same predictions and
test split: realised coverage and length of each at the headline targets.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cover.report.tables import family_label
from cover.studies.common import HEADLINE_TARGETS, Missing, alpha_of
from cover.studies.context import Pair
from cover.studies.result import StudyResult, Table, fmt


def uncertainty(pair: Pair, targets: tuple[float, ...] = HEADLINE_TARGETS) -> StudyResult:
    """Nominal Gaussian region vs COVER at each target."""
    has_std = pair.table.start_std is not None and pair.table.end_std is not None
    cells: list[dict[str, Any]] = []
    for fam in ("norm", "sec"):
        if fam not in pair.families:
            continue
        th = pair.thresholds(fam, tuple(alpha_of(t) for t in targets))
        for j, t in enumerate(targets):
            m = pair.sweep("test", fam).at(th.values[j])
            cells.append({"method": f"COVER ({family_label(fam)})", "target": t,
                          "coverage": float(m.coverage().mean()),
                          "length": float(m.mean("length").mean())})
    missing = [Missing("Nominal Gaussian region of the grounder's own uncertainty",
                       "the Gaussian nominal region (cover.calibrate uncertainty)" if has_std
                       else "a prediction file with start_std/end_std (e.g. an ensemble)")]
    rows = [(pair.name, pair.dataset, "grounder's own (nominal)",
             *(x for _ in targets for x in ("--", "--")))]
    for meth in dict.fromkeys(c["method"] for c in cells):
        here = [c for c in cells if c["method"] == meth]
        rows.append((pair.name, pair.dataset, meth,
                     *(x for c in here for x in (fmt(c["coverage"]), f"{c['length']:.1f} s"))))
    header = ("Grounder", "Dataset", "Method",
              *(x for t in targets for x in (f"Cov. @{t:.2f}", f"Len. @{t:.2f}")))
    table = Table("uncertainty", "Reported uncertainty vs COVER: the grounder's Gaussian "
                  "boundary uncertainty as a nominal region, against COVER on the same "
                  "predictions.", header, tuple(rows))
    ss, es = pair.table.start_std, pair.table.end_std
    data = {"targets": list(targets), "has_std": has_std, "cells": cells,
            "mean_std": [float(np.mean(ss)), float(np.mean(es))]
            if ss is not None and es is not None else None}
    return StudyResult("uncertainty", "Reported uncertainty vs COVER", pair.label, data,
                       [table], missing)
