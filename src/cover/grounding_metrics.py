"""The field's point metrics of a grounder: R1@IoU, mIoU and mAP, as papers report them.

Definitions follow Moment-DETR's ``standalone_eval/eval.py`` (the QVHighlights
evaluation that Lighthouse, QD-DETR, EaTR, UniVTG, LA-DETR and others reuse), so the
numbers can be put next to a paper's:

* **top-1 window**: the highest-scoring predicted window (ties: the first listed).
  eval.py takes the *first listed* one, as files list windows by score; a file that
  does not is ranked by score first (:func:`cover.window_matching.rank_by_score`),
  counted in ``rows_reordered_by_score``.
* **IoU of a row**: IoU of the top-1 window with the truth window that overlaps it
  most (``inter / (max(e) - min(s))``, 0 when that span is 0); no clipping to
  ``[0, T]``. **R1@t** = percent of rows with IoU >= t (t in 0.3, 0.5, 0.7);
  **mIoU** = mean IoU in percent.
* **mAP**: per row, the 10 highest-scoring windows (ties keep list order; eval.py:
  the first 10 listed, then ranked), matched greedily to the truth windows at each
  IoU threshold 0.5:0.05:0.95 (a window takes the unmatched truth window it overlaps most, if
  that IoU reaches the threshold); AP is the VOC 2011 interpolated area under the
  precision/recall curve, recall counting every truth window. mAP = mean AP over
  rows and thresholds, in percent.
* **length buckets**: short (0, 10], middle (10, 30], long (30, 150] seconds; a
  bucket keeps the truth windows whose length lies in it and the rows with at least
  one such window ("full" keeps everything).

A row with no predicted window (a refusal) scores IoU 0 and AP 0; eval.py has no
such rows. Highlight detection (HL-mAP, HIT@1) is :mod:`cover.highlight_metrics`,
reported here when the truth carries QVHighlights' saliency labels. COVER's own
``point_iou`` (:func:`cover.metrics.point_iou`) takes the same window but clips it
to ``[0, T]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.table import GroundingTable
from cover.grounding_rows import AP_BLOCK_ROWS, LENGTH_BUCKETS, GroundingRows, PointRows
from cover.highlight_metrics import HighlightMetrics, HighlightSums
from cover.metric_sums import ChunkedSum
from cover.window_matching import MAP_THRESHOLDS, MAP_TOP_K

#: IoU thresholds of R1 (Recall@1) reported by the field.
R1_THRESHOLDS: tuple[float, ...] = (0.3, 0.5, 0.7)


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
    #: Rows whose windows the file did not list in score order (ranked before scoring).
    n_reordered: int = 0

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
                "rows_reordered_by_score": self.n_reordered,
                "units": "percent", "definition": "Moment-DETR standalone_eval"}


class PointSums:
    """Sums behind one :class:`PointMetrics` (rows, R1 hits, IoU and AP sums), added a
    batch of rows at a time; the same bits for any batching (:mod:`cover.metric_sums`)."""

    def __init__(self) -> None:
        self.hits = dict.fromkeys(R1_THRESHOLDS, 0)
        self.iou, self.ap = ChunkedSum(), ChunkedSum()

    def add_values(self, iou: NDArray[np.float64], ap: NDArray[np.float64]) -> None:
        """Add rows by their top-1 IoU and AP per threshold, in this order."""
        for t in R1_THRESHOLDS:
            self.hits[t] += int(np.count_nonzero(iou >= t))
        self.iou.add(iou)
        self.ap.add(ap)

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
    """:func:`grounding_metrics` over row batches: add labelled tables (or taken rows of
    one table's :class:`GroundingRows`), then finish."""

    def __init__(self) -> None:
        self.full = PointSums()
        self.buckets = {name: PointSums() for name in LENGTH_BUCKETS}
        self.n_refused = 0
        self.n_reordered = 0
        self.highlight = HighlightSums()

    def add(self, table: GroundingTable) -> NDArray[np.float64]:
        """Add the rows of ``table``, :data:`AP_BLOCK_ROWS` at a time (the per-row values
        of one block held at once, whatever the table's size); returns their top-1 IoU
        (all rows)."""
        n = len(table)
        if n <= AP_BLOCK_ROWS:
            return self.add_rows(GroundingRows.of(table))
        return np.concatenate([
            self.add_rows(GroundingRows.of(table.take(np.arange(a, min(a + AP_BLOCK_ROWS, n)))))
            for a in range(0, n, AP_BLOCK_ROWS)])

    def add_rows(self, values: GroundingRows, rows: NDArray[np.int64] | None = None
                 ) -> NDArray[np.float64]:
        """Add ``rows`` of the table behind ``values`` (all, when None) in the order
        given, as :meth:`add` of ``table.take(rows)`` would; returns their top-1 IoU."""
        rows = np.arange(values.n) if rows is None else np.asarray(rows, dtype=np.int64)
        iou = values.full.iou[rows]
        self.full.add_values(iou, values.full.ap[rows])
        for name, b in values.buckets.items():
            kept = rows[b.member[rows]]
            self.buckets[name].add_values(b.iou[kept], b.ap[kept])
        self.n_refused += int(np.count_nonzero(values.refused[rows]))
        self.n_reordered += int(np.count_nonzero(values.reordered[rows]))
        kept = rows[values.highlight[rows]]
        if kept.size:
            self.highlight.add_values({k: v[kept] for k, v in values.hit1.items()},
                                      {k: v[kept] for k, v in values.hl_ap.items()})
        return iou

    def finish(self, iou: NDArray[np.float64] | None = None) -> GroundingMetrics:
        return GroundingMetrics(
            full=self.full.finish(),
            buckets={name: b.finish() for name, b in self.buckets.items()},
            n_refused=self.n_refused, iou=np.zeros(0) if iou is None else iou,
            highlight=self.highlight.finish(), n_reordered=self.n_reordered)


def grounding_metrics(table: GroundingTable) -> GroundingMetrics:
    """R1@{0.3,0.5,0.7}, mIoU and mAP@[0.5:0.05:0.95] (top 10 windows) of a labelled
    table, overall and per truth-length bucket, and HL-mAP / HIT@1 where the truth has
    highlight labels, as Moment-DETR's eval.py defines them (see the module
    docstring). Values are percentages."""
    sums = GroundingSums()
    iou = sums.add(table)
    return sums.finish(iou)


__all__ = ["AP_BLOCK_ROWS", "LENGTH_BUCKETS", "MAP_THRESHOLDS", "MAP_TOP_K", "R1_THRESHOLDS",
           "GroundingMetrics", "GroundingRows", "GroundingSums", "PointMetrics", "PointRows",
           "PointSums", "grounding_metrics"]
