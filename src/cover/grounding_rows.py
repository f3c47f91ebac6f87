"""Per-row values behind the field's point metrics (:mod:`cover.grounding_metrics`).

Every number eval.py averages is a value of one row: its top-1 IoU and AP per IoU
threshold (over all its truth windows and over each length bucket's), whether it was
refused or reordered, and its HIT@1 and HL-AP. :class:`GroundingRows` holds them for
every row of a table, so the metrics of any subset of rows (a test split, one per split
seed) are sums of taken values, with the same bits as scoring that subset afresh: no
window is matched again.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import NDArray

from cover.data.table import GroundingTable
from cover.highlight_metrics import HL_LEVELS, highlight_rows
from cover.ragged import Ragged
from cover.window_matching import (
    MAP_THRESHOLDS,
    average_precision,
    rank_rows_by_score,
    top1_iou,
)

#: Rows worked out at a time (bounds the mAP temporaries; any block size gives the same
#: numbers).
AP_BLOCK_ROWS = 4096
#: Truth-window length buckets ``(lo, hi]`` in seconds, as in eval.py.
LENGTH_BUCKETS: dict[str, tuple[float, float]] = {
    "short": (0.0, 10.0), "middle": (10.0, 30.0), "long": (30.0, 150.0)}


def windows_of(table: GroundingTable) -> Ragged:
    """The predicted windows ``(start, end, score)``; a table without the column uses
    its top-1 interval as the only window."""
    if table.pred_windows is not None:
        return table.pred_windows
    has = table.has_interval
    vals = np.column_stack([table.pred_start[has], table.pred_end[has],
                            np.ones(int(has.sum()))])
    return Ragged(vals, np.r_[0, np.cumsum(has)].astype(np.int64))


@dataclass(frozen=True)
class PointRows:
    """Top-1 IoU and AP (``(n, len(MAP_THRESHOLDS))``) per row of a table for one set of
    rows (all rows, or one length bucket): ``member`` says which rows are in the set; the
    values of the others are 0."""

    member: NDArray[np.bool_]
    iou: NDArray[np.float64]
    ap: NDArray[np.float64]

    @classmethod
    def of(cls, n: int, rows: NDArray[np.int64], win: Ragged, ts: NDArray[np.float64],
           te: NDArray[np.float64], toff: NDArray[np.int64]) -> PointRows:
        """``n`` table rows of which ``rows`` (windows ``win``, truth windows ``ts, te``
        by ``toff``) are in the set."""
        member = np.zeros(n, dtype=bool)
        iou, ap = np.zeros(n), np.zeros((n, len(MAP_THRESHOLDS)))
        if rows.size:
            member[rows] = True
            iou[rows] = top1_iou(win, ts, te, toff)
            ap[rows] = average_precision(win, ts, te, toff)
        return cls(member, iou, ap)


@dataclass(frozen=True)
class GroundingRows:
    """Every per-row value behind :class:`cover.grounding_metrics.GroundingMetrics`, one
    entry per row of a table (see the module docstring); read them through
    :meth:`cover.grounding_metrics.GroundingSums.add_rows`."""

    full: PointRows
    buckets: dict[str, PointRows]
    refused: NDArray[np.bool_]
    #: Rows whose windows the file did not list in score order.
    reordered: NDArray[np.bool_]
    #: Rows counted by HL-mAP / HIT@1 (labels and a saliency), with their HIT@1 and the
    #: annotators' AP sum per level (0 on other rows).
    highlight: NDArray[np.bool_]
    hit1: dict[str, NDArray[np.bool_]]
    hl_ap: dict[str, NDArray[np.float64]]

    @property
    def n(self) -> int:
        return int(self.refused.size)

    @classmethod
    def of(cls, table: GroundingTable) -> GroundingRows:
        """The per-row values of a labelled table, worked out :data:`AP_BLOCK_ROWS` rows
        at a time (mAP's temporaries are ~1 KB per row)."""
        if len(table) > AP_BLOCK_ROWS:
            return cls.concat([cls.of(table.take(np.arange(a, min(a + AP_BLOCK_ROWS,
                                                                      len(table)))))
                               for a in range(0, len(table), AP_BLOCK_ROWS)])
        n = len(table)
        truth = table.require_truth()
        win, reordered = rank_rows_by_score(windows_of(table))
        full = PointRows.of(n, np.arange(n), win, truth.starts, truth.ends, truth.offsets)
        length = truth.ends - truth.starts
        r, n_truth = truth.rows, np.diff(truth.offsets)
        buckets = {}
        for name, (lo, hi) in LENGTH_BUCKETS.items():
            keep = (length > lo) & (length <= hi)
            count = np.bincount(r[keep], minlength=n)
            # A row whose every truth window is in the bucket is matched as in ``full``:
            # its values are copied, and only the rows the bucket splits are matched.
            whole = (count == n_truth) & (count > 0)
            keep &= ~whole[r]
            rows = np.flatnonzero(count * ~whole)
            # Renumber the kept truth windows onto the kept rows.
            new_row = np.searchsorted(rows, r[keep])
            toff = np.zeros(rows.size + 1, dtype=np.int64)
            np.cumsum(np.bincount(new_row, minlength=rows.size), out=toff[1:])
            part = PointRows.of(n, rows, win.take(rows), truth.starts[keep],
                                truth.ends[keep], toff)
            part.member[whole], part.iou[whole], part.ap[whole] = (True, full.iou[whole],
                                                                   full.ap[whole])
            buckets[name] = part
        hl, hits, ap = highlight_rows(table)
        member = np.zeros(n, dtype=bool)
        member[hl] = True
        hit1 = {k: np.zeros(n, dtype=bool) for k in HL_LEVELS}
        hl_ap = {k: np.zeros(n) for k in HL_LEVELS}
        for k in HL_LEVELS:
            hit1[k][hl], hl_ap[k][hl] = hits[k], ap[k]
        return cls(full, buckets, np.diff(win.offsets) == 0, reordered, member, hit1, hl_ap)

    @classmethod
    def empty(cls, n: int) -> GroundingRows:
        """``n`` rows not worked out yet (zeros; fill them with :meth:`put`)."""
        def point() -> PointRows:
            return PointRows(np.zeros(n, dtype=bool), np.zeros(n),
                             np.zeros((n, len(MAP_THRESHOLDS))))
        return cls(point(), {b: point() for b in LENGTH_BUCKETS}, np.zeros(n, dtype=bool),
                   np.zeros(n, dtype=bool), np.zeros(n, dtype=bool),
                   {k: np.zeros(n, dtype=bool) for k in HL_LEVELS},
                   {k: np.zeros(n) for k in HL_LEVELS})

    def put(self, rows: NDArray[np.int64], part: GroundingRows) -> None:
        """Write the values of ``part`` (worked out for ``rows``, in that order) into
        those rows: each value depends on its row only."""
        for mine, theirs in [(self.full, part.full)] + [
                (self.buckets[b], part.buckets[b]) for b in LENGTH_BUCKETS]:
            for f in fields(PointRows):
                getattr(mine, f.name)[rows] = getattr(theirs, f.name)
        for name in ("refused", "reordered", "highlight"):
            getattr(self, name)[rows] = getattr(part, name)
        for k in HL_LEVELS:
            self.hit1[k][rows], self.hl_ap[k][rows] = part.hit1[k], part.hl_ap[k]

    @classmethod
    def concat(cls, parts: list[GroundingRows]) -> GroundingRows:
        """The rows of ``parts``, one after the other."""
        def cat(get):
            first = get(parts[0])
            if isinstance(first, dict):
                return {k: np.concatenate([get(p)[k] for p in parts]) for k in first}
            if isinstance(first, PointRows):
                return PointRows(*(np.concatenate([getattr(get(p), f.name) for p in parts])
                                   for f in fields(PointRows)))
            return np.concatenate([get(p) for p in parts])
        buckets = {b: cat(lambda p, b=b: p.buckets[b]) for b in LENGTH_BUCKETS}
        return cls(cat(lambda p: p.full), buckets, cat(lambda p: p.refused),
                   cat(lambda p: p.reordered), cat(lambda p: p.highlight),
                   cat(lambda p: p.hit1), cat(lambda p: p.hl_ap))


__all__ = ["AP_BLOCK_ROWS", "LENGTH_BUCKETS", "GroundingRows", "PointRows", "windows_of"]
