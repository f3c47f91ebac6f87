"""The field's point metrics of a grounder: R1@IoU, mIoU and mAP, as papers report them.

Definitions follow Moment-DETR's ``standalone_eval/eval.py`` (the QVHighlights
evaluation that Lighthouse, QD-DETR, EaTR, UniVTG, LA-DETR and others reuse), so the
numbers can be put next to a paper's:

* **top-1 window**: the *first listed* predicted window (files list them by score).
* **IoU of a row**: IoU of the top-1 window with the truth window that overlaps it
  most (``inter / (max(e) - min(s))``, 0 when that span is 0); no clipping to
  ``[0, T]``. **R1@t** = percent of rows with IoU >= t (t in 0.3, 0.5, 0.7);
  **mIoU** = mean IoU in percent.
* **mAP**: per row, the first 10 listed windows, ranked by score (ties keep list
  order), matched greedily to the truth windows at each IoU threshold
  0.5:0.05:0.95 (a window takes the unmatched truth window it overlaps most, if
  that IoU reaches the threshold); AP is the VOC 2011 interpolated area under the
  precision/recall curve, recall counting every truth window. mAP = mean AP over
  rows and thresholds, in percent.
* **length buckets**: short (0, 10], middle (10, 30], long (30, 150] seconds; a
  bucket keeps the truth windows whose length lies in it and the rows with at least
  one such window ("full" keeps everything).

A row with no predicted window (a refusal) scores IoU 0 and AP 0; eval.py has no
such rows. Highlight detection (HL-mAP, HIT@1) is :mod:`cover.highlight_metrics`,
reported here when the truth carries QVHighlights' saliency labels. COVER's own
``point_iou`` (:func:`cover.metrics.point_iou`) differs in two ways: it uses the
highest-*scoring* window and clips it to ``[0, T]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.table import GroundingTable
from cover.highlight_metrics import HighlightMetrics, HighlightSums
from cover.metric_sums import ChunkedSum
from cover.ragged import Ragged

#: IoU thresholds of R1 (Recall@1) reported by the field.
R1_THRESHOLDS: tuple[float, ...] = (0.3, 0.5, 0.7)
#: IoU thresholds averaged by mAP: 0.5, 0.55, ..., 0.95.
MAP_THRESHOLDS: tuple[float, ...] = tuple(round(0.5 + 0.05 * i, 2) for i in range(10))
#: Windows per row that mAP looks at (in list order).
MAP_TOP_K = 10
#: Rows per block in :class:`GroundingSums` (bounds the mAP temporaries; any block size
#: gives the same numbers).
AP_BLOCK_ROWS = 4096
#: Truth-window length buckets ``(lo, hi]`` in seconds, as in eval.py.
LENGTH_BUCKETS: dict[str, tuple[float, float]] = {
    "short": (0.0, 10.0), "middle": (10.0, 30.0), "long": (30.0, 150.0)}


@dataclass(frozen=True)
class PointMetrics:
    """R1, mIoU and mAP over one set of rows, in percent (NaN when ``n == 0``)."""

    n: int
    r1: dict[float, float]
    miou: float
    map_at: dict[float, float]
    map: float

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n": self.n}
        out |= {f"R1@{t:g}": v for t, v in self.r1.items()}
        out["mIoU"] = self.miou
        out["mAP"] = self.map
        out |= {f"mAP@{t:g}": v for t, v in self.map_at.items()}
        return out


@dataclass(frozen=True)
class GroundingMetrics:
    """The field's metrics on all rows (``full``) and per truth-length bucket."""

    full: PointMetrics
    buckets: dict[str, PointMetrics]
    n_refused: int
    iou: NDArray[np.float64] = field(repr=False, compare=False)
    #: HL-mAP / HIT@1, when the truth has highlight labels and rows a saliency.
    highlight: HighlightMetrics | None = None

    def r1_at(self, t: float) -> float:
        return self.full.r1[t]

    @property
    def miou(self) -> float:
        return self.full.miou

    @property
    def map(self) -> float:
        return self.full.map

    def to_dict(self) -> dict[str, Any]:
        hl = {} if self.highlight is None else {"highlight": self.highlight.to_dict()}
        return {"full": self.full.to_dict(),
                **{name: m.to_dict() for name, m in self.buckets.items()}, **hl,
                "rows_without_prediction": self.n_refused,
                "units": "percent", "definition": "Moment-DETR standalone_eval"}


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
def _dense(offsets: NDArray[np.int64], width: int | None = None) -> tuple[
        NDArray[np.int64], NDArray[np.bool_]]:
    """``(index, valid)`` of shape ``(n, width)``: flat index of the j-th element of
    each row (clamped where the row is shorter) and whether it exists."""
    lengths = np.diff(offsets)
    w = int(lengths.max(initial=0)) if width is None else width
    j = np.arange(w)
    valid = j[None, :] < lengths[:, None]
    idx = np.where(valid, offsets[:-1, None] + j[None, :], 0)
    return idx, valid


def _windows_of(table: GroundingTable) -> Ragged:
    """The predicted windows ``(start, end, score)``; a table without the column uses
    its top-1 interval as the only window."""
    if table.pred_windows is not None:
        return table.pred_windows
    has = table.has_interval
    vals = np.column_stack([table.pred_start[has], table.pred_end[has],
                            np.ones(int(has.sum()))])
    return Ragged(vals, np.r_[0, np.cumsum(has)].astype(np.int64))


# ---- the metrics --------------------------------------------------------------------
def _top1_iou(win: Ragged, ts: NDArray[np.float64], te: NDArray[np.float64],
              toff: NDArray[np.int64]) -> NDArray[np.float64]:
    """IoU of the first listed window with the truth window of highest IoU (first on
    ties), 0 for rows without a window."""
    n = toff.size - 1
    has = np.diff(win.offsets) > 0
    first = np.zeros((n, 3))
    first[has] = win.values[win.offsets[:-1][has]]
    gidx, gvalid = _dense(toff)
    if gidx.shape[1] == 0:
        return np.zeros(n)
    gs, ge = ts[gidx], te[gidx]
    ious = cross_iou(first[:, :1], first[:, 1:2], gs, ge)
    best = np.argmax(np.where(gvalid, ious, -np.inf), axis=1)
    k = gidx[np.arange(n), best]
    iou = paired_iou(first[:, 0], first[:, 1], ts[k], te[k])
    return np.where(has & (np.diff(toff) > 0), iou, 0.0)


def _average_precision(win: Ragged, ts: NDArray[np.float64], te: NDArray[np.float64],
                       toff: NDArray[np.int64]) -> NDArray[np.float64]:
    """AP per row and threshold, shape ``(n, len(MAP_THRESHOLDS))`` (see module doc)."""
    n = toff.size - 1
    thr = np.asarray(MAP_THRESHOLDS)
    pidx, pvalid = _dense(win.offsets, MAP_TOP_K)
    vals = win.values if win.values.shape[0] else np.zeros((1, 3))
    ps, pe, sc = vals[pidx, 0], vals[pidx, 1], vals[pidx, 2]
    # Rank by score, ties in list order; missing windows go last.
    order = np.argsort(np.where(pvalid, -sc, np.inf), axis=1, kind="stable")
    ps, pe = np.take_along_axis(ps, order, 1), np.take_along_axis(pe, order, 1)
    pvalid = np.take_along_axis(pvalid, order, 1)
    gidx, gvalid = _dense(toff)
    g = gidx.shape[1]
    gs, ge = (ts[gidx], te[gidx]) if ts.size else (np.zeros((n, g)), np.zeros((n, g)))
    ious = cross_iou(ps[:, :, None], pe[:, :, None], gs[:, None, :], ge[:, None, :])
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
        j = g - 1 - np.argmax(masked, axis=2) if g else np.zeros((n, thr.size), np.int64)
        hit = cand.any(axis=2) & pvalid[:, k, None]
        tp[:, :, k] = hit
        fp[:, :, k] = pvalid[:, k, None] & ~hit
        locked[rows, cols, j] |= hit
    tpc, fpc = np.cumsum(tp, axis=2), np.cumsum(fp, axis=2)
    n_truth = np.diff(toff).astype(np.float64)[:, None, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = tpc / (tpc + fpc)
        recall = tpc / n_truth
    zeros, ones = np.zeros((n, thr.size, 1)), np.ones((n, thr.size, 1))
    mprec = np.concatenate([zeros, precision, zeros], axis=2)
    mrec = np.concatenate([zeros, recall, ones], axis=2)
    envelope = np.maximum.accumulate(mprec[:, :, ::-1], axis=2)[:, :, ::-1]
    ap = np.sum(np.diff(mrec, axis=2) * envelope[:, :, 1:], axis=2)
    ok = pvalid.any(axis=1) & (np.diff(toff) > 0)
    return np.where(ok[:, None], np.nan_to_num(ap, nan=0.0), 0.0)


class PointSums:
    """Sums behind one :class:`PointMetrics` (rows, R1 hits, IoU and AP sums), added a
    batch of rows at a time; the same bits for any batching (:mod:`cover.metric_sums`)."""

    def __init__(self) -> None:
        self.hits = dict.fromkeys(R1_THRESHOLDS, 0)
        self.iou, self.ap = ChunkedSum(), ChunkedSum()

    def add(self, win: Ragged, ts: NDArray[np.float64], te: NDArray[np.float64],
            toff: NDArray[np.int64]) -> NDArray[np.float64]:
        """Add the rows (``win`` and the truth windows ``ts, te`` by ``toff``); returns
        their IoU."""
        if toff.size <= 1:
            return np.zeros(0)
        iou = _top1_iou(win, ts, te, toff)
        for t in R1_THRESHOLDS:
            self.hits[t] += int(np.count_nonzero(iou >= t))
        self.iou.add(iou)
        self.ap.add(_average_precision(win, ts, te, toff))
        return iou

    def finish(self) -> PointMetrics:
        n = self.iou.n
        if n == 0:
            nan = float("nan")
            return PointMetrics(0, dict.fromkeys(R1_THRESHOLDS, nan), nan,
                                dict.fromkeys(MAP_THRESHOLDS, nan), nan)
        ap = self.ap.mean()
        return PointMetrics(
            n=n,
            r1={t: 100.0 * (self.hits[t] / n) for t in R1_THRESHOLDS},
            miou=100.0 * self.iou.mean(),
            map_at={t: 100.0 * float(a) for t, a in zip(MAP_THRESHOLDS, ap, strict=True)},
            map=100.0 * float(ap.mean()),
        )


class GroundingSums:
    """:func:`grounding_metrics` over row batches: add labelled tables, then finish."""

    def __init__(self) -> None:
        self.full = PointSums()
        self.buckets = {name: PointSums() for name in LENGTH_BUCKETS}
        self.n_refused = 0
        self.highlight = HighlightSums()

    def add(self, table: GroundingTable) -> NDArray[np.float64]:
        """Add the rows of ``table``; returns their top-1 IoU (all rows). Rows go through
        in blocks of :data:`AP_BLOCK_ROWS`: mAP's temporaries are ~1 KB per row."""
        if len(table) > AP_BLOCK_ROWS:
            return np.concatenate([
                self.add(table.take(np.arange(a, min(a + AP_BLOCK_ROWS, len(table)))))
                for a in range(0, len(table), AP_BLOCK_ROWS)])
        truth = table.require_truth()
        self.highlight.add(table)
        win = _windows_of(table)
        iou = self.full.add(win, truth.starts, truth.ends, truth.offsets)
        length = truth.ends - truth.starts
        r = truth.rows
        for name, (lo, hi) in LENGTH_BUCKETS.items():
            keep = (length > lo) & (length <= hi)
            rows = np.unique(r[keep])
            # Renumber the kept truth windows onto the kept rows.
            new_row = np.searchsorted(rows, r[keep])
            toff = np.zeros(rows.size + 1, dtype=np.int64)
            np.cumsum(np.bincount(new_row, minlength=rows.size), out=toff[1:])
            self.buckets[name].add(win.take(rows), truth.starts[keep], truth.ends[keep], toff)
        self.n_refused += int(np.sum(np.diff(win.offsets) == 0))
        return iou

    def finish(self, iou: NDArray[np.float64] | None = None) -> GroundingMetrics:
        return GroundingMetrics(
            full=self.full.finish(),
            buckets={name: b.finish() for name, b in self.buckets.items()},
            n_refused=self.n_refused, iou=np.zeros(0) if iou is None else iou,
            highlight=self.highlight.finish())


def grounding_metrics(table: GroundingTable) -> GroundingMetrics:
    """R1@{0.3,0.5,0.7}, mIoU and mAP@[0.5:0.05:0.95] (top 10 windows) of a labelled
    table, overall and per truth-length bucket, and HL-mAP / HIT@1 where the truth has
    highlight labels, as Moment-DETR's eval.py defines them (see the module
    docstring). Values are percentages."""
    sums = GroundingSums()
    iou = sums.add(table)
    return sums.finish(iou)


__all__ = ["LENGTH_BUCKETS", "MAP_THRESHOLDS", "MAP_TOP_K", "R1_THRESHOLDS",
           "GroundingMetrics", "GroundingSums", "PointMetrics", "PointSums",
           "grounding_metrics"]
