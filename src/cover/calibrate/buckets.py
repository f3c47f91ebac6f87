"""The paper's duration-bucketed calibration for covariate shift (paper App. "Cross-dataset
transfer", SPEC §4 covariate shift (a)).

Bucket the calibration rows on video duration with hard cut-offs and calibrate one
split-conformal threshold per bucket; a test row uses its bucket's threshold. A bucket
with too few calibration rows (``k_b > n_b``, or fewer than ``min_rows``) falls back to
the full pool, reported. Duration needs no ground truth, so the rule applies to
unlabelled test rows; unlike predicted length it is not already inside the NORM score.

This is Mondrian calibration on duration groups (:mod:`cover.calibrate.mondrian`) with the
pooled fallback; it does not reweight within a bucket (that is :mod:`cover.calibrate.weighted`).

>>> import numpy as np
>>> dur = np.r_[np.full(20, 30.0), np.full(3, 150.0)]
>>> th = duration_bucketed(np.arange(23.0), dur, alpha=0.1, edges=[60.0], warn=False)
>>> th.labels, th.n.tolist(), th.fallback.tolist()
(('[0, 60)', '[60, inf)'), [20, 3], [False, True])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cover.calibrate.groups import duration_buckets
from cover.calibrate.mondrian import (
    GroupThresholds,
    check_group_params,
    group_lams,
    group_rank,
    group_rule_fit,
    mondrian_conformal,
)
from cover.calibrate.quantile import AlphaLike
from cover.calibrate.registry import RuleFit, RuleInput, RuleSpec, register_rule

#: Default number of equal-count buckets when no edges are given (the paper uses two).
DEFAULT_BUCKETS = 2


def duration_bucketed(
    scores: ArrayLike,
    duration: ArrayLike,
    *,
    alpha: AlphaLike,
    edges: Sequence[float] | None = None,
    n_buckets: int = DEFAULT_BUCKETS,
    min_rows: int = 0,
    warn: bool = True,
) -> GroupThresholds:
    """``q_b = k_b-th smallest score of duration bucket b`` (``k_b = ceil((n_b+1)(1-alpha))``),
    falling back to the pooled threshold where bucket ``b`` is too small.

    ``edges`` are the bucket cut-offs in seconds (buckets ``[e_i, e_{i+1})``); without
    them, ``n_buckets`` equal-count cuts of the calibration durations.
    """
    d = np.asarray(duration, dtype=np.float64).reshape(-1)
    grouping = duration_buckets(d, edges=edges, n_buckets=n_buckets)
    codes = grouping.assign(d)
    bad = np.flatnonzero(codes < 0)
    if bad.size:
        raise ValueError(f"calibration row {int(bad[0]) + 1}: video duration {d[bad[0]]:g} is "
                         f"unknown or not positive ({bad.size} row(s)); duration buckets need it")
    return mondrian_conformal(scores, codes, grouping, alpha=alpha, fallback="pool",
                              min_rows=min_rows, rule="buckets", warn=warn)


def buckets_rule(data: RuleInput, alpha: Fraction, params: Mapping[str, Any]) -> RuleFit:
    """The bucketed rule: the split-conformal threshold of each bucket label, the pooled
    threshold where a bucket is too small (``k_b > n_b`` or ``n_b < min_rows``)."""
    return group_rule_fit(data, alpha, params, "pool")


register_rule(RuleSpec(
    "buckets", buckets_rule,
    "duration-bucketed calibration for covariate shift (default: 2 equal-count duration "
    "buckets); a sparse bucket falls back to the pooled threshold",
    defaults={"min_rows": 0},
    check_params=lambda p: check_group_params(p, fixed_fallback=True),
    rank=group_rank, lams=group_lams))
