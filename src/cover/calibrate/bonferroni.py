"""Per-boundary (two-parameter) widening, Bonferroni form: each side at ``alpha/2``.

``q_s = k-th smallest S_s``, ``q_e = k-th smallest S_e``, ``k = ceil((n + 1)(1 - alpha/2))``,
with per-side scores ``S_s = (s_hat - s*)/l``, ``S_e = (e* - e_hat)/l`` (paper §Method,
"Per-boundary variant"; SPEC §3). The region ``[s_hat - q_s l, e_hat + q_e l] ∩ [0, T]``
misses only if one side misses, each with probability ``<= alpha/2``, so the **joint**
coverage is ``>= 1 - alpha`` (union bound). ``q_s / q_e`` is the paper's diagnostic of
which boundary a grounder gets wrong.

>>> import numpy as np
>>> from fractions import Fraction
>>> th = bonferroni(np.arange(1.0, 40.0), np.arange(40.0, 1.0, -1), Fraction(1, 10))
>>> th.sides["start"].k, th.sides["start"].value, th.sides["end"].value   # k = ceil(40 * .95)
(38, 38.0, 39.0)
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cover.calibrate.quantile import conformal_rank, min_calibration_size
from cover.calibrate.registry import (
    TWO_SIDES,
    GroupThreshold,
    RuleFit,
    RuleInput,
    RuleSpec,
    Side,
    register_rule,
)
from cover.calibrate.split import split_conformal
from cover.errors import CoverWarning


def bonferroni(start: ArrayLike, end: ArrayLike, alpha: Fraction) -> GroupThreshold:
    """Both sides by split conformal at ``alpha / 2`` (exact rank arithmetic)."""
    half = alpha / 2
    ts = split_conformal(start, alpha=half, warn=False)
    te = split_conformal(end, alpha=half, warn=False)
    if ts.k > ts.n:
        warnings.warn(
            f"alpha={float(alpha):g}: {ts.n} calibration rows are too few for per-boundary "
            f"thresholds at alpha/2 (need at least {min_calibration_size(half)}); every "
            "region is the whole video", CoverWarning, stacklevel=2)
    return GroupThreshold(ts.n, {"start": Side(ts.value, ts.k), "end": Side(te.value, te.k)})


def bonferroni_rule(data: RuleInput, alpha: Fraction, params: Mapping[str, Any]) -> RuleFit:
    """:func:`bonferroni` per group label."""
    assert data.start is not None and data.end is not None
    out = {str(g): bonferroni(data.start[m], data.end[m], alpha)
           for g in np.unique(data.groups) for m in [data.groups == g]}
    return RuleFit(out)


def _rank(n: int, alpha: Fraction, params: Mapping[str, Any], side: str) -> int:
    return conformal_rank(n, alpha / 2)


register_rule(RuleSpec(
    "bonferroni", bonferroni_rule,
    "per-boundary widening, each side at alpha/2 (joint coverage >= 1-alpha)",
    rank=_rank, sides=TWO_SIDES, needs=frozenset({"sides"})))
