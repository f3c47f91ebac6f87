"""Certified regions: the nested families ``C_lam`` of each score, clipped to ``[0, T]``.

* Interval widening (NORM, SEC, SIGMA): ``C_lam = [s_hat - lam*l, e_hat + lam*l] ∩ [0, T]``;
  per-boundary rules give each side its own ``lam`` and SIGMA each side its own ``l``:
  ``[s_hat - lam_s*l_s, e_hat + lam_e*l_e] ∩ [0, T]``.
* Super-level set (SLS): ``C_lam = {t : f(t) >= -lam}``, clips merged into maximal intervals.
* Refusal policy: a row with no usable prediction gets ``[0, T]`` for every ``lam``;
  so does every row when ``lam = +inf`` (a calibration set too small for the level).

``lam`` may be a scalar or one value per row (per-group thresholds). A row is the
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

from cover.data.rules import BLOCK_ROWS
from cover.data.table import ANSWERED, GroundingTable
from cover.intervals import CONTAINMENT_ATOL, Intervals, from_flat
from cover.ragged import Ragged, offsets_from_lengths, row_ids
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
    lo, hi = widened_bounds(pred_start, pred_end, scale, lam, duration, lam_end=lam_end,
                            scale_end=scale_end)
    return _bounds_to_intervals(lo, hi, duration)


def widened_bounds(
    pred_start: NDArray[np.float64],
    pred_end: NDArray[np.float64],
    scale: NDArray[np.float64] | float,
    lam: ArrayLike,
    duration: NDArray[np.float64],
    *,
    lam_end: ArrayLike | None = None,
    scale_end: NDArray[np.float64] | float | None = None,
    scale_is_scratch: bool = False,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``lo = max(s_hat - lam*l, 0)``, ``hi = min(e_hat + lam_e*l_e, T)`` per row (fresh
    arrays, computed in place: two temporaries in all). ``scale_is_scratch``: the
    caller's ``scale`` array may be overwritten (one allocation less)."""
    lam_a = np.asarray(lam, dtype=np.float64)
    if lam_end is None and scale_end is None and lam_a.ndim == 0 and np.ndim(scale) == 1:
        # Both sides move by the same lam * l: one product serves both (one array less).
        with np.errstate(invalid="ignore"):
            sc = np.asarray(scale, dtype=np.float64)  # the same array, typed
            shift = np.multiply(sc, float(lam_a), out=sc if scale_is_scratch else None)
            lo = np.subtract(pred_start, shift)
            np.maximum(lo, 0.0, out=lo)
            hi = np.add(pred_end, shift, out=shift)
            np.minimum(hi, duration, out=hi)
        return lo, hi
    lam_e = lam_a if lam_end is None else np.asarray(lam_end, dtype=np.float64)
    scale_e = scale if scale_end is None else scale_end
    with np.errstate(invalid="ignore"):
        lo = _shifted(pred_start, np.subtract, lam_a, scale)
        np.maximum(lo, 0.0, out=lo)
        hi = _shifted(pred_end, np.add, lam_e, scale_e)
        np.minimum(hi, duration, out=hi)
    return lo, hi


def _shifted(x: NDArray[np.float64], op: np.ufunc, lam: NDArray[np.float64],
             scale: NDArray[np.float64] | float) -> NDArray[np.float64]:
    """``op(x, lam * scale)`` in a fresh array: one pass when both are single values
    (SEC, one group), two otherwise."""
    if lam.ndim == 0 and np.ndim(scale) == 0:
        return op(x, float(lam) * float(scale))
    out = np.multiply(lam, scale, out=np.empty(x.shape))
    return op(x, out, out=out)


def _bounds_to_intervals(lo: NDArray[np.float64], hi: NDArray[np.float64],
                         duration: NDArray[np.float64]) -> Intervals:
    """Rows with ``lo <= hi`` keep ``[lo, hi]``; a row that rounding pushed past a single
    point (``0 < lo - hi <= CONTAINMENT_ATOL``) becomes ``clip((lo + hi)/2, 0, T)``; the
    others are empty. Updates ``lo``/``hi`` in place."""
    with np.errstate(invalid="ignore"):
        keep = lo <= hi
        if keep.all():
            return Intervals.single(lo, hi)
        # Only the rows that did not keep can be points: work on that subset.
        bad = np.flatnonzero(~keep)
        lo_b, hi_b = lo[bad], hi[bad]
        point = (lo_b > hi_b) & (lo_b - hi_b <= CONTAINMENT_ATOL)
    if point.any():
        at = bad[point]
        mid = np.clip(0.5 * (lo_b[point] + hi_b[point]), 0.0, duration[at])
        lo[at] = mid
        hi[at] = mid
        keep[at] = True
        if keep.all():
            return Intervals.single(lo, hi)
    rows = np.flatnonzero(keep)
    return from_flat(lo[rows], hi[rows], rows, lo.size)


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


def _widen_blocks(table: GroundingTable, fam: Family, lam: float, min_scale: float
                  ) -> tuple[Intervals, NDArray[np.bool_]]:
    """NORM / SEC regions at one finite ``lam`` and the refusals, block by block
    (:data:`~cover.data.rules.BLOCK_ROWS`): the same arithmetic as
    :func:`widened_bounds` (identical values), refusals set to ``[0, T]``, with the
    scale and the masks in cache-sized scratch arrays."""
    if fam == "norm" and not min_scale > 0:
        raise ValueError(f"min_scale must be > 0, got {min_scale}")
    n = len(table)
    ps, pe, t = table.pred_start, table.pred_end, table.duration
    lo, hi, refused = np.empty(n), np.empty(n), np.zeros(n, dtype=bool)
    width = min(n, BLOCK_ROWS)
    shift, fin, flag = np.empty(width), np.empty(width, dtype=bool), np.empty(width, dtype=bool)
    # Every row answered inside [0, T] and lam >= 0: s_hat - lam*l <= s_hat <= e_hat <=
    # e_hat + lam*l, so lo <= hi on every row without a test (and no refusal to set).
    answered = ANSWERED in table.checked
    kept = True
    with np.errstate(invalid="ignore"):
        for i in range(0, n, BLOCK_ROWS):
            b = slice(i, i + BLOCK_ROWS)
            p0, p1, d = ps[b], pe[b], t[b]
            m = p0.size
            ok = None
            if not answered:
                ok = np.isfinite(p0, out=fin[:m])
                ok &= np.isfinite(p1, out=flag[:m])
                np.logical_not(ok, out=refused[b])
            if fam == "norm":  # shift = max(e_hat - s_hat, min_scale) * lam
                sh = np.subtract(p1, p0, out=shift[:m])
                np.maximum(sh, min_scale, out=sh)
                sh *= lam
                x = np.subtract(p0, sh, out=lo[b])
                y = np.add(p1, sh, out=hi[b])
            else:  # SEC: the scale is 1
                x = np.subtract(p0, lam * 1.0, out=lo[b])
                y = np.add(p1, lam * 1.0, out=hi[b])
            np.maximum(x, 0.0, out=x)
            np.minimum(y, d, out=y)
            if ok is not None and not ok.all():  # refusals are the whole video
                x[~ok] = 0.0
                y[~ok] = d[~ok]
            if kept and not (answered and lam >= 0):
                kept = bool(np.less_equal(x, y, out=flag[:m]).all())
    return (Intervals.single(lo, hi) if kept else _bounds_to_intervals(lo, hi, t)), refused


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
        iv, refused = _widen_blocks(table, fam, float(lam_in), min_scale)
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
        iv = _bounds_to_intervals(lo, hi, t)
    return Regions(iv, t, refused, lam_a, fam, alpha, lam_e)
