"""Conformal risk control (CRC) of the fraction of the truth left outside the region.

Loss ``L_i(lam) = 1 - |C_lam(X_i) ∩ I*_i| / |I*_i|`` (for a zero-length truth: 1 when it
is outside), in ``[0, B = 1]`` and nonincreasing in ``lam`` for the nested families.
Angelopoulos et al. (2024): with ``R_hat(lam)`` the mean calibration loss,

``lam_hat = inf{lam : (n / (n + 1)) R_hat(lam) + B / (n + 1) <= alpha}``

gives ``E[L_{n+1}(lam_hat)] <= alpha``: the expected uncovered share of the moment is
at most ``alpha`` (partial overlap accepted; beyond the paper). ``+inf`` when
``B / (n + 1) > alpha`` (too few rows). ``lam_hat`` is found by bisection and returned
from the side where the condition holds, so it never undershoots the infimum by more
than float resolution and the condition holds at the returned value.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.registry import (
    GroupThreshold,
    RuleFit,
    RuleInput,
    RuleSpec,
    Side,
    register_rule,
)
from cover.data.table import GroundingTable
from cover.errors import CoverWarning
from cover.regions import build_regions
from cover.scores import check_target, truth_target

Loss = Callable[[float], NDArray[np.float64]]


def crc_threshold(loss: Loss, n: int, alpha: float | Fraction, *, start: float = 0.0,
                  bound: float = 1.0, iterations: int = 200) -> float:
    """``inf{lam : (sum_i L_i(lam) + B) / (n + 1) <= alpha}`` for a nonincreasing per-row
    loss in ``[0, B]``; ``start`` is a first guess (e.g. the largest finite score)."""
    a = float(alpha)

    def ok(lam: float) -> bool:
        return bool((float(np.sum(loss(lam))) + bound) / (n + 1) <= a)

    if not ok(np.inf):
        return float(np.inf)
    hi = float(start)
    step = 1.0
    while not ok(hi):
        hi += step
        step *= 2
        if step > 1e300:
            return float(np.inf)
    lo, step = hi - 1.0, 1.0
    while ok(lo):
        hi = lo
        lo -= step
        step *= 2
        if step > 1e300:
            return float(-np.inf)
    for _ in range(iterations):
        mid = lo + (hi - lo) / 2
        if not lo < mid < hi:
            break
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def crc_rule(data: RuleInput, alpha: Fraction, params: Mapping[str, Any]) -> RuleFit:
    """:func:`crc_threshold` per group label on the loss of the group's rows."""
    assert data.loss is not None
    loss_all = data.loss
    out: dict[str, GroupThreshold] = {}

    def restricted(mask: NDArray[np.bool_]) -> Loss:
        return lambda lam: loss_all(lam)[mask]

    for g in np.unique(data.groups):
        mask = data.groups == g
        s = data.scores[mask]
        fin = s[np.isfinite(s)]
        lam = crc_threshold(restricted(mask), int(mask.sum()), alpha,
                            start=float(fin.max()) if fin.size else 0.0)
        if lam == np.inf:
            warnings.warn(
                f"alpha={float(alpha):g}: {int(mask.sum())} calibration rows are too few for "
                f"risk control (need at least {math.ceil(1 / float(alpha)) - 1}; group {g}); "
                "every region is the whole video", CoverWarning, stacklevel=2)
        out[str(g)] = GroupThreshold(int(mask.sum()), {"both": Side(lam, None)})
    return RuleFit(out, report={"controlled risk": "expected share of the truth outside "
                                                   f"the region <= {float(alpha):g}"})


register_rule(RuleSpec(
    "crc", crc_rule, "expected share of the truth left outside the region <= alpha (CRC)",
    needs=frozenset({"loss"})))


def coverage_loss(table: GroundingTable, family: str, target: str, min_scale: float
                  ) -> Any:
    """``loss(lam)`` per row: the fraction of the truth left outside ``C_lam``
    (``1 - |C_lam ∩ I*| / |I*|``; for a zero-length truth, 1 when it is outside)."""
    truth = truth_target(table, check_target(target))
    tlen = truth.length()

    def loss(lam: float) -> NDArray[np.float64]:
        reg = build_regions(table, family, lam, min_scale=min_scale)
        inside = reg.intervals.intersection_length(truth)
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.clip(1.0 - inside / tlen, 0.0, 1.0)
        point = 1.0 - reg.intervals.contains(truth).astype(np.float64)
        return np.where(tlen > 0, frac, point)

    return loss
