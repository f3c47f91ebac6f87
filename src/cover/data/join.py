"""Joining predictions with ground truth or durations, and fitting rows to ``[0, T]``.

Each function returns the kept table plus the :class:`RowProblem` list that says
what happened to every other row (rejected) or value (clipped).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.rules import NO_DURATION, PRED_STRICT, outside_video, wholly_outside
from cover.data.shape import T, TableShape, ids_as_given, replace_keeping_ids, require_table
from cover.errors import RowProblem
from cover.ragged import segment_any

#: How far a prediction's own duration may be from the ground truth's (seconds).
DURATION_TOLERANCE = 1e-6


def _problems(table: TableShape, rows: NDArray[np.int64], why: str | list[str],
              action: Any = "rejected") -> list[RowProblem]:
    if not rows.size:
        return []
    lines = table.line if table.line is not None else np.zeros(len(table), dtype=np.int64)
    whys = [why] * rows.size if isinstance(why, str) else why
    qid = ids_as_given(table)
    return [
        RowProblem(table.source, int(lines[i]), str(qid[i]), w, action)
        for i, w in zip(rows.tolist(), whys, strict=True)
    ]


def _query_of(table: TableShape, rows: NDArray[np.int64]) -> NDArray[np.object_]:
    if table.query is None:
        return np.full(rows.size, None, dtype=object)
    return table.query[rows]


class KeyIndex:
    """``keys`` sorted once, then looked up by binary search as often as needed: a
    stream joins each batch in ``O(b log n)`` instead of re-sorting all ``n`` keys."""

    def __init__(self, keys: NDArray[np.str_]) -> None:
        self.keys = keys
        self.order = np.argsort(keys, kind="stable")
        self.sorted = keys[self.order]

    def find(self, wanted: NDArray[np.str_]) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
        """Index into ``keys`` of each ``wanted`` key, and whether it was found."""
        if self.keys.size == 0:
            return np.zeros(wanted.size, dtype=np.int64), np.zeros(wanted.size, dtype=bool)
        pos = np.minimum(np.searchsorted(self.sorted, wanted), self.keys.size - 1)
        j = self.order[pos]
        return j, self.keys[j] == wanted


def index_of(keys: NDArray[np.str_], wanted: NDArray[np.str_]) -> tuple[NDArray[np.int64],
                                                                      NDArray[np.bool_]]:
    """Index into ``keys`` of each ``wanted`` key, and whether it was found
    (one sort + binary search, no per-row dictionary)."""
    return KeyIndex(keys).find(wanted)


def attach_truth(
    preds: T, gt: TableShape, *, strict: bool = False,
    truth_rejected: NDArray[np.str_] | None = None,
) -> tuple[T, list[RowProblem]]:
    """Join ``gt`` onto ``preds`` by qid, checking that ``vid`` (and ``query``, when both
    files have it) agree, and take T from the ground truth.

    Predictions without ground truth and ground truth without predictions are both
    rejected (a silently dropped row would bias calibration). Truth windows and
    predictions reaching outside ``[0, T]`` are clipped and counted, or rejected
    when ``strict``. ``truth_rejected``: qids whose ground-truth row the reader rejected,
    as text (a prediction of one has a truth row, set aside: its reason says so).
    """
    require_table(preds, "the predictions given to attach_truth")
    require_table(gt, "the ground truth given to attach_truth")
    problems: list[RowProblem] = []
    gt_truth = gt.require_truth()
    j, matched = index_of(gt.qid, preds.qid)
    alone = np.flatnonzero(~matched)
    gone = (np.isin(preds.qid[alone], truth_rejected)
            if truth_rejected is not None and truth_rejected.size and alone.size
            else np.zeros(alone.size, dtype=bool))
    problems += _problems(preds, alone[~gone], f"no ground truth for this qid in {gt.source}")
    problems += _problems(preds, alone[gone],
                          f"its ground-truth row in {gt.source} was rejected")
    unmatched_gt = np.flatnonzero(~np.isin(gt.qid, preds.qid))
    problems += _problems(gt, unmatched_gt, f"no prediction for this qid in {preds.source}")

    rows = np.flatnonzero(matched)
    jj = j[rows]
    vid_bad = preds.vid[rows] != gt.vid[jj]
    problems += _problems(preds, rows[vid_bad], [
        f"vid differs from ground truth ({a!r} vs {b!r})"
        for a, b in zip(preds.vid[rows[vid_bad]].tolist(), gt.vid[jj[vid_bad]].tolist(),
                        strict=True)
    ])
    qp, qg = _query_of(preds, rows), _query_of(gt, jj)
    query_bad = (qp != None) & (qg != None) & (qp != qg)  # noqa: E711 (elementwise)
    problems += _problems(preds, rows[query_bad & ~vid_bad],
                          "query text differs from ground truth")
    pd = preds.duration[rows]
    dur_bad = np.isfinite(pd) & (np.abs(pd - gt.duration[jj]) > DURATION_TOLERANCE)
    shown = dur_bad & ~vid_bad & ~query_bad
    problems += _problems(preds, rows[shown], [
        f"duration differs from ground truth ({a:g} s vs {b:g} s; tolerance "
        f"{DURATION_TOLERANCE:g} s)"
        for a, b in zip(pd[shown].tolist(), gt.duration[jj[shown]].tolist(), strict=True)])
    ok = ~(vid_bad | query_bad | dur_bad)
    rows, jj = rows[ok], jj[ok]

    joined = replace(preds.take(rows), duration=gt.duration[jj], truth=gt_truth.take(jj),
                     truth_saliency=(None if gt.truth_saliency is None
                                     else gt.truth_saliency.take(jj)))
    joined, more = clip_truth(joined, strict=strict, truth_source=gt.source,
                              truth_lines=None if gt.line is None else gt.line[jj])
    problems += more
    joined, more = clip_predictions(joined, strict=strict)
    problems += more
    return joined, problems


def clip_truth(table: T, *, strict: bool = False,
               truth_source: str | None = None, truth_lines: NDArray[np.int64] | None = None,
               ) -> tuple[T, list[RowProblem]]:
    """Clip truth windows to ``[0, T]`` (counted), rejecting rows whose truth falls
    entirely outside, or any row reaching outside when ``strict``. With
    ``truth_source``/``truth_lines`` (where each row's truth was read), a clipped window
    is reported at its ground-truth line, and a rejection names that line too."""
    truth = table.require_truth()
    r = truth.rows
    t = table.duration[r]
    outside = segment_any((truth.starts < 0) | (truth.ends > t), truth.offsets)
    clipped = truth.clip(0.0, table.duration)
    vanished = clipped.n_components == 0
    problems: list[RowProblem] = []
    reject = vanished | (outside & strict)
    why = [
        "ground-truth windows lie outside [0, T]" if v
        else "a ground-truth window reaches outside [0, T] (strict mode)"
        for v in vanished[reject].tolist()
    ]
    rej = np.flatnonzero(reject)
    if truth_source is not None and truth_lines is not None:
        why = [f"{w} ({truth_source}:{int(truth_lines[i])})"
               for w, i in zip(why, rej.tolist(), strict=True)]
        problems += _problems(table, rej, why)
        problems += [RowProblem(truth_source, int(truth_lines[i]), str(table.qid[i]),
                                "ground-truth window clipped to [0, T]", "clipped")
                     for i in np.flatnonzero(outside & ~reject).tolist()]
    else:
        problems += _problems(table, rej, why)
        problems += _problems(table, np.flatnonzero(outside & ~reject),
                              "ground-truth window clipped to [0, T]", action="clipped")
    out = replace(table, truth=clipped)
    return (out.take(~reject) if reject.any() else out), problems


def clip_predictions(table: T, *, strict: bool = False) -> tuple[T,
                                                                              list[RowProblem]]:
    """Clip top-1 intervals to ``[0, T]`` (counted), or reject them when ``strict``.

    A prediction wholly outside the video (``e < 0`` or ``s > T``, or a proper interval
    that would shrink to the point 0 or T) is rejected in either mode: clipping it would
    certify a sliver the grounder never predicted."""
    t = table.duration
    has = table.has_interval
    ps, pe = table.pred_start, table.pred_end
    with np.errstate(invalid="ignore"):
        outside = has & ((ps < 0) | (pe > t))
        wholly = has & wholly_outside(ps, pe, t)
    problems = _problems(table, np.flatnonzero(wholly), [
        outside_video(a, b, d) for a, b, d in zip(ps[wholly].tolist(), pe[wholly].tolist(),
                                                  t[wholly].tolist(), strict=True)])
    if strict:
        problems += _problems(table, np.flatnonzero(outside & ~wholly), PRED_STRICT)
        return (table.take(~outside) if outside.any() else table), problems
    problems += _problems(table, np.flatnonzero(outside & ~wholly),
                          "predicted interval clipped to [0, T]", action="clipped")
    ps = np.where(has, np.clip(ps, 0.0, t), np.nan)
    pe = np.where(has, np.clip(pe, 0.0, t), np.nan)
    out = replace_keeping_ids(table, pred_start=ps, pred_end=pe)
    return (out.take(~wholly) if wholly.any() else out), problems


def fill_durations(
    preds: T,
    vids: NDArray[np.str_] | None,
    durations: NDArray[np.float64] | None,
    *,
    strict: bool = False,
    source: str = "--videos",
    by: str = "vid",
) -> tuple[T, list[RowProblem]]:
    """Take T from the prediction rows when present, else look the vid (``by="qid"``: the
    qid, whose durations ``vids`` then keys) up in ``(vids, durations)``. A row whose
    video has no known duration, or whose own duration contradicts the lookup, is
    rejected with a message naming it. Then clip predictions to ``[0, T]``."""
    t = preds.duration.copy()
    missing = ~np.isfinite(t)
    clash = np.zeros(t.size, dtype=bool)
    key, noun = (preds.qid, "query") if by == "qid" else (preds.vid, "video")
    if vids is not None and durations is not None:
        j, hit = index_of(vids, key)
        fill = missing & hit
        t[fill] = durations[j[fill]]
        clash = ~missing & hit & (np.abs(t - durations[j]) > 1e-6)
    unknown = ~np.isfinite(t)
    problems = _problems(preds, np.flatnonzero(unknown), [
        f"{NO_DURATION} for {noun} {v!r} (not in the row, not in {source})"
        for v in key[unknown].tolist()
    ] if unknown.any() else [])
    problems += _problems(preds, np.flatnonzero(clash), [
        f"duration {a:g} in the row contradicts {b:g} for {noun} {v!r} in {source}"
        for a, b, v in zip(t[clash].tolist(), durations[j[clash]].tolist(),
                           key[clash].tolist(), strict=True)
    ] if clash.any() and durations is not None else [])
    out = replace_keeping_ids(preds, duration=t)
    if (unknown | clash).any():
        out = out.take(~(unknown | clash))
    out, more = clip_predictions(out, strict=strict)
    return out, problems + more
