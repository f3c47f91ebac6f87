"""Study 9, reported uncertainty vs COVER (paper Table 11; SPEC §6.9).

A grounder that reports Gaussian boundary uncertainty (``start_std``, ``end_std``; e.g.
an ensemble of checkpoints) turned into its nominal region at ``1 - alpha``,
``[s - z·start_std, e + z·end_std]`` with ``z = Phi^-1(1 - alpha/2)``, no calibration
(:func:`cover.grounders.ensemble.gaussian_region`), against COVER on the same
predictions and test split: NORM, SEC and SIGMA (widening by the reported sd),
calibrated on the pool resamples. Realised coverage and length at each target.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cover.studies.common import HEADLINE_TARGETS, Missing, alpha_of
from cover.studies.context import Pair
from cover.studies.result import StudyResult, Table, family_label, fmt
from cover.studies.sweep import Sweep, resample_thresholds

#: Coverage more than this below target is flagged (the paper's shading).
SHADE_GAP = 0.02


def uncertainty(pair: Pair, targets: tuple[float, ...] = HEADLINE_TARGETS) -> StudyResult:
    """Nominal Gaussian region vs COVER at each target."""
    has_std = pair.table.start_std is not None and pair.table.end_std is not None
    alphas = tuple(alpha_of(t) for t in targets)
    cells: list[dict[str, Any]] = []
    missing: list[Missing] = []
    if has_std:
        from cover.grounders.ensemble import gaussian_region
        from cover.scores import truth_target

        truth = truth_target(pair.test, "envelope")
        for t, a in zip(targets, alphas, strict=True):
            reg = gaussian_region(pair.test, a)
            covered, _ = reg.relate(truth)
            cells.append({"method": "nominal", "target": t, "coverage": float(covered.mean()),
                          "length": float(reg.length().mean())})
    else:
        missing.append(Missing("Nominal region of the grounder's own uncertainty",
                               "a prediction file with start_std/end_std (e.g. `cover "
                               "ensemble` of several checkpoints)"))
    fams = [*pair.families, "sigma"] if has_std else list(pair.families)
    for fam in fams:
        if fam == "sls":
            continue
        pool = pair.sweep("pool", fam) if fam != "sigma" else Sweep.of(
            pair.pool, "sigma", min_scale=pair.min_scale)
        test = pair.sweep("test", fam) if fam != "sigma" else Sweep.of(
            pair.test, "sigma", min_scale=pair.min_scale)
        th = resample_thresholds(pool.scores, pair.masks, alphas)
        for j, t in enumerate(targets):
            m = test.at(th.values[j])
            cells.append({"method": f"COVER ({family_label(fam)})", "target": t,
                          "coverage": float(m.coverage().mean()),
                          "length": float(m.mean("length").mean())})
    rows = []
    for meth in dict.fromkeys(c["method"] for c in cells):
        here = {c["target"]: c for c in cells if c["method"] == meth}
        label = "grounder's own sd (nominal)" if meth == "nominal" else meth
        row = [pair.name, pair.dataset, label]
        for t in targets:
            c = here[t]
            low = " (low)" if c["coverage"] < t - SHADE_GAP else ""
            row += [f"{fmt(c['coverage'])}{low}", f"{c['length']:.1f} s"]
        rows.append(tuple(row))
    if not has_std:
        rows.insert(0, (pair.name, pair.dataset, "grounder's own sd (nominal)",
                        *("--" for _ in range(2 * len(targets)))))
    header = ("Grounder", "Dataset", "Method",
              *(x for t in targets for x in (f"Cov. @{t:.2f}", f"Len. @{t:.2f}")))
    table = Table("uncertainty", "Reported uncertainty vs COVER: the grounder's own Gaussian "
                  "boundary sd as a nominal region (no calibration) against COVER on the same "
                  "predictions; SIGMA is COVER widening by the reported sd. '(low)' = more "
                  "than 0.02 below target.", header, tuple(rows))
    ss, es = pair.table.start_std, pair.table.end_std
    data = {"targets": list(targets), "has_std": has_std, "cells": cells,
            "mean_std": [float(np.nanmean(ss)), float(np.nanmean(es))]
            if ss is not None and es is not None else None}
    return StudyResult("uncertainty", "Reported uncertainty vs COVER", pair.label, data,
                       [table], missing)
