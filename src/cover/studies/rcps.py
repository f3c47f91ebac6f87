"""Study 3, risk control (paper Table 6; SPEC §6.3).

RCPS at ``alpha = delta = 0.1``: the threshold whose upper confidence bound on the
miss rate stays at or below ``alpha`` (the library's RCPS rule, which names the bound
it used). Reported per family: ``lam_RCPS``, its coverage and length on the test
split, the fraction of calibration resamples whose ``lam`` violates ``alpha`` on the
test split (RCPS bounds it by ``delta``), and the length cost against plain split
conformal at the same ``alpha``: ``Delta = 100 (len_RCPS - len_split) / len_split``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cover.calibrate.split import split_conformal
from cover.report.tables import family_label
from cover.studies.common import Missing
from cover.studies.context import Pair
from cover.studies.result import StudyResult, Table, fmt


def rcps(pair: Pair, alpha: float = 0.1, delta: float = 0.1) -> StudyResult:
    """RCPS vs split conformal at the same nominal alpha."""
    cells: list[dict[str, Any]] = []
    for fam in pair.families:
        test = pair.sweep("test", fam)
        th = pair.thresholds(fam, (alpha,))
        m = test.at(th.values[0])
        split_viol = float(np.mean(m.coverage() < 1 - alpha))
        lam = split_conformal(pair.sweep("pool", fam).scores, alpha=alpha, warn=False).value
        ms = test.at(np.array([lam]))
        cells.append({"family": fam, "split_threshold": lam,
                      "split_coverage": float(ms.coverage()[0]),
                      "split_length": float(ms.mean("length")[0]),
                      "split_violation_fraction": split_viol})
    rows = tuple((pair.name, pair.dataset, family_label(c["family"]), "--", "--", "--", "--",
                  fmt(c["split_length"], 1), "--") for c in cells)
    table = Table("rcps", f"RCPS (alpha = {alpha}, delta = {delta}) vs split conformal at the "
                  "same alpha. Viol. = fraction of calibration resamples whose threshold "
                  "violates the target miss rate on the test split (bounded by delta).",
                  ("Grounder", "Dataset", "Family", "lam_RCPS", "Cov.", "Len. (s)", "Viol.",
                   "Len. split (s)", "Delta (%)"), rows)
    missing = [Missing("RCPS columns", "the RCPS calibration rule (cover.calibrate rcps)")]
    data = {"alpha": alpha, "delta": delta, "cells": cells}
    return StudyResult("rcps", "Risk control (RCPS)", pair.label, data, [table], missing)
