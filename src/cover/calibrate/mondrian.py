"""Mondrian (group-conditional) split conformal: one threshold per group.

``q_g = k_g-th smallest score of group g, k_g = ceil((n_g + 1)(1 - alpha))`` (paper
Prop. A.3, SPEC §4): within each group the coverage is ``>= 1 - alpha`` with slack
``1/(n_g + 1)``. All groups at once: one sort by (group, score), exact integer ranks.
A group with ``k_g > n_g`` (too small for a finite quantile, or below ``min_rows``)
falls back to the pooled split-conformal threshold or to ``+inf`` (the user's choice);
every fallback is reported (``fallback`` mask, :meth:`GroupThresholds.fallback_lines`,
a :class:`~cover.errors.CoverWarning`), never silent.

>>> import numpy as np
>>> scores = np.r_[np.arange(1.0, 20.0), np.arange(101.0, 104.0)]   # 19 + 3 rows
>>> codes = np.r_[np.zeros(19, int), np.ones(3, int)]
>>> th = mondrian_conformal(scores, codes, 2, alpha=0.1, warn=False)
>>> th.values.tolist(), th.k.tolist(), th.fallback.tolist()   # k = ceil(20 * 0.9) = 18
([18.0, 102.0], [18, 4], [False, True])
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover._json import from_json_number, to_json_number
from cover.calibrate.groups import REFUSED, Grouping, require_known
from cover.calibrate.quantile import (
    AlphaLike,
    as_fraction,
    conformal_ranks,
    kth_smallest,
    min_calibration_size,
)
from cover.calibrate.registry import (
    Fallback,
    GroupThreshold,
    RuleFit,
    RuleInput,
    RuleSpec,
    Side,
    register_rule,
)
from cover.calibrate.split import Threshold, split_conformal
from cover.errors import CoverWarning

FallbackTo = Literal["pool", "inf"]
FALLBACKS: tuple[FallbackTo, ...] = ("pool", "inf")


def group_order_statistics(scores: NDArray[np.float64], codes: NDArray[np.int64],
                           n_groups: int, ranks: ArrayLike
                           ) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """``(q, n)``: the ``ranks[g]``-th smallest score of each group (``+inf`` when the
    rank exceeds the group size ``n[g]``).

    Few groups of many rows: a stable radix sort of the 16-bit group codes lays the
    groups out contiguously (O(n)), then each group's rank is selected in place
    (:func:`cover.calibrate.quantile.kth_smallest`, O(n_g)): linear in n. Many small
    groups: one sort by (group, score) and a gather."""
    n = np.bincount(codes, minlength=n_groups).astype(np.int64)
    start = np.concatenate(([0], np.cumsum(n)[:-1])).astype(np.int64)
    k = np.asarray(ranks, dtype=np.int64)
    ok = (k >= 1) & (k <= n)
    q = np.full(n_groups, np.inf)
    if n_groups <= np.iinfo(np.int16).max and n_groups * _ROWS_PER_SELECT <= scores.size:
        s = scores[np.argsort(codes.astype(np.int16), kind="stable")]
        for g in np.flatnonzero(ok).tolist():  # a loop over groups, not rows
            q[g] = kth_smallest(s[start[g]:start[g] + n[g]], int(k[g]))
        return q, n
    if n_groups <= np.iinfo(np.int16).max:
        # Sort the scores, then a stable radix sort of their 16-bit group codes: the same
        # (group, score) order as a lexsort, two to three times faster.
        by_score = np.argsort(scores)
        order = by_score[np.argsort(codes[by_score].astype(np.int16), kind="stable")]
    else:
        order = np.lexsort((scores, codes))
    s = scores[order]
    idx = np.where(ok, start + k - 1, 0)
    q = np.where(ok, s[idx] if s.size else np.inf, np.inf)
    return q.astype(np.float64), n


#: Per-group selection pays a Python call per group: used when groups average at least
#: this many rows (below it, one sort of all the rows is faster).
_ROWS_PER_SELECT = 256


@dataclass(frozen=True)
class GroupThresholds:
    """Per-group thresholds and the arithmetic behind them.

    ``values[g]`` is the threshold used for group ``g``: its own ``k[g]``-th smallest of
    ``n[g]`` scores, or, where ``fallback[g]``, the pooled threshold (``fallback_to ==
    "pool"``) or ``+inf``. ``own[g]`` is the group's own quantile (``+inf`` if too small).
    """

    rule: str
    alpha: Fraction
    grouping: Grouping
    values: NDArray[np.float64]
    own: NDArray[np.float64]
    k: NDArray[np.int64]
    n: NDArray[np.int64]
    fallback: NDArray[np.bool_]
    fallback_to: FallbackTo
    min_rows: int
    pooled: Threshold

    @property
    def labels(self) -> tuple[str, ...]:
        return self.grouping.labels

    def expected_coverage(self) -> NDArray[np.float64]:
        """``k_g / (n_g + 1)`` for groups with their own finite threshold, else 1 for an
        infinite threshold and the pooled ``k / (n + 1)`` (a marginal figure only) for a
        pooled fallback."""
        own = np.minimum(self.k, self.n + 1) / (self.n + 1)
        fb = 1.0 if self.fallback_to == "inf" else self.pooled.expected_coverage
        return np.where(self.fallback, fb, own)

    def per_row(self, codes: ArrayLike, values: ArrayLike | None = None,
                where: Any = None) -> NDArray[np.float64]:
        """The threshold of each row from its group code; a row in no fitted group (code
        ``-1``, e.g. a key value unseen at calibration) is a clear error."""
        c = np.asarray(codes, dtype=np.int64).reshape(-1)
        if c.size and c.max() >= self.values.size:
            raise ValueError(f"group code {int(c.max())} out of range for "
                             f"{self.values.size} groups")
        require_known(c, self.grouping, c if values is None else values, where)
        return self.values[c]

    def fallback_reason(self, g: int) -> str:
        """Why group ``g`` has no threshold of its own."""
        need = max(min_calibration_size(self.alpha), self.min_rows)
        return (f"{int(self.n[g])} calibration rows, needs >= {need} for "
                f"alpha={float(self.alpha):g}")

    def fallback_lines(self) -> list[str]:
        """One line per group that did not get its own threshold, saying why and what
        it uses instead."""
        to = (f"the pooled threshold {self.pooled.value:.6g}" if self.fallback_to == "pool"
              else "+inf (whole video)")
        return [f"group {self.labels[g]!r} ({self.grouping.name}): {self.fallback_reason(g)}; "
                f"uses {to}" for g in np.flatnonzero(self.fallback).tolist()]


def check_fallback(fallback: str) -> FallbackTo:
    if fallback not in FALLBACKS:
        raise ValueError(f"unknown fallback {fallback!r}; choose one of {', '.join(FALLBACKS)}")
    return fallback


def mondrian_conformal(
    scores: ArrayLike,
    codes: ArrayLike,
    grouping: Grouping | int,
    *,
    alpha: AlphaLike,
    fallback: str = "pool",
    min_rows: int = 0,
    rule: str = "mondrian",
    warn: bool = True,
) -> GroupThresholds:
    """One split-conformal threshold per group: ``q_g = k_g-th smallest score of group g``,
    ``k_g = ceil((n_g + 1)(1 - alpha))``.

    ``codes`` are group codes ``0..G-1`` of the calibration rows (from
    :meth:`Grouping.assign`); ``grouping`` is the :class:`Grouping` (or just ``G``, for
    unnamed groups). A group with ``k_g > n_g`` or ``n_g < min_rows`` falls back to the
    pooled threshold (``fallback="pool"``) or ``+inf`` (``"inf"``), with a warning.
    """
    a = as_fraction(alpha)
    fb = check_fallback(fallback)
    if isinstance(grouping, int):
        grouping = Grouping("key", tuple(str(g) for g in range(grouping)), (), "group")
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    c = np.asarray(codes, dtype=np.int64).reshape(-1)
    if c.shape != s.shape:
        raise ValueError(f"{s.size} scores but {c.size} group codes")
    if np.isnan(s).any():
        raise ValueError("scores contain NaN")
    G = grouping.n_groups
    if c.size and (c.min() < 0 or c.max() >= G):
        bad = int(np.flatnonzero((c < 0) | (c >= G))[0])
        raise ValueError(f"calibration row {bad + 1} has group code {int(c[bad])}, "
                         f"outside 0..{G - 1}")
    if min_rows < 0:
        raise ValueError(f"min_rows must be >= 0, got {min_rows}")
    n = np.bincount(c, minlength=G).astype(np.int64)
    k = conformal_ranks(n, a)
    own, _ = group_order_statistics(s, c, G, k)
    too_small = (k > n) | (n < min_rows)
    if grouping.kind == "pred_length":
        # Refusals are the whole video at any threshold: their group never falls back.
        too_small[grouping.labels.index(REFUSED)] = False
    pooled = split_conformal(s, alpha=a, warn=False)
    replacement = pooled.value if fb == "pool" else np.inf
    values = np.where(too_small, replacement, own)
    th = GroupThresholds(rule, a, grouping, values.astype(np.float64), own, k, n, too_small,
                         fb, int(min_rows), pooled)
    if warn and too_small.any():
        lines = th.fallback_lines()
        warnings.warn(f"{len(lines)} of {G} group(s) too small for their own threshold: "
                      + "; ".join(lines[:5]) + ("; ..." if len(lines) > 5 else ""),
                      CoverWarning, stacklevel=2)
    return th


# ---- the Calibrator's rule registry (cover.calibrate.registry) ----------------------
def check_group_params(params: Mapping[str, Any], *, fixed_fallback: bool) -> dict[str, Any]:
    allowed = {"min_rows", "pooled"} | (set() if fixed_fallback else {"fallback"})
    extra = sorted(set(params) - allowed)
    if extra:
        raise ValueError(f"unknown parameter(s) {', '.join(extra)}; this rule takes "
                         f"{', '.join(sorted(allowed - {'pooled'}))}")
    out: dict[str, Any] = {}
    if not fixed_fallback:
        out["fallback"] = check_fallback(params.get("fallback", "pool"))
    m = params.get("min_rows", 0)
    if isinstance(m, bool) or not isinstance(m, int) or m < 0:
        raise ValueError(f"min_rows must be an integer >= 0, got {m!r}")
    out["min_rows"] = m
    if "pooled" in params:  # learned at fit: the pooled threshold a fallback group uses
        p = params["pooled"]
        if not isinstance(p, dict) or set(p) != {"value", "k", "n"}:
            raise ValueError("pooled must hold exactly value, k and n")
        try:
            v = from_json_number(p["value"])
        except ValueError as exc:
            raise ValueError(f"pooled.value: {exc}") from None
        if math.isnan(v) or v == -math.inf:
            raise ValueError("pooled.value must be a number or 'inf'")
        for key in ("k", "n"):
            if isinstance(p[key], bool) or not isinstance(p[key], int) or p[key] < 1:
                raise ValueError(f"pooled.{key} must be an integer >= 1")
        out["pooled"] = {"value": p["value"], "k": p["k"], "n": p["n"]}
    return out


def group_rule_fit(data: RuleInput, alpha: Fraction, params: Mapping[str, Any],
              fallback: str) -> RuleFit:
    labels, codes = np.unique(data.groups, return_inverse=True)
    grouping = Grouping("key", tuple(str(x) for x in labels), (), "group")
    th = mondrian_conformal(data.scores, codes, grouping, alpha=alpha, fallback=fallback,
                            min_rows=params["min_rows"], warn=False)
    # A group of refusals only is the whole video at any threshold: +inf, not -inf.
    only_refused = np.bincount(codes, weights=np.isfinite(data.scores) |
                               np.isposinf(data.scores), minlength=labels.size) == 0
    own = np.where(only_refused, np.inf, th.own)
    used = "pooled" if fallback == "pool" else "inf"
    records = {str(g): GroupThreshold(int(th.n[i]), {"both": Side(float(own[i]), int(th.k[i]))})
               for i, g in enumerate(labels)}
    falls = [Fallback(str(labels[i]), th.fallback_reason(int(i)), used)
             for i in np.flatnonzero(th.fallback)]
    pooled = {"value": to_json_number(th.pooled.value), "k": th.pooled.k, "n": th.pooled.n}
    report: dict[str, Any] = {"groups": int(labels.size),
                              "pooled threshold": f"{th.pooled.value:.6g}"}
    if labels.size == 1:
        report["note"] = ("one group: this is split conformal; group with groups="
                          "'pred_length', 'duration' or 'key' (cover calibrate picks a default)")
    return RuleFit(records, report=report, fallback=falls, learned={"pooled": pooled})


def group_lams(record: GroupThreshold, params: Mapping[str, Any]) -> tuple[float, float]:
    """A group too small for its own threshold uses the pooled one (or +inf)."""
    side = record.sides["both"]
    small = (side.k is not None and side.k > record.n) or record.n < params.get("min_rows", 0)
    if not small:
        return side.value, side.value
    if params.get("fallback", "pool") == "inf" or "pooled" not in params:
        return math.inf, math.inf
    v = from_json_number(params["pooled"]["value"])
    return v, v


def group_rank(n: int, alpha: Fraction, params: Mapping[str, Any], side: str) -> int:
    return int(conformal_ranks([n], alpha)[0])


def mondrian_rule(data: RuleInput, alpha: Fraction, params: Mapping[str, Any]) -> RuleFit:
    """Mondrian: the split-conformal threshold of each group label; a group with
    ``k_g > n_g`` or ``n_g < min_rows`` uses the pooled threshold or ``+inf``."""
    return group_rule_fit(data, alpha, params, params["fallback"])


register_rule(RuleSpec(
    "mondrian", mondrian_rule,
    "Mondrian: one split-conformal threshold per group (default groups: predicted-length "
    "terciles); a group too small falls back to the pooled threshold or +inf",
    defaults={"fallback": "pool", "min_rows": 0},
    check_params=lambda p: check_group_params(p, fixed_fallback=False),
    rank=group_rank, lams=group_lams))
