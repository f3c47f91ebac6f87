"""Ties among calibration scores, and when the split-conformal upper bound applies.

Split conformal at rank ``k`` of ``n`` calibration scores covers with probability at
least ``k/(n+1) >= 1 - alpha`` (paper Prop. 1). The *upper* bound
``1 - alpha + 1/(n+1)`` (paper Appendix, "Upper bound") needs the scores to be almost surely
distinct: when several calibration scores equal the threshold, a test score equal to
that value is covered as well, and coverage can exceed the bound. Interval scores of
grounders whose boundaries sit on a clip grid are heavily tied (SEC seconds scores
especially), so COVER reports, next to each threshold, the number of distinct
calibration scores and the *mass at the threshold* (calibration scores equal to it),
and says the upper bound does not apply when that mass is more than the threshold
itself (:func:`upper_bound_applies`).

Both counts are vectorised over calibration resamples (rows of a boolean mask matrix):
the scores are sorted once, and every resample's counts are sums over that order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

F64 = NDArray[np.float64]


def _masks(masks: ArrayLike | None, n: int) -> NDArray[np.bool_]:
    return np.ones((1, n), dtype=bool) if masks is None else np.atleast_2d(
        np.asarray(masks, dtype=bool))


def distinct_counts(scores: ArrayLike, masks: ArrayLike | None = None) -> NDArray[np.int64]:
    """Distinct score values in each resample (row of ``masks``; all scores when None):
    the scores are sorted once, cut into runs of equal values, and a resample counts the
    runs holding at least one of its rows."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    if masks is None and s.size:  # every row: the runs of the sorted values (no order,
        ss = np.sort(s)           # no per-row counts: 1e7 scores held ~280 MB that way)
        return np.array([1 + int(np.count_nonzero(ss[1:] != ss[:-1]))], dtype=np.int64)
    m = _masks(masks, s.size)
    if s.size == 0:
        return np.zeros(m.shape[0], dtype=np.int64)
    order = np.argsort(s, kind="stable")
    ss = s[order]
    starts = np.flatnonzero(np.r_[True, ss[1:] != ss[:-1]])
    held = np.add.reduceat(m[:, order].astype(np.int64), starts, axis=1) > 0
    return np.asarray(held.sum(axis=1), dtype=np.int64)


def mass_at(scores: ArrayLike, thresholds: ArrayLike,
            masks: ArrayLike | None = None) -> NDArray[np.int64]:
    """Calibration scores equal to the threshold, per resample (``thresholds`` one per
    row of ``masks``; one threshold and all scores when ``masks`` is None)."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    m = _masks(masks, s.size)
    th = np.broadcast_to(np.asarray(thresholds, dtype=np.float64).reshape(-1), (m.shape[0],))
    return np.asarray((m & (s[None, :] == th[:, None])).sum(axis=1), dtype=np.int64)


def upper_bound_applies(at_threshold: ArrayLike) -> NDArray[np.bool_]:
    """The bound ``1 - alpha + 1/(n+1)`` holds for distinct scores: it applies when at
    most one calibration score (the threshold itself) sits at the threshold."""
    return np.asarray(at_threshold) <= 1


@dataclass(frozen=True)
class Ties:
    """Ties of one calibration set at its threshold."""

    n: int
    distinct: int
    at_threshold: int

    @classmethod
    def of(cls, scores: ArrayLike, threshold: float) -> Ties:
        s = np.asarray(scores, dtype=np.float64).reshape(-1)
        return cls(int(s.size), int(distinct_counts(s)[0]), int(mass_at(s, threshold)[0]))

    @property
    def upper_bound_applies(self) -> bool:
        return bool(upper_bound_applies(self.at_threshold))

    def describe(self, alpha: float | None = None, *, split: bool = True) -> str:
        """One console line, e.g. ``calibration scores: 74 distinct values in 623 rows;
        5 at the threshold (ties: ...)``; ``alpha`` adds the bound's value when it applies.
        ``split=False`` (another rule than split conformal): the counts alone."""
        text = (f"calibration scores: {self.distinct} distinct values in {self.n} rows; "
                f"{self.at_threshold} at the threshold")
        if not split:
            return text
        if not self.upper_bound_applies:
            return text + (" (ties at the threshold: the upper bound 1 - alpha + 1/(n+1), "
                           "which assumes distinct scores, does not apply)")
        if alpha is not None:
            return text + (f" (no ties there: coverage is at most 1 - alpha + 1/(n+1) = "
                           f"{min(1.0, 1 - alpha + 1 / (self.n + 1)):.4f})")
        return text
