"""Interval widening, the NORM / SEC / SIGMA region family:
``C_lam = [s_hat - lam_s*l_s, e_hat + lam_e*l_e] ∩ [0, T]`` (paper Eq. 2), with the
rounding rule for a region pushed past a single point (:data:`CONTAINMENT_ATOL`).

The arithmetic of :mod:`cover.regions` for the interval families: whole columns
(:func:`widened_bounds`), and one finite threshold over cache-sized blocks
(:func:`widen_blocks`, the same values).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.data.rules import BLOCK_ROWS
from cover.data.table import ANSWERED, GroundingTable
from cover.intervals import CONTAINMENT_ATOL, Intervals, from_flat
from cover.scores import Family, answered_block


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
    return bounds_to_intervals(lo, hi, duration)


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


def bounds_to_intervals(lo: NDArray[np.float64], hi: NDArray[np.float64],
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


def widen_blocks(table: GroundingTable, fam: Family, lam: float, min_scale: float
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
    fin, flag = np.empty(width, dtype=bool), np.empty(width, dtype=bool)
    # Every row answered inside [0, T] and lam >= 0: s_hat - lam*l <= s_hat <= e_hat <=
    # e_hat + lam*l, so lo <= hi on every row without a test (and no refusal to set).
    answered = ANSWERED in table.checked
    kept = True
    with np.errstate(invalid="ignore"):
        for i in range(0, n, BLOCK_ROWS):
            b = slice(i, i + BLOCK_ROWS)
            p0, p1, d = ps[b], pe[b], t[b]
            m = p0.size
            ok = None if answered else answered_block(p0, p1, fin[:m], flag[:m], refused[b])
            if fam == "norm":  # shift = max(e_hat - s_hat, min_scale) * lam
                # The shift is made in hi's own rows and hi = shift + e_hat in place:
                # one operand fewer to stream than a scratch array (same values).
                sh = np.subtract(p1, p0, out=hi[b])
                np.maximum(sh, min_scale, out=sh)
                sh *= lam
                x = np.subtract(p0, sh, out=lo[b])
                y = np.add(sh, p1, out=sh)
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
    return (Intervals.single(lo, hi) if kept else bounds_to_intervals(lo, hi, t)), refused
