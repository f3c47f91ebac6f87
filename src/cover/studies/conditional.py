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

from cover.calibrate.groups import length_terciles
from cover.calibrate.mondrian import mondrian_conformal
from cover.calibrate.split import split_conformal
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


def _mondrian(pair: Pair, fam: str, alpha: float) -> list[dict[str, Any]]:
    """One threshold per tercile of the predicted length (cut points from the pool,
    refusals their own group, too-small groups fall back to the pooled threshold)."""
    pool_len = pair.pool.pred_end - pair.pool.pred_start
    test_len = pair.test.pred_end - pair.test.pred_start
    grouping = length_terciles(pool_len)
    th = mondrian_conformal(pair.sweep("pool", fam).scores, grouping.assign(pool_len),
                            grouping, alpha=alpha, warn=False)
    codes = grouping.assign(test_len)
    m = pair.sweep("test", fam).at(th.per_row(codes)[None, :])
    out = []
    for g, label in enumerate(grouping.labels):
        mask = codes == g
        if not mask.any():
            continue
        cov = float(m.coverage(mask)[0])
        out.append({"half": "mondrian", "family": fam, "stratum": label.capitalize(),
                    "n": int(mask.sum()), "coverage": cov,
                    "length": float(m.mean("length", mask)[0]), "deviation": (1 - alpha) - cov,
                    "threshold": float(th.values[g]), "n_calibration": int(th.n[g]),
                    "fallback": bool(th.fallback[g])})
    return out


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
    for fam in ("norm", "sec"):
        if fam in pair.families:
            cells += _mondrian(pair, fam, alpha)

    def cell(half: str, fam: str, stratum: str) -> dict[str, Any] | None:
        return next((c for c in cells if c["half"] == half and c["family"] == fam
                     and c["stratum"] == stratum), None)

    def show(c: dict[str, Any] | None) -> list[str]:
        # A stratum without test rows has no coverage: "--", never "nan".
        if c is None or c["n"] == 0:
            return ["--", "--"]
        flag = " (low)" if c["coverage"] < target - SHADE_GAP else ""
        return [f"{fmt(c['coverage'])}{flag}", fmt(c["length"], 1)]

    rows = []
    names = list(dict.fromkeys([n for n, _ in strata] + [
        c["stratum"] for c in cells if c["half"] == "mondrian"]))
    for name in names:
        rows.append((pair.name, pair.dataset, name, *show(cell("diagnostic", "norm", name)),
                     *show(cell("mondrian", "norm", name))))
    main = Table("conditional", f"Conditional coverage, NORM, target {target:.2f}. "
                 "Diagnostic: one pooled threshold, test rows stratified by true event "
                 "length tercile (and window count). Mondrian: one threshold per tercile of "
                 "predicted length (refusals their own group). The two halves stratify by "
                 "different properties: compare each half's worst stratum with the target. "
                 "'(low)' = more than 0.02 below target.",
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
                and c["stratum"] in TERCILES and c["n"] > 0]
        if here:
            w = max(here, key=lambda c: c["deviation"])
            worst[half] = {"stratum": w["stratum"], "deviation": w["deviation"],
                           "coverage": w["coverage"]}
    data = {"alpha": alpha, "target": target, "cells": cells, "worst": worst}
    tables = [main, by_family]
    if "norm" in pair.families:  # marginal vs Mondrian vs conditional, with diagnostics
        from cover.studies.rule_diagnostics import compare_rules, rules_table

        rules = compare_rules(pair.pool, pair.test, alpha)
        data["rules"] = rules
        tables.append(rules_table(pair.name, pair.dataset, rules, alpha))
    return StudyResult("conditional", "Conditional coverage", pair.label, data, tables)

