"""Regenerates the tables of docs/calibration-rules.md: RCPS bounds and the per-boundary
rules against split conformal on the eight QVHighlights val grounders.

Two protocols, 50 calibration draws each:

* fresh: every draw is a new split by source video, 40% calibration / 60% test (seeds
  1000..1049); the draws are independent, as the RCPS guarantee assumes;
* paper: one split by source video 40/60 (seed 42) into a pool and a test split, and 50
  calibrations on resamples of half the pool's videos, all certifying the same test
  split (docs/qvhighlights-coverage.md); the draws share one pool and one test split.

Usage: python docs/calibration_rules.py [DATA_DIR]  (prints Markdown; a few minutes)
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from cover.calibrate import Calibrator
from cover.calibrate.rcps import BOUNDS, rcps_rank
from cover.data.join import attach_truth
from cover.data.splits import resample_units, split_by_unit
from cover.data.table import GroundingTable
from cover.errors import CoverWarning
from cover.intervals import Intervals
from cover.io import read_ground_truth, read_predictions
from cover.io.datasets import QVH_VAL_PREDICTIONS
from cover.studies.protocol import Protocol

ALPHA, DELTA = 0.1, 0.1
FAMILIES = ("norm", "sec")


def run(cal: Calibrator, pool: GroundingTable, test: GroundingTable, truth: Intervals
        ) -> dict[str, float]:
    """Fit on ``pool``, certify ``test``: coverage, mean length, start/end ratio."""
    cal.fit(pool)
    reg = cal.certify(test)
    return {"coverage": float(reg.intervals.contains(truth).mean()),
            "length": float(reg.length.mean()),
            "ratio": cal.side_ratio_ if cal.side_ratio_ is not None else np.nan,
            "n": float(cal.n_ or 0), "m": float(len(test))}


def violations(coverage: np.ndarray, m: np.ndarray) -> tuple[float, float]:
    """Share of draws whose test miss rate exceeds alpha: plainly, and significantly (the
    95% Clopper-Pearson lower bound of the test miss rate above alpha)."""
    from scipy import stats

    misses = np.rint((1 - coverage) * m)
    low = stats.beta.ppf(0.05, misses, m - misses + 1)
    return float(np.mean(misses / m > ALPHA)), float(np.mean(np.nan_to_num(low) > ALPHA))


def iid_reference(n: int, m: int, draws: int = 4000) -> dict[str, tuple[float, float, float]]:
    """The same measures on i.i.d. uniform scores with n calibration and m test rows, and
    the population violation rate P(R(lam) > alpha) that delta bounds."""
    rng = np.random.default_rng(7)
    cal = np.sort(rng.uniform(size=(draws, n)), axis=1)
    out = {}
    for b in BOUNDS:
        lam = cal[:, rcps_rank(n, ALPHA, DELTA, b) - 1]
        cov = 1 - rng.binomial(m, 1 - lam) / m
        plain, sig = violations(cov, np.full(draws, float(m)))
        out[b] = (plain, sig, float(np.mean(1 - lam > ALPHA)))
    return out


Draw = tuple[GroundingTable, GroundingTable, Intervals]


def fresh_draws(table: GroundingTable, protocol: Protocol) -> list[Draw]:
    out = []
    for d in range(protocol.n_resamples):
        split = split_by_unit(table.units, cal_frac=protocol.cal_frac, seed=1000 + d)
        test = table.take(split.test)
        out.append((table.take(split.calibration), test,
                    Intervals.single(*test.truth_envelope())))
    return out


def paper_draws(table: GroundingTable, protocol: Protocol) -> list[Draw]:
    split = split_by_unit(table.units, cal_frac=protocol.cal_frac, seed=protocol.seed)
    pool, test = table.take(split.calibration), table.take(split.test)
    truth = Intervals.single(*test.truth_envelope())
    masks = resample_units(pool.units, n_resamples=protocol.n_resamples,
                           frac=protocol.resample_frac, seed=protocol.seed)
    return [(pool.take(m), test, truth) for m in masks]


def grounder_runs(draws: list[Draw], rules: tuple[str, ...]) -> dict[tuple[str, str], Any]:
    configs: dict[str, dict[str, Any]] = {r: {} for r in rules if r != "rcps"}
    if "rcps" in rules:
        configs |= {f"rcps:{b}": {"delta": DELTA, "bound": b} for b in BOUNDS}
    out: dict[tuple[str, str], Any] = {}
    for fam in FAMILIES:
        for name, params in configs.items():
            rule = name.split(":")[0]
            rows = [run(Calibrator(score=fam, alpha=ALPHA, rule=rule, params=params),
                        cal, test, truth) for cal, test, truth in draws]
            out[fam, name] = {k: np.array([r[k] for r in rows]) for k in rows[0]}
    return out


def rcps_table(results: dict[str, Any]) -> None:
    head = ["grounder", "score", "n", "split: len. (viol.)"]
    head += [f"{b}: viol. (sig.) / len. cost" for b in BOUNDS]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for g, res in results.items():
        for fam in FAMILIES:
            sp = res[fam, "split"]
            plain, sig = violations(sp["coverage"], sp["m"])
            cells = [g, fam.upper(), f"{sp['n'].mean():.0f}",
                     f"{sp['length'].mean():.1f} s ({plain:.2f} ({sig:.2f}))"]
            for b in BOUNDS:
                r = res[fam, f"rcps:{b}"]
                plain, sig = violations(r["coverage"], r["m"])
                cost = 100 * (r["length"].mean() - sp["length"].mean()) / sp["length"].mean()
                cells.append(f"{plain:.2f} ({sig:.2f}) / {cost:+.1f}%")
            print("| " + " | ".join(cells) + " |")
    first = next(iter(results.values()))["norm", "split"]
    ref = iid_reference(round(first["n"].mean()), round(first["m"].mean()))
    print("| i.i.d. reference (4000 draws; population violation in brackets) | | "
          f"{first['n'].mean():.0f} | | " + " | ".join(
              f"{p:.2f} ({s:.2f}) [{pop:.3f}]" for p, s, pop in ref.values()) + " |")


def main(data: Path) -> None:
    warnings.simplefilter("ignore", CoverWarning)
    gt = read_ground_truth(data / "qvhighlights/annotations/highlight_val_release.jsonl").table
    protocol = Protocol()
    results, paper = {}, {}
    for name, rel in QVH_VAL_PREDICTIONS.items():
        table, _ = attach_truth(read_predictions(data / rel).table, gt)
        results[name] = grounder_runs(fresh_draws(table, protocol),
                                      ("split", "bonferroni", "asymmetric", "rcps"))
        paper[name] = grounder_runs(paper_draws(table, protocol), ("split", "rcps"))

    print(f"### RCPS at alpha = {ALPHA}, delta = {DELTA}: fresh splits\n")
    rcps_table(results)
    print(f"\n### RCPS at alpha = {ALPHA}, delta = {DELTA}: one split, resampled pool\n")
    rcps_table(paper)

    print(f"\n### One parameter or two, at alpha = {ALPHA}\n")
    head = ["grounder", "score", "split: cov. / len.", "bonferroni: cov. / len. / s:e",
            "asymmetric: cov. / len. / s:e"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for g, res in results.items():
        for fam in FAMILIES:
            cells = [g, fam.upper()]
            for rule in ("split", "bonferroni", "asymmetric"):
                r = res[fam, rule]
                cell = f"{r['coverage'].mean():.3f} / {r['length'].mean():.1f} s"
                if rule != "split":
                    cell += f" / {np.nanmean(r['ratio']):.2f}"
                cells.append(cell)
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data"))
