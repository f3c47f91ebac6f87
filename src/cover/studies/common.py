"""Small pieces every study uses: summaries over resamples, the two-sample KS statistic,
and the note a study leaves when a piece it needs is not available."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover._json import to_json_number

#: The paper's two headline operating points (efficiency, two-parameter, transfer).
HEADLINE_TARGETS: tuple[float, ...] = (0.8, 0.9)


def alpha_of(target: float) -> float:
    """``alpha = 1 - target`` rounded to the decimal the user means (1 - 0.9 -> 0.1)."""
    return round(1.0 - target, 10)


def mean_sd(x: ArrayLike) -> tuple[float, float]:
    """Mean and sample sd (ddof=1; 0 for a single value) of the finite-or-not values."""
    a = np.asarray(x, dtype=np.float64).reshape(-1)
    if a.size == 0:
        return float("nan"), float("nan")
    return float(a.mean()), float(a.std(ddof=1)) if a.size > 1 else 0.0


def ci95(x: ArrayLike) -> tuple[float, float]:
    """Central 95% percentile interval of ``x`` (over resamples)."""
    a = np.asarray(x, dtype=np.float64).reshape(-1)
    if a.size == 0:
        return float("nan"), float("nan")
    lo, hi = np.percentile(a, [2.5, 97.5])
    return float(lo), float(hi)


def _weighted_ranks(v: NDArray[np.float64], w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Average ranks of ``v`` in each sample of row ``w[b]`` (row ``i`` appearing
    ``w[b, i]`` times): ties share their mean rank, as ``scipy.stats.rankdata``; one sort."""
    order = np.argsort(v, kind="stable")
    s = v[order]
    new_run = np.r_[True, s[1:] != s[:-1]]
    run_total = np.add.reduceat(w[:, order], np.flatnonzero(new_run), axis=1)
    run_rank = np.cumsum(run_total, axis=1) - run_total + (run_total + 1) / 2
    ranks = np.empty(w.shape)
    ranks[:, order] = run_rank[:, np.cumsum(new_run) - 1]
    return ranks


def spearman_samples(x: ArrayLike, y: ArrayLike, weights: ArrayLike) -> NDArray[np.float64]:
    """Spearman's rho of ``(x, y)`` in each sample given by a row of ``weights`` (``(B, n)``
    multiplicities, e.g. bootstrap draws): the Pearson correlation of average ranks within
    the sample; NaN below 3 rows or when either side is constant."""
    a = np.asarray(x, dtype=np.float64).reshape(-1)
    b = np.asarray(y, dtype=np.float64).reshape(-1)
    w = np.atleast_2d(np.asarray(weights, dtype=np.float64))
    total = w.sum(axis=1)
    if a.size == 0:
        return np.full(w.shape[0], np.nan)
    rx, ry = _weighted_ranks(a, w), _weighted_ranks(b, w)
    mx, my = (w * rx).sum(axis=1) / total, (w * ry).sum(axis=1) / total
    dx, dy = rx - mx[:, None], ry - my[:, None]
    sxy, sxx, syy = ((w * dx * dy).sum(axis=1), (w * dx * dx).sum(axis=1),
                     (w * dy * dy).sum(axis=1))
    den = np.sqrt(sxx * syy)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where((den > 1e-12 * np.maximum(total, 1) ** 3) & (total >= 3), sxy / den,
                       np.nan)
    return np.asarray(rho, dtype=np.float64)


def spearman(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman's rho: Pearson correlation of average ranks (ties share their mean rank);
    NaN below 3 values or when either side is constant."""
    a = np.asarray(x, dtype=np.float64).reshape(-1)
    return float(spearman_samples(a, y, np.ones((1, a.size)))[0])


def spearman_p(rho: float, n: int) -> float:
    """Two-sided p-value of Spearman's ``rho`` over ``n`` independent rows, from
    ``t = rho sqrt((n - 2) / (1 - rho^2))`` on ``n - 2`` degrees of freedom (as
    ``scipy.stats.spearmanr``; scipy.special spares the import of scipy.stats)."""
    from scipy.special import stdtr

    if n < 3 or rho != rho:
        return float("nan")
    if abs(rho) >= 1:
        return 0.0
    t = abs(rho) * math.sqrt((n - 2) / (1 - rho * rho))
    return float(2 * stdtr(n - 2, -t))


def ks_statistic(a: ArrayLike, b: ArrayLike) -> float:
    """Two-sample Kolmogorov-Smirnov ``D = sup_x |F_a(x) - F_b(x)|`` (ties handled by
    evaluating both ECDFs at every distinct value); ``-inf``/``+inf`` are ordinary values."""
    x = np.asarray(a, dtype=np.float64).reshape(-1)
    y = np.asarray(b, dtype=np.float64).reshape(-1)
    if x.size == 0 or y.size == 0:
        return float("nan")
    grid = np.union1d(x, y)
    fa = np.searchsorted(np.sort(x), grid, side="right") / x.size
    fb = np.searchsorted(np.sort(y), grid, side="right") / y.size
    return float(np.max(np.abs(fa - fb)))


def finite_mean(x: NDArray[np.float64]) -> float:
    f = x[np.isfinite(x)]
    return float(f.mean()) if f.size else float("inf")


@dataclass(frozen=True)
class Missing:
    """A study part that needs a piece COVER does not have in this installation."""

    part: str
    needs: str

    def text(self) -> str:
        return f"{self.part}: needs {self.needs}, not available"


_PLAIN = frozenset({int, str, bool, type(None)})


def jsonify(x: Any) -> Any:
    """Recursively make ``x`` strict-JSON safe (inf as text, NaN as null, numpy to Python)."""
    t = type(x)
    # Exact-type fast paths first: results hold ~1e5 plain numbers and strings.
    if t is float:
        return x if x - x == 0.0 else to_json_number(x)  # x - x is NaN for inf and NaN
    if t in _PLAIN:
        return x
    if t is list:
        return [jsonify(v) for v in x]
    if isinstance(x, dict):
        return {str(k): jsonify(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonify(v) for v in x]
    if isinstance(x, np.ndarray):
        return [jsonify(v) for v in x.tolist()]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return to_json_number(float(x))
    return x
