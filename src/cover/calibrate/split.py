"""Split-conformal calibration: one threshold from one set of calibration scores.

A *rule* is a function from score arrays (plus optional groups or weights) to a
:class:`Threshold`; the other rules (risk control, Mondrian, weighted, online)
follow the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cover.calibrate.quantile import AlphaLike, as_fraction, conformal_quantile


@dataclass(frozen=True)
class Threshold:
    """A calibrated threshold and the arithmetic behind it.

    ``value = k-th smallest of n scores``; under i.i.d. continuous scores the realised
    coverage is ``Beta(k, n + 1 - k)`` with mean ``k / (n + 1)`` (paper Prop. A.4).
    """

    rule: str
    alpha: Fraction
    value: float
    k: int
    n: int
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def finite(self) -> bool:
        return bool(np.isfinite(self.value))

    @property
    def expected_coverage(self) -> float:
        """``min(k, n + 1) / (n + 1)``; 1 when the threshold is infinite."""
        return min(self.k, self.n + 1) / (self.n + 1)

    def beta_band(self, level: float = 0.95) -> tuple[float, float]:
        """Central ``level`` interval of ``Beta(k, n + 1 - k)``."""
        return beta_band(self.n, self.k, level)


def beta_band(n: int, k: int, level: float = 0.95) -> tuple[float, float]:
    """Central interval of the realised-coverage law ``Beta(k, n + 1 - k)``; ``(1, 1)``
    when ``k > n`` (the whole-video threshold always covers)."""
    if k > n:
        return 1.0, 1.0
    from scipy import stats  # imported on use: scipy.stats alone costs ~1 s at start-up

    lo, hi = stats.beta.ppf([(1 - level) / 2, (1 + level) / 2], k, n + 1 - k)
    return float(lo), float(hi)


def beta_sd(n: int, k: int) -> float:
    """``sd = sqrt(k (n + 1 - k) / ((n + 1)^2 (n + 2)))``; 0 when ``k > n``."""
    if k > n:
        return 0.0
    return float(np.sqrt(k * (n + 1 - k) / ((n + 1) ** 2 * (n + 2))))


def split_conformal(scores: ArrayLike, *, alpha: AlphaLike, warn: bool = True) -> Threshold:
    """``q = k-th smallest score, k = ceil((n + 1)(1 - alpha))``; ``+inf`` if ``k > n``."""
    a = as_fraction(alpha)
    q, k, n = conformal_quantile(scores, a, warn=warn)
    return Threshold("split", a, q, k, n)
