"""Mondrian vs the marginal rule on the real QVHighlights val grounders.

Protocol (SPEC §6): source videos split 40/60 into calibration pool / test with seed 42;
50 resamples of 50% of the pool's videos. Each resample calibrates the marginal split rule
and the Mondrian rule (one threshold per predicted-length tercile, cut points from the
resample) at alpha = 0.1; the test rows are stratified by the same terciles. Reported:
mean over resamples of each stratum's coverage, the worst stratum's deviation below the
target, and the mean region length.

    python docs/calibration-groups.py [DATA_DIR]   (prints the blocks; seconds)
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from docgen import wrap

import cover
from cover.calibrate.registry import get_grouping
from cover.data.splits import resample_units
from cover.errors import CoverWarning
from cover.io.datasets import QVH_VAL_GT, QVH_VAL_PREDICTIONS
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


def blocks(data: Path, resamples: int = 50) -> dict[str, str]:
    """The Mondrian table of docs/calibration-rules.md and the sentences quoting it."""
    target = 1 - ALPHA
    lines = ["| grounder | family | rule | cov. short | cov. medium | cov. long | worst dev. | "
             "mean length, s |", "|---|---|---|---|---|---|---|---|"]
    agg: dict[tuple[str, str, str], tuple[np.ndarray, float, float]] = {}
    for name, rel in QVH_VAL_PREDICTIONS.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CoverWarning)
            table, _ = cover.load_labelled(data / rel, data / QVH_VAL_GT, on_error="reject")
        split = cover.split_by_unit(table.units, cal_frac=0.4, seed=42)
        pool, test = table.take(split.calibration), table.take(split.test)
        draws = resample_units(pool.units, n_resamples=resamples, frac=0.5, seed=42)
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
                agg[name, fam, rule] = (cov, worst, length)
                lines.append(f"| {name} | {fam.upper()} | {rule} | "
                             + " | ".join(f"{c:.3f}" for c in cov)
                             + f" | {worst:+.3f} | {length:.1f} |")
    return {"table": "\n".join(lines), "text": findings(agg)}


def _dash(xs: list[float], fmt: str) -> str:
    lo, hi = format(min(xs), fmt), format(max(xs), fmt)
    return lo if lo == hi else f"{lo} to {hi}"


def findings(agg: dict[tuple[str, str, str], tuple[np.ndarray, float, float]]) -> str:
    names = list(QVH_VAL_PREDICTIONS)

    def get(fam: str, rule: str, what: int, stratum: int | None = None) -> list[float]:
        v = [agg[n, fam, rule][what] for n in names]
        return [float(x[stratum]) for x in v] if stratum is not None else [float(x) for x in v]

    short = get("norm", "marginal", 0, 0)
    long_ = get("norm", "marginal", 0, 2)
    dlen = [agg[n, "norm", "mondrian"][2] - agg[n, "norm", "marginal"][2] for n in names]
    mon_n = get("norm", "mondrian", 1)
    return wrap(
        "What we see: one marginal NORM threshold is shared by predictions of very different "
        "length, and the normalised score punishes short predictions (a 4 s miss is one "
        "length for a 4 s prediction, a tenth of one for a 40 s prediction): the short "
        f"tercile is covered only {_dash(short, '.2f')} of the time while the long one is "
        + ("always covered" if min(long_) >= 1 - 1e-9 else f"covered {_dash(long_, '.3f')}")
        + ". Mondrian brings every grounder's worst NORM stratum to within "
        f"{max(abs(x) for x in mon_n):.3f} of the target (worst deviation "
        f"{_dash(get('norm', 'marginal', 1), '+.3f')} → {_dash(mon_n, '+.3f')}), at a mean "
        f"length within ±{max(abs(x) for x in dlen):.0f} s of the marginal rule's. SEC's "
        "strata are closer to begin with (worst deviation "
        f"{_dash(get('sec', 'marginal', 1), '+.3f')}) and Mondrian reduces them to ≤ "
        f"{max(get('sec', 'mondrian', 1)):.3f}. This is the stratification the paper's "
        "Mondrian half uses (its Table 7 compares against true-length strata instead, which "
        "only evaluation can see).")


if __name__ == "__main__":
    import docgen

    docgen.print_blocks(blocks)
