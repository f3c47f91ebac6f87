"""Mondrian calibration: COVER vs crepes' ``bins=`` and a per-group numpy loop.

Agreement: one group of every size n in 1..N at each alpha, all in one Mondrian call;
a group's threshold is compared with crepes' (``ConformalRegressor.fit(residuals,
bins=...)``, read back as the half-width of an interval at 0) and with the exact
``k = ceil((n + 1)(1 - alpha))``-th smallest score. Timing: n rows in G groups, the
median of interleaved repeats of fit + per-row thresholds.

    .venv/bin/pip install crepes
    .venv/bin/python bench/mondrian.py [--scan-max 200] [--out bench/mondrian-results.md]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from fractions import Fraction
from functools import partial

import numpy as np

from cover.calibrate.mondrian import mondrian_conformal
from cover.io.output import write_text

try:
    from crepes import ConformalRegressor
except ImportError:  # pragma: no cover - optional
    ConformalRegressor = None


def exact(scores: np.ndarray, alpha: str) -> float:
    k = math.ceil((scores.size + 1) * (1 - Fraction(alpha)))
    return float(np.sort(scores)[k - 1]) if k <= scores.size else math.inf


def crepes_per_group(scores: np.ndarray, codes: np.ndarray, alpha: float) -> np.ndarray:
    cr = ConformalRegressor().fit(scores, bins=codes)
    groups = np.unique(codes)
    return cr.predict_int(np.zeros(groups.size), bins=groups, confidence=1 - alpha)[:, 1]


def numpy_loop(scores: np.ndarray, codes: np.ndarray, alpha: float) -> np.ndarray:
    """The common recipe: one float-ranked quantile per group in a Python loop."""
    out = []
    for g in np.unique(codes):
        s = np.sort(scores[codes == g])
        k = math.ceil((s.size + 1) * (1 - alpha))
        out.append(s[k - 1] if k <= s.size else np.inf)
    return np.array(out)


def agreement(scan_max: int, alphas: list[str]) -> list[str]:
    rng = np.random.default_rng(0)
    sizes = np.arange(1, scan_max + 1)
    codes = np.repeat(np.arange(sizes.size), sizes)
    scores = rng.exponential(1.0, codes.size)  # distinct and positive: |S| = S for crepes
    lines = ["| alpha | groups | COVER = exact | crepes = exact | crepes off (first n) |",
             "|---|---|---|---|---|"]
    for a in alphas:
        cov = mondrian_conformal(scores, codes, sizes.size, alpha=a, fallback="inf",
                                 warn=False).own
        ref = np.array([exact(scores[codes == g], a) for g in range(sizes.size)])
        ok = int((cov == ref).sum())
        if ConformalRegressor is None:
            lines.append(f"| {a} | {sizes.size} | {ok} | not installed | |")
            continue
        cr = crepes_per_group(scores, codes, float(a))
        bad = np.flatnonzero(cr != ref)
        first = ", ".join(str(int(sizes[i])) for i in bad[:8]) + (" ..." if bad.size > 8 else "")
        lines.append(f"| {a} | {sizes.size} | {ok} | {sizes.size - bad.size} | {first} |")
    return lines


def cover_thresholds(scores: np.ndarray, codes: np.ndarray, g: int) -> np.ndarray:
    return mondrian_conformal(scores, codes, g, alpha=0.1, warn=False).values[codes]


def loop_thresholds(scores: np.ndarray, codes: np.ndarray) -> np.ndarray:
    return numpy_loop(scores, codes, 0.1)[codes]


def crepes_thresholds(scores: np.ndarray, codes: np.ndarray) -> np.ndarray:
    cr = ConformalRegressor().fit(scores, bins=codes)
    return cr.predict_int(np.zeros(scores.size), bins=codes, confidence=0.9)


def median_time(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def timing(cells: list[tuple[int, int]], repeats: int) -> list[str]:
    rng = np.random.default_rng(1)
    lines = ["| rows | groups | COVER, ms | numpy loop (float ranks), ms | crepes bins, ms |",
             "|---|---|---|---|---|"]
    for n, g in cells:
        codes = rng.integers(0, g, n)
        scores = rng.exponential(1.0, n)

        row = [median_time(partial(cover_thresholds, scores, codes, g), repeats),
               median_time(partial(loop_thresholds, scores, codes), repeats)]
        if ConformalRegressor is not None:
            row.append(median_time(partial(crepes_thresholds, scores, codes), repeats))
        cells_ms = " | ".join(f"{1000 * t:.1f}" for t in row)
        lines.append(f"| {n:.0e} | {g} | {cells_ms}" + (" |" if len(row) == 3 else
                                                          " | not installed |"))
        print(f"timed n={n} G={g}", file=sys.stderr)
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scan-max", type=int, default=200)
    ap.add_argument("--alphas", nargs="+", default=["0.05", "0.1", "0.2"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default="bench/mondrian-results.md")
    args = ap.parse_args()
    md = ["# Mondrian: COVER vs crepes `bins=`", "",
          "Generated by `.venv/bin/python bench/mondrian.py` (crepes "
          + ("installed" if ConformalRegressor else "not installed") + ").", "",
          f"## Agreement with the exact order statistic, group sizes 1..{args.scan_max}", "",
          *agreement(args.scan_max, args.alphas), "",
          "## Time: fit + one threshold per row (median of "
          f"{args.repeats} runs)", "",
          *timing([(10**4, 10), (10**5, 10), (10**5, 1000), (10**6, 1000)], args.repeats)]
    text = "\n".join(md) + "\n"
    print(text)
    write_text(args.out, text)


if __name__ == "__main__":
    main()
