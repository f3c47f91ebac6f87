"""Study 4, conditional coverage (paper Tables 7-8; SPEC §6.4).

Diagnostic half (evaluation only): one threshold calibrated on the whole pool at
``alpha``; test coverage and length within terciles of the *true* event length (cut
points from the pool) and, where the truth has several windows, single vs
multi-window rows. Mondrian half: one threshold per tercile of the *predicted* length
(cut points from the calibration set, refusals their own group), so the strata are
known before the answer. The worst stratum's deviation from the target summarises each
half.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.split import split_conformal
from cover.studies.common import Missing
from cover.studies.context import Pair
from cover.studies.result import StudyResult, Table, fmt

TERCILES = ("Short", "Medium", "Long")
#: The paper shades coverage more than this far below target.
SHADE_GAP = 0.02


def tercile_of(x: NDArray[np.float64], ref: NDArray[np.float64]) -> NDArray[np.int64]:
    """0/1/2 by the 1/3 and 2/3 quantiles of ``ref``."""
    cuts = np.quantile(ref, [1 / 3, 2 / 3])
    return np.searchsorted(cuts, x, side="right").astype(np.int64)


def _strata(pair: Pair) -> list[tuple[str, NDArray[np.bool_]]]:
    ps, pe = pair.pool.truth_envelope()
    ts, te = pair.test.truth_envelope()
    t = tercile_of(te - ts, pe - ps)
    out = [(TERCILES[i], t == i) for i in range(3)]
    n_win = pair.test.require_truth().n_components
    if (n_win > 1).any():
        out += [("Single-window", n_win == 1), ("Multi-window", n_win > 1)]
    return out


def _mondrian(pair: Pair, fam: str, alpha: float) -> list[dict[str, Any]] | Missing:
    """Per-stratum thresholds on predicted-length terciles (the library's Mondrian rule)."""
    return Missing("Mondrian half", "the Mondrian calibration rule (cover.calibrate mondrian)")


def conditional(pair: Pair, alpha: float = 0.1) -> StudyResult:
    """Coverage by stratum of true length / window count, and the Mondrian half."""
    target = 1 - alpha
    strata = _strata(pair)
    cells: list[dict[str, Any]] = []
    for fam in ("norm", "sec"):
        if fam not in pair.families:
            continue
        lam = split_conformal(pair.sweep("pool", fam).scores, alpha=alpha, warn=False).value
        m = pair.sweep("test", fam).at(np.array([lam]))
        for name, mask in strata:
            cov = float(m.coverage(mask)[0])
            cells.append({"half": "diagnostic", "family": fam, "stratum": name,
                          "n": int(mask.sum()), "coverage": cov,
                          "length": float(m.mean("length", mask)[0]),
                          "deviation": target - cov})
    missing: list[Missing] = []
    for fam in ("norm", "sec"):
        if fam not in pair.families:
            continue
        got = _mondrian(pair, fam, alpha)
        if isinstance(got, Missing):
            if not missing:
                missing.append(got)
        else:
            cells += got

    def cell(half: str, fam: str, stratum: str) -> dict[str, Any] | None:
        return next((c for c in cells if c["half"] == half and c["family"] == fam
                     and c["stratum"] == stratum), None)

    def show(c: dict[str, Any] | None) -> list[str]:
        if c is None:
            return ["--", "--"]
        flag = " (low)" if c["coverage"] < target - SHADE_GAP else ""
        return [f"{c['coverage']:.3f}{flag}", fmt(c["length"], 1)]

    rows = []
    for name, _ in strata:
        rows.append((pair.name, pair.dataset, name, *show(cell("diagnostic", "norm", name)),
                     *show(cell("mondrian", "norm", name))))
    main = Table("conditional", f"Conditional coverage, NORM, target {target:.2f}. "
                 "Diagnostic: one pooled threshold, test rows stratified by true event "
                 "length tercile (and window count). Mondrian: one threshold per tercile of "
                 "predicted length. '(low)' = more than 0.02 below target.",
                 ("Grounder", "Dataset", "Stratum", "Diag. cov.", "Diag. len.",
                  "Mondrian cov.", "Mondrian len."), tuple(rows))
    sec_rows = []
    for name, _ in strata:
        sec_rows.append((pair.name, pair.dataset, name, *show(cell("diagnostic", "norm", name)),
                         *show(cell("diagnostic", "sec", name))))
    by_family = Table("conditional_family", f"Length-stratified coverage by score family "
                      f"(diagnostic half, target {target:.2f}).",
                      ("Grounder", "Dataset", "Stratum", "NORM cov.", "NORM len.",
                       "SEC cov.", "SEC len."), tuple(sec_rows))
    worst = {}
    for half in ("diagnostic", "mondrian"):
        here = [c for c in cells if c["half"] == half and c["family"] == "norm"
                and c["stratum"] in TERCILES]
        if here:
            w = max(here, key=lambda c: c["deviation"])
            worst[half] = {"stratum": w["stratum"], "deviation": w["deviation"],
                           "coverage": w["coverage"]}
    data = {"alpha": alpha, "target": target, "cells": cells, "worst": worst}
    return StudyResult("conditional", "Conditional coverage", pair.label, data,
                       [main, by_family], missing)

