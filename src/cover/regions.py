"""Certified regions: the nested families ``C_lam`` of each score, clipped to ``[0, T]``.

* Interval widening (NORM, SEC, SIGMA): ``C_lam = [s_hat - lam*l, e_hat + lam*l] ∩ [0, T]``;
  per-boundary rules give each side its own ``lam`` and SIGMA each side its own ``l``:
  ``[s_hat - lam_s*l_s, e_hat + lam_e*l_e] ∩ [0, T]``.
* Super-level set (SLS): ``C_lam = {t : f(t) >= -lam}``, clips merged into maximal intervals.
* Refusal policy: a row with no usable prediction gets ``[0, T]`` for every ``lam``;
  so does every row when ``lam = +inf`` (a calibration set too small for the level).

``lam`` may be a scalar or one value per row (per-group thresholds). A row is the
whole video when every side's ``lam`` is ``+inf``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.data.table import GroundingTable
from cover.intervals import CONTAINMENT_ATOL, Intervals, _from_flat
from cover.ragged import Ragged, row_ids
from cover.scores import DEFAULT_MIN_SCALE, Family, check_family, refused_for, side_scales


def widen(
    pred_start: NDArray[np.float64],
    pred_end: NDArray[np.float64],
    scale: NDArray[np.float64],
    lam: ArrayLike,
    duration: NDArray[np.float64],
    *,
    lam_end: ArrayLike | None = None,
    scale_end: NDArray[np.float64] | None = None,
) -> Intervals:
    """``[s_hat - lam*l, e_hat + lam_e*l_e] ∩ [0, T]`` (``lam_e = lam``, ``l_e = l`` unless
    given); empty when a negative ``lam`` shrinks the interval past itself. An interval
    that rounding alone (within ``CONTAINMENT_ATOL``) pushed past a single point, e.g.
    at ``T``, stays that point."""
    lam_a = np.broadcast_to(np.asarray(lam, dtype=np.float64), pred_start.shape)
    lam_e = lam_a if lam_end is None else np.broadcast_to(
        np.asarray(lam_end, dtype=np.float64), pred_start.shape)
    scale_e = scale if scale_end is None else scale_end
    with np.errstate(invalid="ignore"):
        lo = np.maximum(pred_start - lam_a * scale, 0.0)
        hi = np.minimum(pred_end + lam_e * scale_e, duration)
        # A region that float rounding shrank past a single point (e.g. at T) stays a point.
        point = (lo > hi) & (lo - hi <= CONTAINMENT_ATOL)
        mid = np.clip(0.5 * (lo + hi), 0.0, duration)
    lo = np.where(point, mid, lo)
    hi = np.where(point, mid, hi)
    keep = lo <= hi
    rows = np.flatnonzero(keep)
    return _from_flat(lo[keep], hi[keep], rows, pred_start.size)


def superlevel(
    relevance: Ragged, clip: float, lam: ArrayLike, duration: NDArray[np.float64]
) -> Intervals:
    """``{t : f(t) >= -lam}`` as maximal runs of selected clips; clip ``i`` spans
    ``[i*c, min((i+1)*c, T)]`` and clips starting at or past ``T`` are ignored."""
    n = len(relevance)
    r = row_ids(relevance.offsets)
    i = np.arange(relevance.values.size, dtype=np.int64) - relevance.offsets[r]
    lam_a = np.broadcast_to(np.asarray(lam, dtype=np.float64), (n,))
    t = duration[r]
    sel = (relevance.values >= -lam_a[r]) & (i * clip < t)
    # A run starts where a selected clip follows an unselected one or a row start.
    prev_sel = np.r_[False, sel[:-1]] & np.r_[False, r[1:] == r[:-1]]
    next_sel = np.r_[sel[1:], False] & np.r_[r[1:] == r[:-1], False]
    start = sel & ~prev_sel
    end = sel & ~next_sel
    s = i[start] * clip
    e = np.minimum((i[end] + 1) * clip, t[end])
    return _from_flat(s.astype(np.float64), e.astype(np.float64), r[start], n)


def with_whole_video(regions: Intervals, mask: NDArray[np.bool_],
                     duration: NDArray[np.float64]) -> Intervals:
    """Replace the rows in ``mask`` by ``[0, T]``."""
    if not mask.any():
        return regions
    keep = ~mask[regions.rows]
    rows = np.concatenate([regions.rows[keep], np.flatnonzero(mask)])
    s = np.concatenate([regions.starts[keep], np.zeros(int(mask.sum()))])
    e = np.concatenate([regions.ends[keep], duration[mask]])
    order = np.argsort(rows, kind="stable")
    return _from_flat(s[order], e[order], rows[order], len(regions))


@dataclass(frozen=True)
class Regions:
    """Certified regions of ``n`` rows.

    Attributes
    ----------
    intervals : Intervals
        The region of each row, a normalized union of intervals in seconds.
    duration : float array
        Video length T per row.
    refused : bool array
        Rows certified as the whole video because the grounder gave no usable
        prediction.
    threshold : float array
        The calibrated ``lam`` applied to each row (the start side's for per-boundary
        rules).
    family : str
        Score family that produced the regions.
    alpha : float or None
        Miscoverage level the threshold was calibrated for.
    threshold_end : float array or None
        The end side's ``lam`` per row when it differs from ``threshold``.
    """

    intervals: Intervals
    duration: NDArray[np.float64]
    refused: NDArray[np.bool_]
    threshold: NDArray[np.float64]
    family: str
    alpha: float | None = None
    threshold_end: NDArray[np.float64] | None = None

    def __len__(self) -> int:
        return len(self.intervals)

    @property
    def length(self) -> NDArray[np.float64]:
        """Region measure per row, seconds."""
        return self.intervals.length()

    @property
    def n_components(self) -> NDArray[np.int64]:
        return self.intervals.n_components

    def row(self, i: int) -> list[list[float]]:
        return self.intervals.row(i)

    def take(self, rows: ArrayLike) -> Regions:
        """The regions of ``rows`` (indices or a boolean mask), in that order."""
        idx = np.asarray(rows)
        idx = np.flatnonzero(idx) if idx.dtype == bool else idx.astype(np.int64)
        return Regions(self.intervals.take(idx), self.duration[idx], self.refused[idx],
                       self.threshold[idx], self.family, self.alpha,
                       None if self.threshold_end is None else self.threshold_end[idx])

    def summary(self) -> dict[str, Any]:
        return {
            "rows": len(self),
            "refused": int(self.refused.sum()),
            "mean_length_s": float(self.length.mean()) if len(self) else float("nan"),
        }


def build_regions(
    table: GroundingTable,
    family: str,
    lam: ArrayLike,
    *,
    lam_end: ArrayLike | None = None,
    min_scale: float = DEFAULT_MIN_SCALE,
    alpha: float | None = None,
) -> Regions:
    """Regions ``C_lam`` of ``family`` for every row of ``table`` (durations required);
    ``lam_end`` (interval families) widens the end side by its own parameter."""
    fam: Family = check_family(family)
    n = len(table)
    t = table.duration
    if not np.isfinite(t).all() or (t <= 0).any():
        bad = int(np.flatnonzero(~(np.isfinite(t) & (t > 0)))[0])
        raise ValueError(f"{table.where(bad)}: video duration unknown or not positive")
    lam_a = np.broadcast_to(np.asarray(lam, dtype=np.float64), (n,)).copy()
    lam_e = None if lam_end is None else np.broadcast_to(
        np.asarray(lam_end, dtype=np.float64), (n,)).copy()
    if np.isnan(lam_a).any() or (lam_e is not None and np.isnan(lam_e).any()):
        raise ValueError("threshold lam is NaN")
    if lam_e is not None and fam == "sls":
        raise ValueError("per-boundary thresholds apply to interval families, not sls")
    refused = refused_for(table, fam)
    if fam == "sls":
        iv = superlevel(table.relevance, table.clip, lam_a, t)
    else:
        l_s, l_e, _ = side_scales(table, fam, min_scale)
        iv = widen(table.pred_start, table.pred_end, l_s, lam_a, t, lam_end=lam_e, scale_end=l_e)
    whole = np.isposinf(lam_a) if lam_e is None else np.isposinf(lam_a) & np.isposinf(lam_e)
    iv = with_whole_video(iv, refused | whole, t)
    return Regions(iv, t, refused, lam_a, fam, alpha, lam_e)
