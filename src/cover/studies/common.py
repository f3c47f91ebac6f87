"""Small pieces every study uses: summaries over resamples, the two-sample KS statistic,
and the note a study leaves when a piece it needs is not available."""

from __future__ import annotations

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


def spearman(x: ArrayLike, y: ArrayLike) -> float:
    """Spearman's rho: Pearson correlation of average ranks (ties share their mean rank);
    NaN below 3 values or when either side is constant."""
    from scipy.stats import rankdata

    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.size < 3:
        return float("nan")
    rx, ry = rankdata(a), rankdata(b)
    if rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


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


def jsonify(x: Any) -> Any:
    """Recursively make ``x`` strict-JSON safe (inf as text, NaN as null, numpy to Python)."""
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
