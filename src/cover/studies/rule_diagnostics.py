"""Marginal vs Mondrian vs conditional calibration on one (pool, test) split: coverage,
worst stratum, worst slab, coverage gap and length (the conditional study's diagnostics
table, ``docs/conditional.py``).

Rules, all NORM at ``alpha`` fitted on the pool: ``split`` (one threshold),
``mondrian`` (one per predicted-length tercile) and ``conditional`` over
:data:`COVARIATES`. Strata are the paper's: terciles of the *true* event length (cut
points from the pool) and, where the truth has several windows, single vs
multi-window rows; the worst stratum is the one with the least coverage. Diagnostics
(:mod:`cover.studies.diagnostics`) are over the same covariates.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cover.calibrate import Calibrator
from cover.calibrate.covariates import covariate_matrix
from cover.data.table import GroundingTable
from cover.metrics import evaluate
from cover.studies.diagnostics import diagnostics
from cover.studies.result import Table, fmt
from cover.studies.strata import table_strata

COVARIATES = ("duration", "pred_length", "pred_center")
RULES = (("split", "all"), ("mondrian", "pred_length"), ("conditional", "all"))


def compare_rules(pool: GroundingTable, test: GroundingTable, alpha: float = 0.1, *,
                  covariates: tuple[str, ...] = COVARIATES, score: str = "norm",
                  seed: int = 0, max_test: int | None = None) -> list[dict[str, Any]]:
    """One record per rule: coverage, worst stratum, diagnostics and mean length, on the
    test rows, or on a seeded sample of ``max_test`` of them (the same rows for every
    rule: the conditional rule solves one linear program per certified row)."""
    if max_test is not None and len(test) > max_test:
        rng = np.random.default_rng(seed)
        test = test.take(np.sort(rng.choice(len(test), size=max_test, replace=False)))
    x = covariate_matrix(test, covariates)
    out = []
    for rule, groups in RULES:
        params = {"covariates": list(covariates)} if rule == "conditional" else None
        cal = Calibrator(score=score, alpha=alpha, rule=rule, groups=groups,
                         params=params).fit(pool)
        ev = evaluate(cal.certify(test), test, base_iou=False)
        cov = ev.covered
        worst = min(((name, float(cov[m].mean())) for name, m in table_strata(pool, test)
                     if m.any()), key=lambda s: s[1])
        d = diagnostics(cov, x, covariates, 1 - alpha, seed=seed)
        out.append({"rule": rule, "n_test": len(test), "coverage": ev.marginal.coverage,
                    "worst_stratum": worst[0], "worst_stratum_coverage": worst[1],
                    "length": ev.marginal.mean_length_s, **d.to_dict()})
    return out


def rules_table(name: str, dataset: str, records: list[dict[str, Any]], alpha: float) -> Table:
    """The records of :func:`compare_rules` as a study table."""
    def num(v: Any, digits: int = 3) -> str:  # JSON-safe records hold null for NaN
        return fmt(float("nan") if v is None else float(v), digits)

    rows = tuple((name, dataset, r["rule"], num(r["coverage"]),
                  f"{num(r['worst_stratum_coverage'])} ({r['worst_stratum']})",
                  num(r["worst_slab"]), num(r["gap_max"]), num(r["length"], 1))
                 for r in records)
    return Table("conditional_rules", f"Marginal (split) vs Mondrian (predicted-length "
                 f"terciles) vs conditional (covariates {', '.join(records[0]['covariates'])}), "
                 f"NORM, target {1 - alpha:.2f}: coverage, worst stratum (true-length tercile "
                 "or window count), worst-slab coverage (held-out, delta 0.1, 200 directions) "
                 "and the largest covariate-bin coverage gap (5 equal-count bins per "
                 f"covariate); mean length in seconds; on {records[0]['n_test']} test "
                 "queries (a seeded sample when the test split is larger: the conditional "
                 "rule solves one linear program per certified row).",
                 ("Grounder", "Dataset", "Rule", "Coverage", "Worst stratum", "Worst slab",
                  "Gap (max)", "Length (s)"), rows)
