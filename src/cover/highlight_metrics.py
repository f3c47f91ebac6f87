"""The field's highlight-detection metrics: HL-mAP and HIT@1 on QVHighlights.

Definitions follow Moment-DETR's ``standalone_eval/eval.py`` (the numbers QVHighlights
papers report as "HL-min-VeryGood mAP / HIT@1"):

* **labels**: a ground-truth row has ``floor(T / 2)`` clips of 2 s; the clips listed in
  ``relevant_clip_ids`` carry the three annotators' ``saliency_scores`` (0..4), every
  other clip scores 0 (a listed clip index past the last clip is dropped). At a level
  ``m`` (Fair 2, Good 3, VeryGood 4) a clip is *positive* for an annotator when that
  annotator's score is ``>= m``.
* **predictions**: the grounder's per-clip saliency (``pred_saliency_scores``), cut to
  the number of labelled clips or padded with zeros to it (for HL-mAP only).
* **HIT@1**: 1 when the clip of highest predicted saliency (the first one on ties,
  looked for over the whole prediction) is positive for at least one annotator, 0
  otherwise (also when that clip lies past the labelled clips); the mean over rows.
* **HL-mAP**: for each row and annotator, the average precision of the clips ranked by
  predicted saliency: clips of equal saliency enter together; at each rank where
  positives are added, take the best precision at that rank or any later one; AP is the
  plain mean of those precisions (not weighted by the recall gained). A row whose clips
  are all negative for an annotator scores 0, all positive 1. HL-mAP is the mean over
  rows and annotators.

Only rows with both labels and a predicted saliency count (``n``): eval.py has no other
rows. Values are percentages and are not rounded (eval.py rounds to 2 decimals).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.relevance import require_signal_clips
from cover.data.table import GroundingTable
from cover.io.saliency_labels import ANNOTATORS
from cover.metric_sums import ChunkedSum
from cover.ragged import row_ids, take_index
from cover.scans import accumulate_ranks

#: Seconds per labelled clip in QVHighlights.
LABEL_CLIP_SECONDS = 2.0
#: Score levels ("HL-min-<name>"): a clip is positive when its score is >= the level.
HL_LEVELS: dict[str, int] = {"Fair": 2, "Good": 3, "VeryGood": 4}
#: The level papers quote ("HL-min-VeryGood").
HL_HEADLINE = "VeryGood"
#: The most cells of one ``(rows, clips)`` grid of HL-mAP (about 32 MB of float64).
GRID_CELLS = 1 << 22


@dataclass(frozen=True)
class HighlightMetrics:
    """HL-mAP and HIT@1 per level (percent) over ``n`` labelled rows with saliency."""

    n: int
    map: dict[str, float]
    hit1: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n": self.n}
        for name in HL_LEVELS:
            out[f"HL-min-{name}"] = {"HL-mAP": self.map[name], "HL-Hit1": self.hit1[name]}
        return out


def label_matrix(labels: NDArray[np.float64], duration: float) -> NDArray[np.float64]:
    """The ``(floor(T / 2), 3)`` scores of every clip of a row from its ``(k, 4)``
    labels (clip index, three scores); unlisted clips score 0."""
    n_clips = int(duration / LABEL_CLIP_SECONDS)
    out = np.zeros((n_clips, ANNOTATORS))
    ids = labels[:, 0].astype(np.int64)
    inside = ids < n_clips
    out[ids[inside]] = labels[inside, 1:]
    return out


def average_precision(positive: NDArray[np.bool_], saliency: NDArray[np.float64]
                      ) -> NDArray[np.float64]:
    """AP per annotator (column of ``positive``, shape ``(C, a)``) of the clips ranked by
    ``saliency`` (``C`` values), as the module docstring defines it."""
    n_clips = positive.shape[0]
    order = np.argsort(-saliency, kind="stable")
    ranked = saliency[order]
    ends = np.flatnonzero(np.r_[ranked[1:] != ranked[:-1], True])  # last clip of each tie
    tp = np.cumsum(positive[order], axis=0)[ends].astype(np.float64)
    precision = tp / (ends + 1)[:, None]
    best_later = np.maximum.accumulate(precision[::-1], axis=0)[::-1]
    gained = np.diff(tp, axis=0, prepend=0.0) > 0
    with np.errstate(invalid="ignore"):
        ap = (best_later * gained).sum(axis=0) / gained.sum(axis=0)
    total = positive.sum(axis=0)
    return np.where(total == 0, 0.0, np.where(total == n_clips, 1.0, ap))


def _row_metrics(table: GroundingTable, rows: NDArray[np.int64]
                 ) -> tuple[dict[str, NDArray[np.bool_]], dict[str, NDArray[np.float64]]]:
    """HIT@1 and the annotators' AP sum of each of ``rows`` (labels and a saliency on
    each) per level, for all rows at once: :func:`label_matrix` and
    :func:`average_precision` on a ``(rows, clips)`` grid padded past each row's
    labelled clips (padding ranks last and is never positive). The same values as the
    row-by-row definition: AP's terms are summed in rank order, zeros between them
    (:func:`_ranked_ap`, over every row and annotator at once)."""
    labels = table.truth_saliency
    assert labels is not None
    n_clips = (table.duration[rows] / LABEL_CLIP_SECONDS).astype(np.int64)
    r, width = rows.size, max(int(n_clips.max()), 1)
    real = np.arange(width) < n_clips[:, None]
    lab_idx, lab_rows = take_index(labels.offsets, rows)
    lab_row = row_ids(lab_rows)
    lab = labels.values[lab_idx]
    ids = lab[:, 0].astype(np.int64)
    inside = ids < n_clips[lab_row]
    rel = table.relevance
    pred_len = rel.lengths[rows]
    fitted = np.zeros((r, width))  # cut to the labelled clips or padded with zeros
    take = np.minimum(pred_len, n_clips)
    col = np.arange(width)
    have = col < take[:, None]
    src = rel.offsets[rows][:, None] + col
    fitted[have] = rel.values[src[have]]
    fitted[~real] = -np.inf  # padding ranks after every labelled clip
    # HIT@1 reads the clip of highest saliency over the whole prediction (the first on
    # ties, as per row): per row, the least clip index holding the row's maximum.
    pred_idx, pred_offsets = take_index(rel.offsets, rows)
    values, first = rel.values[pred_idx], pred_offsets[:-1]
    at_max = values == np.repeat(np.maximum.reduceat(values, first), pred_len)
    clip = np.arange(values.size) - np.repeat(first, pred_len)
    top = np.minimum.reduceat(np.where(at_max, clip, values.size), first)
    top_ok = top < n_clips
    order = np.argsort(-fitted, axis=1, kind="stable")
    ranked = np.take_along_axis(fitted, order, axis=1)
    ends = np.ones((r, width), dtype=bool)  # last clip of each tie
    ends[:, :-1] = ranked[:, 1:] != ranked[:, :-1]
    ends &= real  # ranks are real clips first: the padding group is never counted
    starts = np.ones((r, width), dtype=bool)
    starts[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
    # The annotators' scores by rank, ranks first, then (annotator, row) as one
    # contiguous axis: the running counts and maxima below step along the (at most
    # ``width``) ranks, each step one vector operation over every row and annotator.
    rank_of = np.empty_like(order)  # each clip's rank
    np.put_along_axis(rank_of, order, np.arange(width)[None, :], axis=1)
    m = r * ANNOTATORS
    ranked_scores = np.zeros((width, m))  # unlabelled clips and padding score 0
    at, who = lab_row[inside], np.arange(ANNOTATORS) * r
    flat = (rank_of[at, ids[inside]] * m + at)[:, None] + who  # (rank, annotator, row)
    ranked_scores.reshape(-1)[flat] = lab[inside, 1:]
    every = np.arange(r)
    top_scores = ranked_scores.reshape(-1)[
        (rank_of[every, np.minimum(top, width - 1)] * m + every)[:, None] + who]
    ends_t, starts_t = np.tile(ends.T, ANNOTATORS), np.tile(starts.T, ANNOTATORS)
    hits: dict[str, NDArray[np.bool_]] = {}
    ap: dict[str, NDArray[np.float64]] = {}
    for name, level in HL_LEVELS.items():
        hits[name] = top_ok & (top_scores >= level).any(axis=1)
        one = _ranked_ap(ranked_scores >= level, ends_t, starts_t, np.tile(n_clips, ANNOTATORS))
        ap[name] = one.reshape(ANNOTATORS, r).sum(axis=0)
    return hits, ap


def _ranked_ap(positive: NDArray[np.bool_], ends: NDArray[np.bool_],
               starts: NDArray[np.bool_], n_clips: NDArray[np.int64]) -> NDArray[np.float64]:
    """:func:`average_precision` of every column of ``positive`` (shape ``(ranks, m)``:
    clips in rank order, padding never positive), ``ends`` / ``starts`` marking each
    tie group's last / first rank: the sum, in rank order, of the best precision at or
    after each group end that holds a positive, over the number of such groups (0 with
    no positive, 1 when every clip is one)."""
    width = positive.shape[0]
    tp = accumulate_ranks(positive, np.add, 0, np.int32)  # positives up to each rank
    # A positive in the tie group so far: more positives up to this rank than before
    # the group's first rank. The count before a rank (the count up to the rank above)
    # never falls, so the count before the latest group start is the largest such count
    # at the starts so far.
    at_starts = np.zeros(positive.shape, dtype=np.int32)
    np.multiply(tp[:-1], starts[1:], out=at_starts[1:])  # branch-free: starts are random
    grouped = tp > accumulate_ranks(at_starts, np.maximum, 0, scratch=True)
    precision = np.where(ends, tp / np.arange(1.0, width + 1)[:, None], -np.inf)
    best_later = accumulate_ranks(precision, np.maximum, -np.inf, reverse=True, scratch=True)
    return ap_of_ranks(ends & grouped, best_later, tp[-1], n_clips)


def ap_of_ranks(gained: NDArray[np.bool_], best_later: NDArray[np.float64],
                total: NDArray[np.integer[Any]], n_clips: NDArray[np.int64]
                ) -> NDArray[np.float64]:
    """AP per column from its scanned ranks: the mean of ``best_later`` (the best
    precision at or after each rank) over the ``gained`` ranks (a tie group's end that
    holds a positive); 0 with no positive, 1 when all ``n_clips`` are (``total``)."""
    # Summed along the ranks (the first axis): the terms added in rank order, as the
    # row-by-row definition adds them.
    summed = np.add.reduce(np.where(gained, best_later, 0.0), axis=0)
    with np.errstate(invalid="ignore"):
        one = summed / np.count_nonzero(gained, axis=0)
    return np.where(total == 0, 0.0, np.where(total == n_clips, 1.0, one))


def highlight_rows(table: GroundingTable) -> tuple[
        NDArray[np.int64], dict[str, NDArray[np.bool_]], dict[str, NDArray[np.float64]]]:
    """The rows of ``table`` that count (labels and a predicted saliency), ascending,
    with their HIT@1 and annotators' AP sum per level; each row's values depend on that
    row only, so any subset of rows is scored by taking them."""
    labels = table.truth_saliency
    rows = (np.flatnonzero((labels.lengths > 0) & table.has_relevance)
            if labels is not None else np.zeros(0, dtype=np.int64))
    if not rows.size:
        return rows, {k: np.zeros(0, dtype=bool) for k in HL_LEVELS}, {
            k: np.zeros(0) for k in HL_LEVELS}
    hits = {k: np.zeros(rows.size, dtype=bool) for k in HL_LEVELS}
    ap = {k: np.zeros(rows.size) for k in HL_LEVELS}
    for part in _grid_groups(table, rows):
        got_hits, got_ap = _row_metrics(table, rows[part])
        for k in HL_LEVELS:
            hits[k][part], ap[k][part] = got_hits[k], got_ap[k]
    return rows, hits, ap


def _grid_groups(table: GroundingTable, rows: NDArray[np.int64]) -> list[NDArray[np.int64]]:
    """``rows`` (positions into it) in groups of similar clip counts, each group's
    ``(rows, clips)`` grid at most :data:`GRID_CELLS` cells (a group of one row past
    that): one long video no longer widens the grid of every row beside it. A video
    of more label clips than a signal may hold is an error naming its row."""
    clips = np.floor(table.duration[rows] / LABEL_CLIP_SECONDS)
    require_signal_clips(table, rows, clips, "HL-mAP's ranking of clips", LABEL_CLIP_SECONDS)
    order = np.argsort(clips, kind="stable")
    width = np.maximum(clips[order], 1.0)
    groups, a = [], 0
    while a < order.size:  # a loop over groups, each of many rows (or one long video)
        # the most rows from a whose grid (rows x the widest of them) fits
        fits = (np.arange(1, order.size - a + 1) * width[a:]) <= GRID_CELLS
        b = a + max(int(np.count_nonzero(fits)), 1)
        groups.append(np.sort(order[a:b]))
        a = b
    return groups


class HighlightSums:
    """Per-row HIT@1 and AP sums behind :class:`HighlightMetrics`, added a table at a
    time (the rows of any batching give the same numbers)."""

    def __init__(self) -> None:
        self.n = 0
        self.hits = dict.fromkeys(HL_LEVELS, 0)
        # Chunked exact-order sums: any batching of the rows gives the same bits.
        self.ap = {name: ChunkedSum() for name in HL_LEVELS}

    def add(self, table: GroundingTable) -> None:
        """Add the rows of ``table`` that have labels (``truth_saliency``) and a
        predicted saliency (``relevance``)."""
        _, hits, ap = highlight_rows(table)
        self.add_values(hits, ap)

    def add_values(self, hits: dict[str, NDArray[np.bool_]],
                   ap: dict[str, NDArray[np.float64]]) -> None:
        """Add rows by their per-row values (:func:`highlight_rows`), in this order."""
        for name in HL_LEVELS:
            self.hits[name] += int(np.count_nonzero(hits[name]))
            self.ap[name].add(ap[name])
        self.n += next(iter(ap.values())).size

    def finish(self) -> HighlightMetrics | None:
        """The metrics, or None when no row had both labels and a saliency."""
        if self.n == 0:
            return None
        return HighlightMetrics(
            n=self.n,
            map={k: 100.0 * float(v.total()) / (self.n * ANNOTATORS)
                 for k, v in self.ap.items()},
            hit1={k: 100.0 * v / self.n for k, v in self.hits.items()})


def highlight_metrics(table: GroundingTable) -> HighlightMetrics | None:
    """HL-mAP and HIT@1 at each level of a table joined to labelled ground truth (see the
    module docstring); None when no row has both labels and a predicted saliency."""
    sums = HighlightSums()
    sums.add(table)
    return sums.finish()


__all__ = ["HL_HEADLINE", "HL_LEVELS", "LABEL_CLIP_SECONDS", "HighlightMetrics",
           "HighlightSums", "average_precision", "highlight_metrics", "highlight_rows",
           "label_matrix"]
