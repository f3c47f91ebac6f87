"""Risk-controlling prediction sets (RCPS) for the miss rate (paper Prop. A.5, SPEC §4).

Loss ``L_lam = 1[S > lam]`` (the truth is not inside ``C_lam``), nonincreasing in
``lam``. With ``m(lam) = #{S_i > lam}`` misses among the ``n`` calibration scores and an
upper confidence bound ``R+(m, n)`` on the miss rate at confidence ``1 - delta``,

``lam_hat = inf{lam : R+(m(lam'), n) <= alpha for every lam' >= lam}``
(Bates et al. 2021), so ``P(R(lam_hat) <= alpha) >= 1 - delta`` over the calibration
draw. ``R+`` is nondecreasing in ``m``, so ``lam_hat`` is an order statistic: with
``m*`` the largest miss count whose bound is ``<= alpha``, ``lam_hat`` is the
``k = n - m*``-th smallest score (``+inf`` when even ``m = 0`` fails: ``k = n + 1``).

Bounds (each valid for a loss in {0, 1}):

* ``hoeffding``: the paper's, in its additive form ``R+ = m/n + sqrt(ln(1/delta) / (2n))``
  (one-sided Hoeffding; its slack scales as ``1/sqrt(n)``).
* ``hoeffding_bentkus``: Bates et al.'s HB p-value ``min(exp(-n h(min(m/n, a), a)),
  e * P(Bin(n, a) <= m))`` at ``a = alpha``, ``h`` the Bernoulli KL divergence; the
  bound is ``<= alpha`` iff the p-value is ``<= delta``.
* ``binomial``: exact (Clopper–Pearson): ``R+ <= alpha`` iff ``P(Bin(n, alpha) <= m) <=
  delta``. For a binary loss the miss count is exactly binomial, so this is the
  tightest valid bound and the default.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.calibrate.quantile import kth_smallest
from cover.calibrate.registry import (
    GroupThreshold,
    RuleFit,
    RuleInput,
    RuleSpec,
    Side,
    check_delta,
    register_rule,
)
from cover.errors import CoverWarning

BOUNDS = ("binomial", "hoeffding_bentkus", "hoeffding")
DEFAULTS: dict[str, Any] = {"delta": 0.1, "bound": "binomial"}


def _binom_cdf(m: NDArray[np.int64], n: int, p: float) -> NDArray[np.float64]:
    """``P(Binomial(n, p) <= m)``: scipy.special's ``bdtr`` (what scipy.stats.binom.cdf
    computes, within rounding), which spares the second-long import of scipy.stats."""
    from scipy.special import bdtr

    return np.asarray(bdtr(m, n, p), dtype=np.float64)


def _kl(a: NDArray[np.float64], b: float) -> NDArray[np.float64]:
    """Bernoulli KL divergence ``h(a, b) = a ln(a/b) + (1-a) ln((1-a)/(1-b))``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(a > 0, a * np.log(a / b), 0.0)
        t2 = np.where(a < 1, (1 - a) * np.log((1 - a) / (1 - b)), 0.0)
    return np.asarray(t1 + t2, dtype=np.float64)


def max_misses(n: int, alpha: float | Fraction, delta: float, bound: str) -> int:
    """``m*``: the largest miss count ``m`` in ``0..n`` whose upper bound on the miss rate
    is ``<= alpha`` at confidence ``1 - delta``; ``-1`` when none is."""
    if bound not in BOUNDS:
        raise ValueError(f"unknown bound {bound!r}; choose one of {', '.join(BOUNDS)}")
    if n < 1:
        return -1
    a = float(alpha)
    m = np.arange(n + 1, dtype=np.int64)
    if bound == "hoeffding":
        ok = m / n + math.sqrt(math.log(1 / delta) / (2 * n)) <= a
    elif bound == "binomial":
        ok = _binom_cdf(m, n, a) <= delta
    else:
        p_h = np.exp(-n * _kl(np.minimum(m / n, a), a))
        ok = np.minimum(p_h, math.e * _binom_cdf(m, n, a)) <= delta
    # The bound is nondecreasing in m: the admissible counts are 0..m*.
    return int(np.count_nonzero(ok)) - 1


def rcps_rank(n: int, alpha: float | Fraction, delta: float, bound: str) -> int:
    """``k = n - m*`` (``n + 1`` when no miss count is admissible: ``lam_hat = +inf``)."""
    return n - max_misses(n, alpha, delta, bound)


def rcps(scores: ArrayLike, alpha: float | Fraction, delta: float, bound: str = "binomial"
         ) -> tuple[float, int, int]:
    """``(lam_hat, k, n)``: the ``k = n - m*``-th smallest score (see the module docstring)."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    k = rcps_rank(int(s.size), alpha, delta, bound)
    return kth_smallest(s, k), k, int(s.size)


def rcps_rule(data: RuleInput, alpha: Fraction, params: Mapping[str, Any]) -> RuleFit:
    """:func:`rcps` per group label; the report names the bound behind ``lam_hat``."""
    delta, bound = float(params["delta"]), str(params["bound"])
    out: dict[str, GroupThreshold] = {}
    for g in np.unique(data.groups):
        lam, k, n = rcps(data.scores[data.groups == g], alpha, delta, bound)
        if k > n:
            warnings.warn(
                f"alpha={float(alpha):g}, delta={delta:g}: {n} calibration rows are too few "
                f"for the {bound} bound to certify any threshold (group {g}); every region "
                "is the whole video", CoverWarning, stacklevel=2)
        out[str(g)] = GroupThreshold(n, {"both": Side(lam, k)})
    return RuleFit(out, report={
        "lam_hat from bound": f"{bound} (miss rate <= {float(alpha):g} with confidence "
                              f"{1 - delta:g})"})


def check_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """``delta`` in (0, 1) and a known ``bound``."""
    extra = set(params) - set(DEFAULTS)
    if extra:
        raise ValueError(f"unknown parameter(s) {', '.join(sorted(extra))}")
    delta = check_delta(params)
    bound = params.get("bound")
    if bound not in BOUNDS:
        raise ValueError(f"bound must be one of {', '.join(BOUNDS)}, got {bound!r}")
    return {"delta": delta, "bound": bound}


def _rank(n: int, alpha: Fraction, params: Mapping[str, Any], side: str) -> int:
    return rcps_rank(n, alpha, float(params["delta"]), str(params["bound"]))


register_rule(RuleSpec(
    "rcps", rcps_rule, "miss rate <= alpha with confidence 1-delta (RCPS)",
    defaults=DEFAULTS, check_params=check_params, rank=_rank))
