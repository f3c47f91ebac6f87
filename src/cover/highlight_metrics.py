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

from cover.data.table import GroundingTable
from cover.io.saliency_labels import ANNOTATORS

#: Seconds per labelled clip in QVHighlights.
LABEL_CLIP_SECONDS = 2.0
#: Score levels ("HL-min-<name>"): a clip is positive when its score is >= the level.
HL_LEVELS: dict[str, int] = {"Fair": 2, "Good": 3, "VeryGood": 4}
#: The level papers quote ("HL-min-VeryGood").
HL_HEADLINE = "VeryGood"


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


class HighlightSums:
    """Per-row HIT@1 and AP sums behind :class:`HighlightMetrics`, added a table at a
    time (the rows of any batching give the same numbers)."""

    def __init__(self) -> None:
        self.n = 0
        self.hits = dict.fromkeys(HL_LEVELS, 0)
        self.ap = dict.fromkeys(HL_LEVELS, 0.0)

    def add(self, table: GroundingTable) -> None:
        """Add the rows of ``table`` that have labels (``truth_saliency``) and a
        predicted saliency (``relevance``)."""
        labels = table.truth_saliency
        if labels is None:
            return
        rows = np.flatnonzero((labels.lengths > 0) & table.has_relevance)
        for i in rows.tolist():
            scores = label_matrix(labels.row(i), float(table.duration[i]))
            pred = table.relevance.row(i)
            top = int(np.argmax(pred))
            fitted = np.zeros(scores.shape[0])
            m = min(fitted.size, pred.size)
            fitted[:m] = pred[:m]
            for name, level in HL_LEVELS.items():
                positive = scores >= level
                self.hits[name] += int(top < scores.shape[0] and positive[top].any())
                self.ap[name] += float(average_precision(positive, fitted).sum())
        self.n += rows.size

    def finish(self) -> HighlightMetrics | None:
        """The metrics, or None when no row had both labels and a saliency."""
        if self.n == 0:
            return None
        return HighlightMetrics(
            n=self.n,
            map={k: 100.0 * v / (self.n * ANNOTATORS) for k, v in self.ap.items()},
            hit1={k: 100.0 * v / self.n for k, v in self.hits.items()})


def highlight_metrics(table: GroundingTable) -> HighlightMetrics | None:
    """HL-mAP and HIT@1 at each level of a table joined to labelled ground truth (see the
    module docstring); None when no row has both labels and a predicted saliency."""
    sums = HighlightSums()
    sums.add(table)
    return sums.finish()


__all__ = ["HL_HEADLINE", "HL_LEVELS", "LABEL_CLIP_SECONDS", "HighlightMetrics",
           "HighlightSums", "average_precision", "highlight_metrics", "label_matrix"]
