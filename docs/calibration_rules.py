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

import warnings
from pathlib import Path
from typing import Any

import numpy as np
from docgen import bullets

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


Results = dict[str, dict[tuple[str, str], Any]]


def rcps_table(results: Results) -> tuple[str, dict[str, tuple[float, float, float]]]:
    """The RCPS table of one protocol, and its i.i.d. reference (plain, sig., population)."""
    head = ["grounder", "score", "n", "split: len. (viol.)"]
    head += [f"{b}: viol. (sig.) / len. cost" for b in BOUNDS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for g, res in results.items():
        for fam in FAMILIES:
            sp = res[fam, "split"]
            plain, sig = violations(sp["coverage"], sp["m"])
            cells = [g, fam.upper(), f"{sp['n'].mean():.0f}",
                     f"{sp['length'].mean():.1f} s ({plain:.2f} ({sig:.2f}))"]
            for b in BOUNDS:
                r = res[fam, f"rcps:{b}"]
                plain, sig = violations(r["coverage"], r["m"])
                cells.append(f"{plain:.2f} ({sig:.2f}) / {cost(res, fam, b):+.1f}%")
            lines.append("| " + " | ".join(cells) + " |")
    first = next(iter(results.values()))["norm", "split"]
    ref = iid_reference(round(first["n"].mean()), round(first["m"].mean()))
    lines.append("| i.i.d. reference (4000 draws; population violation in brackets) | | "
                 f"{first['n'].mean():.0f} | | " + " | ".join(
                     f"{p:.2f} ({s:.2f}) [{pop:.3f}]" for p, s, pop in ref.values()) + " |")
    return "\n".join(lines), ref


def cost(res: dict[tuple[str, str], Any], fam: str, bound: str) -> float:
    """Mean RCPS length over split conformal's on the same draws, in %."""
    sp, r = res[fam, "split"]["length"].mean(), res[fam, f"rcps:{bound}"]["length"].mean()
    return 100 * (r - sp) / sp


def two_param_table(results: Results) -> str:
    head = ["grounder", "score", "split: cov. / len.", "bonferroni: cov. / len. / s:e",
            "asymmetric: cov. / len. / s:e"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for g, res in results.items():
        for fam in FAMILIES:
            cells = [g, fam.upper()]
            for rule in ("split", "bonferroni", "asymmetric"):
                r = res[fam, rule]
                cell = f"{r['coverage'].mean():.3f} / {r['length'].mean():.1f} s"
                if rule != "split":
                    cell += f" / {np.nanmean(r['ratio']):.2f}"
                cells.append(cell)
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _span(xs: list[float], fmt: str) -> str:
    lo, hi = format(min(xs), fmt), format(max(xs), fmt)
    return lo if lo == hi else f"{lo} to {hi}"


def _dash(xs: list[float], fmt: str = ".2f") -> str:
    lo, hi = format(min(xs), fmt), format(max(xs), fmt)
    return lo if lo == hi else f"{lo}–{hi}"


def rcps_text(fresh: Results, paper: Results, ref_fresh: dict[str, tuple[float, float, float]],
              per_video: float) -> str:
    rows = [(g, f) for g in fresh for f in FAMILIES]
    costs = {b: [cost(fresh[g], f, b) for g, f in rows] for b in BOUNDS}
    paper_h = max(cost(paper[g], f, "hoeffding") for g, f in rows)
    viol = {b: [violations(fresh[g][f, f"rcps:{b}"]["coverage"], fresh[g][f, f"rcps:{b}"]["m"])
                for g, f in rows] for b in BOUNDS}
    plain = {b: [v[0] for v in viol[b]] for b in BOUNDS}
    sig = {b: [v[1] for v in viol[b]] for b in BOUNDS}
    hb_ok = sum(p <= DELTA for p in plain["hoeffding_bentkus"])
    bin_ok = sum(p <= DELTA for p in plain["binomial"])
    # the paper protocol's hardest pool/test pair: split conformal's plain violation share
    worst = max(rows, key=lambda gf: violations(paper[gf[0]][gf[1], "split"]["coverage"],
                                                paper[gf[0]][gf[1], "split"]["m"])[0])
    wg, wf = worst
    w_split = violations(paper[wg][wf, "split"]["coverage"], paper[wg][wf, "split"]["m"])[0]
    w_bin = violations(paper[wg][wf, "rcps:binomial"]["coverage"],
                       paper[wg][wf, "rcps:binomial"]["m"])[0]
    pct = "+.1f"
    return bullets([
        "**RCPS bounds.** The binomial bound is the shortest "
        f"({_span(costs['binomial'], pct)}% length over split on fresh splits), "
        f"Hoeffding–Bentkus next ({_span(costs['hoeffding_bentkus'], pct)}%), the paper's "
        f"Hoeffding form the longest ({_span(costs['hoeffding'], pct)}%; up to "
        f"{paper_h:+.1f}% at n = {paper[wg][wf, 'split']['n'].mean():.0f}): the tighter bounds "
        "are measurably shorter, and the gap grows as n shrinks. On fresh splits the binomial "
        f"bound's plain violation share ({_dash(plain['binomial'])}, mean "
        f"{np.mean(plain['binomial']):.2f} over the {len(rows)} rows) compares with its "
        f"i.i.d. reference ({ref_fresh['binomial'][0]:.2f}, where the population violation is "
        f"{ref_fresh['binomial'][2]:.3f}) and its significant violations stay at "
        f"{_dash(sig['binomial'])} (reference {ref_fresh['binomial'][1]:.2f}); "
        f"Hoeffding–Bentkus is at {_dash(plain['hoeffding_bentkus'])} (reference "
        f"{ref_fresh['hoeffding_bentkus'][0]:.2f}), Hoeffding at "
        f"{_dash(plain['hoeffding'])}. So the plain measure is `<= delta` for "
        f"Hoeffding–Bentkus on {hb_ok} of {len(rows)} rows and for the binomial bound on "
        f"{bin_ok} of {len(rows)}: the excess is the measure's test noise, not a failure of the "
        "bound (the i.i.d. reference, where the guarantee holds exactly, shows the same "
        f"excess). Queries of one source video are correlated (≈ {per_video:.1f} per video), "
        "which the per-row bounds ignore; a cautious user can pick `--bound "
        "hoeffding_bentkus`.",
        "**Paper protocol.** With one fixed pool and test split, every draw shares that "
        f"split's luck: for {wg} {wf.upper()} split conformal \"violates\" in "
        f"{100 * w_split:.0f}% of draws and binomial RCPS in {100 * w_bin:.0f}%. The share "
        "measures one split, not the calibration draw that `delta` bounds; the fresh-split "
        "table is the one to read for the guarantee.",
    ])


def two_param_text(fresh: Results) -> str:
    rows = [(g, f) for g in fresh for f in FAMILIES]
    covs = [fresh[g][f, r]["coverage"].mean() for g, f in rows
            for r in ("bonferroni", "asymmetric")]
    se = np.mean([fresh[g][f, r]["coverage"].std(ddof=1) / np.sqrt(len(
        fresh[g][f, r]["coverage"])) for g, f in rows for r in ("bonferroni", "asymmetric")])

    def dlen(g: str, f: str, r: str) -> float:
        return fresh[g][f, r]["length"].mean() - fresh[g][f, "split"]["length"].mean()

    bon = [dlen(g, f, "bonferroni") for g, f in rows]
    asy = {(g, f): dlen(g, f, "asymmetric") for g, f in rows}
    shortest = min(asy, key=asy.get)
    ratio = {(g, r): [float(np.nanmean(fresh[g][f, r]["ratio"])) for f in FAMILIES]
             for g in fresh for r in ("bonferroni", "asymmetric")}
    start, end, mixed = [], [], []
    for g in fresh:
        rs = ratio[g, "bonferroni"] + ratio[g, "asymmetric"]
        (start if min(rs) > 1 else end if max(rs) < 1 else mixed).append(g)
    lean = [
        "The ratio is the informative part: "
        + "; ".join(f"{g} widens the start {_dash(ratio[g, 'bonferroni'] + ratio[g, 'asymmetric'])}"
                    "× the end" for g in start)
        + " (the start is the weak side)" if start else "The ratio is the informative part",
        (", ".join(end) + " widen the end more under both forms ("
         + _dash([x for g in end for r in ("bonferroni", "asymmetric") for x in ratio[g, r]])
         + ")") if end else "",
        "; ".join(f"{g} is {'end' if max(ratio[g, 'bonferroni']) < 1 else 'start'}-heavy by "
                  f"Bonferroni ({_dash(ratio[g, 'bonferroni'])}) and "
                  f"{'end' if max(ratio[g, 'asymmetric']) < 1 else 'start'}-heavy by the "
                  f"asymmetric weights ({_dash(ratio[g, 'asymmetric'])})"
                  for g in mixed),
    ]
    return bullets([
        f"**Two parameters.** Both forms hold joint coverage at {1 - ALPHA:.2f} on average "
        f"({_dash(covs, '.3f')}; the mean over the draws has an sd of about {se:.3f}). "
        "Lengths move little: at this alpha most QVHighlights regions already reach both "
        "ends of the 150 s videos, so per-side adaptivity has little room. Bonferroni is "
        f"longer than one parameter on {sum(b > 0 for b in bon)} of {len(rows)} rows (up to "
        f"{max(bon):+.1f} s, the union bound's price); the asymmetric form is at most "
        f"{max(max(asy.values()), 0):.1f} s longer and up to {-min(asy.values()):.1f} s "
        f"shorter ({shortest[0]} {shortest[1].upper()}). "
        + "; ".join(x for x in lean if x) + ". The two ratios come from different quantiles "
        "(each side's `alpha/2` tail vs the fold's per-side `1 - alpha` quantiles), so near "
        "1 they can disagree.",
    ])


def blocks(data: Path) -> dict[str, str]:
    """The tables and findings of docs/calibration-rules.md (RCPS and one vs two
    parameters on the eight QVHighlights val files)."""
    warnings.simplefilter("ignore", CoverWarning)
    gt = read_ground_truth(data / "qvhighlights/annotations/highlight_val_release.jsonl").table
    protocol = Protocol()
    results, paper = {}, {}
    per_video = 0.0
    for name, rel in QVH_VAL_PREDICTIONS.items():
        table, _ = attach_truth(read_predictions(data / rel).table, gt)
        per_video = len(table) / len(np.unique(table.units))
        results[name] = grounder_runs(fresh_draws(table, protocol),
                                      ("split", "bonferroni", "asymmetric", "rcps"))
        paper[name] = grounder_runs(paper_draws(table, protocol), ("split", "rcps"))
    fresh_md, ref = rcps_table(results)
    paper_md, _ = rcps_table(paper)
    return {"rcps-fresh": fresh_md, "rcps-paper": paper_md,
            "two-param": two_param_table(results),
            "rcps-text": rcps_text(results, paper, ref, per_video),
            "two-param-text": two_param_text(results)}


if __name__ == "__main__":
    import docgen

    docgen.print_blocks(blocks)
