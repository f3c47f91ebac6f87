"""Conditional-coverage diagnostics over covariates: worst-slab coverage and coverage gap,
for any rule's certified regions (``cover evaluate --diagnostics``, the conditional
study, the report and ``docs/conditional.py``).

Both read ``covered`` (one boolean per evaluated row) and covariates known at test time
(:mod:`cover.calibrate.covariates`); rows missing a covariate (refusals, for the
prediction's covariates) are left out.

**Worst-slab coverage** (Cauchois, Gupta & Duchi 2021): the smallest coverage over slabs
``{x : a <= v.x <= b}`` holding at least a fraction ``delta`` of the rows, over
``n_directions`` directions ``v`` drawn uniformly on the sphere of standardised
covariates (seeded). Estimator, as in the paper, with a split so the minimum is not
biased low by the search: the rows are halved at random; on the first half, for every
direction, the slab of consecutive rows in the order of ``v.x`` with at least
``ceil(delta * n_half)`` rows and the least coverage is found (exactly: bisection on the
mean with prefix sums), the direction with the least such coverage is kept, and the
reported value is the coverage of the *second* half's rows inside that slab ``[a, b]``.
The in-sample minimum (first half, biased low) is reported beside it.

**Coverage gap**: each covariate is cut into ``n_bins`` equal-count bins (separately);
``gap_max`` is the largest ``|coverage in a bin - target|`` over all bins of all
covariates and ``gap_mean`` the mean of ``|coverage - target|`` over those bins,
weighted by bin size (and averaged over covariates).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

DEFAULT_DELTA = 0.1
DEFAULT_DIRECTIONS = 200
DEFAULT_BINS = 5


@dataclass(frozen=True)
class Diagnostics:
    """Worst-slab coverage and coverage gap of one set of certified rows."""

    covariates: tuple[str, ...]
    rows: int
    coverage: float
    worst_slab: float
    worst_slab_in_sample: float
    slab_rows: int
    gap_max: float
    gap_mean: float
    worst_bin: str

    def to_dict(self) -> dict[str, Any]:
        from cover._json import json_safe

        return json_safe({k: v for k, v in self.__dict__.items() if k != "covariates"}) | {
            "covariates": list(self.covariates)}


def _min_window(c: NDArray[np.float64], m: int) -> tuple[NDArray[np.float64],
                                                         NDArray[np.int64], NDArray[np.int64]]:
    """Per row of ``c`` (directions x rows, 0/1 in slab order): the least mean over runs of
    at least ``m`` consecutive entries and the run ``[i, j)``, by bisection on the mean:
    some run has mean <= t iff ``Q_j - max_{i <= j - m} Q_i <= 0`` with ``Q = P - t*idx``."""
    d, n = c.shape
    p = np.concatenate([np.zeros((d, 1)), np.cumsum(c, axis=1)], axis=1)
    idx = np.arange(n + 1, dtype=np.float64)
    lo, hi = np.zeros(d), np.ones(d)
    for _ in range(40):
        t = (lo + hi) / 2
        q = p - t[:, None] * idx
        ok = (q[:, m:] - np.maximum.accumulate(q[:, : n + 1 - m], axis=1) <= 1e-12).any(axis=1)
        hi, lo = np.where(ok, t, hi), np.where(ok, lo, t)
    q = p - hi[:, None] * idx
    run_max = np.maximum.accumulate(q[:, : n + 1 - m], axis=1)
    j = np.argmax(q[:, m:] - run_max <= 1e-12, axis=1) + m
    i = np.array([int(np.argmax(q[r, : j[r] - m + 1])) for r in range(d)])
    means = (p[np.arange(d), j] - p[np.arange(d), i]) / (j - i)
    return means, i, j


def _min_means(c: NDArray[np.float64], m: int) -> NDArray[np.float64]:
    """Per row of ``c``, the least mean over runs of at least ``m`` consecutive entries,
    exactly: such a minimum is reached by a run shorter than ``2m`` (a longer run splits
    into two runs of at least ``m``, one of them no worse), so only the lengths
    ``m .. 2m - 1`` are scanned. The integer sums are divided after the minimum (division
    by ``L > 0`` keeps the order): the same float as the run mean :func:`_min_window`
    reads off the run it finds."""
    d, n = c.shape
    p = np.concatenate([np.zeros((d, 1)), np.cumsum(c, axis=1)], axis=1)
    best = np.full(d, np.inf)
    for length in range(m, min(2 * m - 1, n) + 1):
        np.minimum(best, np.min(p[:, length:] - p[:, :-length], axis=1) / length, out=best)
    return best


def worst_slab(covered: NDArray[np.bool_], x: NDArray[np.float64], *,
               delta: float = DEFAULT_DELTA, n_directions: int = DEFAULT_DIRECTIONS,
               seed: int = 0) -> tuple[float, float, int]:
    """``(held-out worst-slab coverage, in-sample minimum, held-out rows in the slab)``
    (module docstring). Needs at least 2 / delta rows; NaN otherwise."""
    n = covered.size
    if n < 2 * math.ceil(1 / delta) or x.shape[1] == 0:
        return math.nan, math.nan, 0
    rng = np.random.default_rng(seed)
    z = (x - x.mean(axis=0)) / np.where(x.std(axis=0) > 0, x.std(axis=0), 1.0)
    perm = rng.permutation(n)
    a_rows, b_rows = perm[: n // 2], perm[n // 2:]
    v = rng.normal(size=(n_directions, x.shape[1]))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    proj = z[a_rows] @ v.T  # rows x directions
    order = np.argsort(proj, axis=0, kind="stable")
    c = covered[a_rows][order].T.astype(np.float64)
    m = math.ceil(delta * a_rows.size)
    # The worst direction from the exact least means, then its run by the bisection (the
    # same run and mean as bisecting every direction, at one direction's cost).
    best = int(np.argmin(_min_means(c, m)))
    means, i, j = _min_window(c[best:best + 1], m)
    sorted_proj = np.take_along_axis(proj, order, axis=0)[:, best]
    lo, hi = sorted_proj[i[0]], sorted_proj[j[0] - 1]
    pb = z[b_rows] @ v[best]
    inside = (pb >= lo) & (pb <= hi)
    held = float(covered[b_rows][inside].mean()) if inside.any() else math.nan
    return held, float(means[0]), int(inside.sum())


def coverage_gap(covered: NDArray[np.bool_], x: NDArray[np.float64], names: tuple[str, ...],
                 target: float, n_bins: int = DEFAULT_BINS) -> tuple[float, float, str]:
    """``(gap_max, gap_mean, the worst bin)`` over equal-count bins of each covariate."""
    from cover.calibrate.groups import equal_count_edges

    worst, label, means = -1.0, "", []
    if covered.size == 0:
        return math.nan, math.nan, ""
    for k, name in enumerate(names):
        col = x[:, k]
        edges = np.asarray(equal_count_edges(col, n_bins), dtype=np.float64)
        code = np.searchsorted(edges, col, side="right")
        dev = 0.0
        for b in range(edges.size + 1):
            here = code == b
            if not here.any():
                continue
            gap = abs(float(covered[here].mean()) - target)
            dev += gap * here.sum() / col.size
            if gap > worst:
                lo = "-inf" if b == 0 else f"{edges[b - 1]:.4g}"
                hi = "inf" if b == edges.size else f"{edges[b]:.4g}"
                worst, label = gap, f"{name} in [{lo}, {hi})"
        means.append(dev)
    return worst, float(np.mean(means)) if means else math.nan, label


def diagnostics(covered: NDArray[np.bool_], x: NDArray[np.float64], names: tuple[str, ...],
                target: float, *, delta: float = DEFAULT_DELTA,
                n_directions: int = DEFAULT_DIRECTIONS, n_bins: int = DEFAULT_BINS,
                seed: int = 0) -> Diagnostics:
    """Both diagnostics on the rows whose covariates are all known."""
    known = np.isfinite(x).all(axis=1)
    cov, xs = np.asarray(covered, dtype=bool)[known], x[known]
    held, inside, slab_rows = worst_slab(cov, xs, delta=delta, n_directions=n_directions,
                                         seed=seed)
    gmax, gmean, where = coverage_gap(cov, xs, names, target, n_bins)
    return Diagnostics(tuple(names), int(known.sum()),
                       float(cov.mean()) if cov.size else math.nan, held, inside, slab_rows,
                       gmax, gmean, where)
