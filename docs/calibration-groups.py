"""Mondrian vs the marginal rule on the real QVHighlights val grounders.

Protocol (SPEC §6): source videos split 40/60 into calibration pool / test with seed 42;
50 resamples of 50% of the pool's videos. Each resample calibrates the marginal split rule
and the Mondrian rule (one threshold per predicted-length tercile, cut points from the
resample) at alpha = 0.1; the test rows are stratified by the same terciles. Reported:
mean over resamples of each stratum's coverage, the worst stratum's deviation below the
target, and the mean region length.

    .venv/bin/python docs/calibration-groups.py [--data-dir DIR] > table.md
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import cover
from cover.calibrate.registry import get_grouping
from cover.data.splits import resample_units
from cover.errors import CoverWarning
from cover.io.datasets import QVH_VAL_GT, QVH_VAL_PREDICTIONS, find_data_dir
from cover.scores import compute_scores

ALPHA = 0.1
STRATA = ("short", "medium", "long")


def strata_coverage(cal: cover.Calibrator, test: cover.GroundingTable, scores: np.ndarray,
                    labels: np.ndarray) -> tuple[np.ndarray, float]:
    """Coverage per predicted-length tercile (nestedness: covered iff score <= lam) and
    the mean region length."""
    lam, _ = cal.row_lams(test)
    covered = scores <= lam
    cov = np.array([covered[labels == s].mean() for s in STRATA])
    return cov, float(cal.certify(test).length.mean())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data-dir")
    ap.add_argument("--resamples", type=int, default=50)
    args = ap.parse_args()
    d = find_data_dir(args.data_dir)
    target = 1 - ALPHA
    print("| grounder | family | rule | cov. short | cov. medium | cov. long | worst dev. | "
          "mean length, s |\n|---|---|---|---|---|---|---|---|")
    for name, rel in QVH_VAL_PREDICTIONS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CoverWarning)
            table, _ = cover.load_labelled(d / rel, d / QVH_VAL_GT, on_error="reject")
        split = cover.split_by_unit(table.units, cal_frac=0.4, seed=42)
        pool, test = table.take(split.calibration), table.take(split.test)
        draws = resample_units(pool.units, n_resamples=args.resamples, frac=0.5, seed=42)
        for fam in ("norm", "sec"):
            scores = compute_scores(test, fam).values
            res: dict[str, list[tuple[np.ndarray, float]]] = {"marginal": [], "mondrian": []}
            for mask in draws:
                cal_t = pool.take(mask)
                mon = cover.Calibrator(score=fam, alpha=ALPHA, rule="mondrian",
                                       groups="pred_length").fit(cal_t)
                labels = get_grouping("pred_length").assign(test, mon.group_params_)
                marg = cover.Calibrator(score=fam, alpha=ALPHA).fit(cal_t)
                res["marginal"].append(strata_coverage(marg, test, scores, labels))
                res["mondrian"].append(strata_coverage(mon, test, scores, labels))
            for rule, runs in res.items():
                cov = np.mean([c for c, _ in runs], axis=0)
                worst = float(np.max(target - cov))
                length = float(np.mean([n for _, n in runs]))
                print(f"| {name} | {fam.upper()} | {rule} | "
                      + " | ".join(f"{c:.3f}" for c in cov)
                      + f" | {worst:+.3f} | {length:.1f} |")


if __name__ == "__main__":
    main()
