"""Split-conformal calibration: one threshold from one set of calibration scores.

``q = k-th smallest score, k = ceil((n + 1)(1 - alpha))`` (paper Eq. 3), one per group
label (the marginal rule has the single group "all"); a group too small for a finite
quantile gets ``+inf`` (the whole video) and is reported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.calibrate.quantile import AlphaLike, as_fraction, conformal_quantile, conformal_rank
from cover.calibrate.registry import (
    GroupThreshold,
    RuleFit,
    RuleInput,
    RuleSpec,
    Side,
    register_rule,
)


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
    # The Beta quantile is the inverse regularized incomplete beta function (what
    # scipy.stats.beta.ppf evaluates); scipy.special spares the import of scipy.stats.
    from scipy.special import betaincinv

    lo, hi = betaincinv(k, n + 1 - k, np.array([(1 - level) / 2, (1 + level) / 2]))
    return float(lo), float(hi)


def beta_sd(n: int, k: int) -> float:
    """``sd = sqrt(k (n + 1 - k) / ((n + 1)^2 (n + 2)))``; 0 when ``k > n``."""
    if k > n:
        return 0.0
    return float(np.sqrt(k * (n + 1 - k) / ((n + 1) ** 2 * (n + 2))))


def split_conformal(scores: ArrayLike, *, alpha: AlphaLike, warn: bool = True,
                    overwrite: bool = False) -> Threshold:
    """``q = k-th smallest score, k = ceil((n + 1)(1 - alpha))``; ``+inf`` if ``k > n``.
    ``overwrite``: a float64 ``scores`` array may be reordered in place (no copy)."""
    a = as_fraction(alpha)
    q, k, n = conformal_quantile(scores, a, warn=warn, overwrite=overwrite)
    return Threshold("split", a, q, k, n)


def per_group(groups: NDArray[np.str_], scores: NDArray[np.float64],
              fit_one: Callable[[NDArray[np.float64]], GroupThreshold]
              ) -> dict[str, GroupThreshold]:
    """``fit_one`` applied to the scores of each group label (labels sorted)."""
    # A zero-stride label column is one label repeated (the marginal rule): no compare.
    if groups.size and (groups.strides == (0,) or bool((groups == groups[0]).all())):
        return {str(groups[0]): fit_one(scores)}  # one group (the marginal rule): no sort
    return {str(g): fit_one(scores[groups == g]) for g in np.unique(groups)}


def split_rule(data: RuleInput, alpha: Fraction, params: Mapping[str, Any]) -> RuleFit:
    """Split conformal per group label: ``k = ceil((n_g + 1)(1 - alpha))``-th smallest."""

    def one(s: NDArray[np.float64]) -> GroupThreshold:
        th = split_conformal(s, alpha=alpha, overwrite=data.scratch)
        return GroupThreshold(th.n, {"both": Side(th.value, th.k)})

    return RuleFit(per_group(data.groups, data.scores, one))


def _split_rank(n: int, alpha: Fraction, params: Mapping[str, Any], side: str) -> int:
    return conformal_rank(n, alpha)


register_rule(RuleSpec("split", split_rule, "split conformal: the k-th smallest score, "
                       "k = ceil((n+1)(1-alpha))", rank=_split_rank))
