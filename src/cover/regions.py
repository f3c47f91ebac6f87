"""Certified regions: the nested families ``C_lam`` of each score, clipped to ``[0, T]``.

* Interval widening (NORM, SEC, SIGMA): ``C_lam = [s_hat - lam*l, e_hat + lam*l] ∩ [0, T]``;
  per-boundary rules give each side its own ``lam`` and SIGMA each side its own ``l``:
  ``[s_hat - lam_s*l_s, e_hat + lam_e*l_e] ∩ [0, T]``.
* Super-level set (SLS): ``C_lam = {t : f(t) >= -lam}``, clips merged into maximal intervals.
* Refusal policy: a row with no usable prediction gets ``[0, T]`` for every ``lam``;
  so does every row when ``lam = +inf`` (a calibration set too small for the level).

The interval arithmetic lives in :mod:`cover.widening`. ``lam`` may be a scalar or one
value per row (per-group thresholds). A row is the
whole video when every side's ``lam`` is ``+inf``.

**Length: an inequality, not an identity.** The paper's Theorem 1(i) states
``|C_lam| = min{l(1 + 2 lam), T}`` for NORM. What holds is
``|C_lam| <= min{l(1 + 2 lam), T}`` (``l`` the NORM scale ``max(e_hat - s_hat,
min_scale)``, ``lam >= 0``), with equality only when the widened interval is clipped on
neither side (and ``l`` is not floored) or on both: clipping at ``0`` *or* at ``T``
alone cuts the bracket below ``min{l(1 + 2 lam), T}``. On QD-DETR and LA-DETR (QVHighlights,
Charades-STA) 14-80% of test rows differ over the paper's alpha grid
(``tests/test_regions.py``); Theorem 1(i)'s bound on the expected length is unaffected.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.data.table import ANSWERED, GroundingTable
from cover.intervals import Intervals, from_flat
from cover.ragged import Ragged, offsets_from_lengths, row_ids
from cover.scores import DEFAULT_MIN_SCALE, Family, check_family, refused_for, side_scales
from cover.widening import bounds_to_intervals, widen_blocks, widened_bounds


def superlevel(
    relevance: Ragged, clip: float, lam: ArrayLike, duration: NDArray[np.float64]
) -> Intervals:
    """``{t : f(t) >= -lam}`` as maximal runs of selected clips; clip ``i`` spans
    ``[i*c, min((i+1)*c, T)]`` and clips starting at or past ``T`` are ignored."""
    n = len(relevance)
    lam_a = np.broadcast_to(np.asarray(lam, dtype=np.float64), (n,))
    width = relevance.uniform_width()
    if width is not None:
        return _superlevel_dense(relevance.values.reshape(n, width), clip, lam_a, duration)
    r = row_ids(relevance.offsets)
    i = np.arange(relevance.values.size, dtype=np.int64) - relevance.offsets[r]
    t = duration[r]
    sel = (relevance.values >= -lam_a[r]) & (i * clip < t)
    # A run starts where a selected clip follows an unselected one or a row start.
    prev_sel = np.r_[False, sel[:-1]] & np.r_[False, r[1:] == r[:-1]]
    next_sel = np.r_[sel[1:], False] & np.r_[r[1:] == r[:-1], False]
    start = sel & ~prev_sel
    end = sel & ~next_sel
    s = i[start] * clip
    e = np.minimum((i[end] + 1) * clip, t[end])
    return from_flat(s.astype(np.float64), e.astype(np.float64), r[start], n)


def _superlevel_dense(values: NDArray[np.float64], clip: float, lam: NDArray[np.float64],
                      duration: NDArray[np.float64]) -> Intervals:
    """:func:`superlevel` on a ``(rows, clips)`` view (every row has the same number of
    clips): one byte per clip for the selection and its run boundaries, and 8-byte
    arrays only per row or per run. Clip ``i < used[r]`` iff ``i*c < T[r]``."""
    n, width = values.shape
    clip_start = np.arange(width, dtype=np.int64) * clip
    used = np.searchsorted(clip_start, duration, side="left")  # #{i : i*c < T}
    used[np.isnan(duration)] = 0
    sel = values >= -lam[:, None]
    sel &= np.arange(width) < used[:, None]
    start = sel.copy()
    start[:, 1:] &= ~sel[:, :-1]
    end = sel
    end[:, :-1] &= ~sel[:, 1:]
    first = np.flatnonzero(start)
    last = np.flatnonzero(end)
    rows = first // width
    s = (first - rows * width) * clip
    e = np.minimum((last - rows * width + 1) * clip, duration[rows])
    return from_flat(s.astype(np.float64), e.astype(np.float64), rows, n)


def with_whole_video(regions: Intervals, mask: NDArray[np.bool_],
                     duration: NDArray[np.float64]) -> Intervals:
    """Replace the rows in ``mask`` by ``[0, T]``."""
    if not mask.any():
        return regions
    if regions.is_single:
        s, e = regions.starts.copy(), regions.ends.copy()
        s[mask] = 0.0
        e[mask] = duration[mask]
        return Intervals.single(s, e)
    # New counts: 1 for masked rows, unchanged otherwise; kept components move by
    # the shift of their row's offset (no sort).
    counts = np.where(mask, 1, regions.n_components)
    off = offsets_from_lengths(counts)
    s = np.empty(int(off[-1]))
    e = np.empty(int(off[-1]))
    r = regions.rows
    keep = ~mask[r]
    dest = np.arange(r.size, dtype=np.int64) + (off[:-1] - regions.offsets[:-1])[r]
    s[dest[keep]] = regions.starts[keep]
    e[dest[keep]] = regions.ends[keep]
    at = off[:-1][mask]
    s[at] = 0.0
    e[at] = duration[mask]
    return Intervals(s, e, off)


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
        rules); read-only (a broadcast view when one ``lam`` applies to every row).
    family : str
        Score family that produced the regions.
    alpha : float or None
        Miscoverage level the threshold was calibrated for.
    threshold_end : float array or None
        The end side's ``lam`` per row when it differs from ``threshold``.
    abstain_reason : object array or None
        Selective rules (:mod:`cover.calibrate.ltt`): why each abstained row abstained
        (None where it answered); an abstained row's region is the whole video.
    p_value : float array or None
        Per-row conformal p-value (:mod:`cover.calibrate.pvalues`) when the calibrator
        kept its calibration scores.
    """

    intervals: Intervals
    duration: NDArray[np.float64]
    refused: NDArray[np.bool_]
    threshold: NDArray[np.float64]
    family: str
    alpha: float | None = None
    threshold_end: NDArray[np.float64] | None = None
    abstain_reason: NDArray[np.object_] | None = None
    p_value: NDArray[np.float64] | None = None

    @property
    def abstained(self) -> NDArray[np.bool_]:
        """Rows a selective rule abstained on (none for other rules)."""
        if self.abstain_reason is None:
            return np.zeros(len(self), dtype=bool)
        return np.array([r is not None for r in self.abstain_reason.tolist()], dtype=bool)

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
                       None if self.threshold_end is None else self.threshold_end[idx],
                       None if self.abstain_reason is None else self.abstain_reason[idx],
                       None if self.p_value is None else self.p_value[idx])

    def summary(self) -> dict[str, Any]:
        return {
            "rows": len(self),
            "refused": int(self.refused.sum()),
            "mean_length_s": float(self.length.mean()) if len(self) else float("nan"),
        }


def _one_value(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """A zero-stride row array (one value seen n times, e.g. a one-group threshold) as
    that 0-d value: the widening then broadcasts it instead of reading n copies."""
    return a[:1].reshape(()) if a.ndim == 1 and a.size and a.strides == (0,) else a


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
    # min > 0 and max < inf (two reductions, no temporaries) hold iff every T is a
    # finite positive number: NaN fails the min.
    if t.size and ANSWERED not in table.checked and not (t.min() > 0 and t.max() < np.inf):
        bad = int(np.flatnonzero(~(np.isfinite(t) & (t > 0)))[0])
        raise ValueError(f"{table.where(bad)}: video duration unknown or not positive")
    lam_in = _one_value(np.asarray(lam, dtype=np.float64))
    lam_end_in = None if lam_end is None else _one_value(np.asarray(lam_end, dtype=np.float64))
    for name, a in (("lam", lam_in), ("lam_end", lam_end_in)):
        if a is not None and a.ndim and a.shape not in ((n,), (1,)):  # numpy's words else
            raise ValueError(f"{name} has shape {a.shape}; expected one threshold or {n} "
                             "(one per row)")
    if np.isnan(lam_in).any() or (lam_end_in is not None and np.isnan(lam_end_in).any()):
        raise ValueError("threshold lam is NaN")
    if lam_end_in is not None and fam == "sls":
        raise ValueError("per-boundary thresholds apply to interval families, not sls")
    # A scalar threshold stays one value seen n times (a read-only view, no n-length copy).
    lam_a = np.broadcast_to(lam_in, (n,)) if lam_in.ndim == 0 else np.broadcast_to(
        lam_in, (n,)).copy()
    lam_e = None if lam_end_in is None else np.broadcast_to(lam_end_in, (n,)).copy()
    if fam in ("norm", "sec") and lam_end_in is None and lam_in.ndim == 0 and np.isfinite(
            lam_in):
        iv, refused = widen_blocks(table, fam, float(lam_in), min_scale)
        return Regions(iv, t, refused, lam_a, fam, alpha, lam_e)
    refused = refused_for(table, fam)
    whole = np.isposinf(lam_in) if lam_end_in is None else (
        np.isposinf(lam_in) & np.isposinf(lam_end_in))
    # One threshold that is finite: the refusals alone are whole videos (no copy).
    mask = refused if whole.ndim == 0 and not whole else refused | whole
    if fam == "sls":
        iv = with_whole_video(superlevel(table.relevance, table.clip, lam_a, t), mask, t)
    else:
        # SEC's scale is 1 everywhere: a scalar, not an n-length array of ones (x*1 == x).
        l_s, l_e = (1.0, 1.0) if fam == "sec" else side_scales(table, fam, min_scale,
                                                                 with_floored=False)[:2]
        # NORM's l is a fresh array here (interval_scale), both sides' the same one.
        lo, hi = widened_bounds(table.pred_start, table.pred_end, l_s, lam_in, t,
                                lam_end=lam_end_in, scale_end=None if l_e is l_s else l_e,
                                scale_is_scratch=fam == "norm")
        # The whole-video rows are [0, T] whatever the widening gave (with_whole_video).
        if mask.any():
            lo[mask] = 0.0
            hi[mask] = t[mask]
        iv = bounds_to_intervals(lo, hi, t)
    return Regions(iv, t, refused, lam_a, fam, alpha, lam_e)
