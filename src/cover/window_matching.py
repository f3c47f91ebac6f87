"""Matching predicted windows to truth windows, as Moment-DETR's ``standalone_eval``
does: the two IoU forms, top-1 IoU and per-row average precision, vectorised over rows
(ragged windows as values + offsets: top-1 IoU along each row's own windows, AP on dense
``(rows, windows)`` views of rows grouped by their number of truth windows).

The definitions are stated in :mod:`cover.grounding_metrics`, which sums these per-row
values into the field's R1, mIoU and mAP.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from cover.ragged import Ragged, row_ids, segment_max, segment_min

#: IoU thresholds averaged by mAP: 0.5, 0.55, ..., 0.95.
MAP_THRESHOLDS: tuple[float, ...] = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))
#: Windows per row that mAP looks at (the first ten once ranked by score).
MAP_TOP_K = 10


# ---- IoU ----------------------------------------------------------------------------
def paired_iou(s1: NDArray[np.float64], e1: NDArray[np.float64], s2: NDArray[np.float64],
               e2: NDArray[np.float64]) -> NDArray[np.float64]:
    """``max(0, min(e) - max(s)) / (max(e) - min(s))`` elementwise; 0 where the span is 0."""
    inter = np.maximum(0.0, np.minimum(e1, e2) - np.maximum(s1, s2))
    span = np.maximum(e1, e2) - np.minimum(s1, s2)
    return np.divide(inter, span, out=np.zeros_like(inter), where=span != 0)


def cross_iou(s1: NDArray[np.float64], e1: NDArray[np.float64], s2: NDArray[np.float64],
              e2: NDArray[np.float64]) -> NDArray[np.float64]:
    """``inter / (len1 + len2 - inter)`` elementwise (broadcasting), the form eval.py
    uses for matching; 0 where the union is 0."""
    inter = np.maximum(0.0, np.minimum(e1, e2) - np.maximum(s1, s2))
    union = (e1 - s1) + (e2 - s2) - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union != 0)


# ---- dense views of ragged rows -----------------------------------------------------
def dense_index(offsets: NDArray[np.int64], width: int | None = None) -> tuple[
        NDArray[np.int64], NDArray[np.bool_]]:
    """``(index, valid)`` of shape ``(n, width)``: flat index of the j-th element of
    each row (clamped where the row is shorter) and whether it exists."""
    lengths = np.diff(offsets)
    w = int(lengths.max(initial=0)) if width is None else width
    j = np.arange(w)
    valid = j[None, :] < lengths[:, None]
    idx = np.where(valid, offsets[:-1, None] + j[None, :], 0)
    return idx, valid


# ---- the metrics --------------------------------------------------------------------
def top1_iou(win: Ragged, ts: NDArray[np.float64], te: NDArray[np.float64],
              toff: NDArray[np.int64]) -> NDArray[np.float64]:
    """IoU of the first listed window with the truth window of highest IoU (first on
    ties), 0 for rows without a window. One IoU per truth window, each row's best found
    along its own windows: a row of many windows widens no other row's work."""
    n = toff.size - 1
    has = np.diff(win.offsets) > 0
    first = np.zeros((n, 3))
    first[has] = win.values[win.offsets[:-1][has]]
    if int(toff[-1]) == 0:
        return np.zeros(n)
    r = row_ids(toff)  # the row of every truth window
    ious = cross_iou(first[r, 0], first[r, 1], ts[: toff[-1]], te[: toff[-1]])
    best = segment_max(ious, toff)
    # the first window of each row reaching its best: the least flat index that does
    at = np.where(ious == best[r], np.arange(ious.size), ious.size)
    k = np.minimum(segment_min(at, toff, empty=0), ious.size - 1).astype(np.int64)
    iou = paired_iou(first[:, 0], first[:, 1], ts[k], te[k])
    return np.where(has & (np.diff(toff) > 0), iou, 0.0)


def average_precision(win: Ragged, ts: NDArray[np.float64], te: NDArray[np.float64],
                       toff: NDArray[np.int64]) -> NDArray[np.float64]:
    """AP per row and threshold, shape ``(n, len(MAP_THRESHOLDS))`` (see module doc)."""
    n = toff.size - 1
    thr = np.asarray(MAP_THRESHOLDS)
    pidx, pvalid = dense_index(win.offsets, MAP_TOP_K)
    vals = win.values if win.values.shape[0] else np.zeros((1, 3))
    ps, pe, sc = vals[pidx, 0], vals[pidx, 1], vals[pidx, 2]
    # Rank by score, ties in list order; missing windows go last.
    order = np.argsort(np.where(pvalid, -sc, np.inf), axis=1, kind="stable")
    ps, pe = np.take_along_axis(ps, order, 1), np.take_along_axis(pe, order, 1)
    pvalid = np.take_along_axis(pvalid, order, 1)
    n_truth = np.diff(toff)
    ap = np.zeros((n, thr.size))
    # Rows grouped by their number of truth windows, up to the next power of two: each
    # group's IoUs are (rows, ranks, its widest row's windows), not padded to the
    # widest row of all (most rows have one or two windows, a few several dozens).
    width = np.where(n_truth > 1, 2 ** np.ceil(np.log2(np.maximum(n_truth, 1))), n_truth)
    for w in np.unique(width[n_truth > 0]).tolist():
        rows = np.flatnonzero(width == w)
        g = int(n_truth[rows].max())
        gvalid = np.arange(g) < n_truth[rows][:, None]
        gidx = np.where(gvalid, toff[rows][:, None] + np.arange(g), 0)
        ious = cross_iou(ps[rows, :, None], pe[rows, :, None], ts[gidx][:, None, :],
                         te[gidx][:, None, :])
        ap[rows] = (_ap_one_truth(ious[:, :, 0], pvalid[rows], thr) if g == 1 else
                    _ap_greedy(ious, gvalid, pvalid[rows], n_truth[rows], thr))
    return ap


def _ap_one_truth(iou: NDArray[np.float64], pvalid: NDArray[np.bool_],
                  thr: NDArray[np.float64]) -> NDArray[np.float64]:
    """AP of rows with one truth window, ``(n, thresholds)``: ``1 / (r + 1)`` where ``r``
    is the rank of the first window with IoU >= the threshold, 0 if none. With one truth
    window the greedy matching hits once, at ``r``, every window before it being a false
    positive: recall steps from 0 to 1 there, at precision ``1 / (r + 1)``, and the
    precisions after it only fall, so the envelope at that step is ``1 / (r + 1)``."""
    hit = (iou[:, None, :] >= thr[None, :, None]) & pvalid[:, None, :]
    first = np.argmax(hit, axis=2)
    return np.where(hit.any(axis=2), 1.0 / (first + 1.0), 0.0)


def _ap_greedy(ious: NDArray[np.float64], gvalid: NDArray[np.bool_],
               pvalid: NDArray[np.bool_], n_truth: NDArray[np.int64],
               thr: NDArray[np.float64]) -> NDArray[np.float64]:
    """AP of rows with several truth windows, ``(n, thresholds)``: eval.py's greedy
    matching (each window in rank order takes the unmatched truth window of highest IoU
    >= the threshold), then the area under the precision envelope over recall."""
    n, g = ious.shape[0], ious.shape[2]
    locked = np.zeros((n, thr.size, g), dtype=bool)
    tp = np.zeros((n, thr.size, MAP_TOP_K))
    fp = np.zeros((n, thr.size, MAP_TOP_K))
    rows = np.arange(n)[:, None]
    cols = np.arange(thr.size)[None, :]
    # Greedy matching is sequential in rank, so loop over the (at most 10) ranks and
    # vectorise over rows and thresholds.
    for k in range(MAP_TOP_K):
        iou_k = ious[:, k, :][:, None, :]
        cand = (iou_k >= thr[None, :, None]) & gvalid[:, None, :] & ~locked
        # eval.py walks truth windows by IoU descending (a reversed stable sort), so
        # among equal IoUs the last window wins.
        masked = np.where(cand, iou_k, -np.inf)[:, :, ::-1]
        j = g - 1 - np.argmax(masked, axis=2)
        hit = cand.any(axis=2) & pvalid[:, k, None]
        tp[:, :, k] = hit
        fp[:, :, k] = pvalid[:, k, None] & ~hit
        locked[rows, cols, j] |= hit
    tpc, fpc = np.cumsum(tp, axis=2), np.cumsum(fp, axis=2)
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = tpc / (tpc + fpc)
        recall = tpc / n_truth.astype(np.float64)[:, None, None]
    zeros, ones = np.zeros((n, thr.size, 1)), np.ones((n, thr.size, 1))
    mprec = np.concatenate([zeros, precision, zeros], axis=2)
    mrec = np.concatenate([zeros, recall, ones], axis=2)
    envelope = np.maximum.accumulate(mprec[:, :, ::-1], axis=2)[:, :, ::-1]
    ap = np.sum(np.diff(mrec, axis=2) * envelope[:, :, 1:], axis=2)
    ok = np.logical_or.reduce(pvalid, axis=1)
    return np.where(ok[:, None], np.nan_to_num(ap, nan=0.0), 0.0)


def rank_by_score(win: Ragged) -> tuple[Ragged, int]:
    """Each row's windows ``(start, end, score)`` in descending score order (a stable
    sort: ties keep list order), and how many rows that reordered.

    eval.py takes the first listed window as top-1 and the first ten for mAP, trusting
    files to list windows by score as Moment-DETR's inference writes them; a file that
    does not (LA-DETR's QVHighlights test submission) would be scored on arbitrary
    windows, so the order is restored first. Files in score order are left untouched.
    """
    ranked, reordered = rank_rows_by_score(win)
    return ranked, int(np.count_nonzero(reordered))


def rank_rows_by_score(win: Ragged) -> tuple[Ragged, NDArray[np.bool_]]:
    """:func:`rank_by_score` with, instead of the count, which rows it reordered."""
    v = win.values
    reordered = np.zeros(win.offsets.size - 1, dtype=bool)
    if v.shape[0] < 2:
        return win, reordered
    r = row_ids(win.offsets)
    rises = (r[1:] == r[:-1]) & (v[1:, 2] > v[:-1, 2])
    if not rises.any():
        return win, reordered
    order = np.lexsort((-v[:, 2], r))  # lexsort is stable: ties keep list order
    reordered[r[1:][rises]] = True
    return Ragged(v[order], win.offsets), reordered
