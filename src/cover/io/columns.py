"""Tables from columns: the vectorised checks every columnar reader shares.

A dataset reader (Charades-STA text, ActivityNet Captions, TACoS, Charades-CD/RF) or
the generic Parquet/CSV reader builds flat numpy columns, one value per query and
one per window, never a Python object per window; :func:`truth_table` and
:func:`prediction_table` check them all at once and turn bad rows into
:class:`RowProblem` s naming file, line and qid, exactly like the JSON-lines readers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from cover.data.rules import (
    DURATION_RULE,
    PRED_REVERSED,
    TRUTH_NONFINITE,
    TRUTH_REVERSED,
    duplicate_reason,
    nonfinite_windows,
    repeats,
    reversed_windows,
)
from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable
from cover.errors import RowProblem
from cover.intervals import Intervals
from cover.io.fields import first_reason
from cover.io.jsonl import OnError, raise_on_rejections
from cover.io.qvhighlights import Loaded, top1
from cover.io.row_checks import id_problem, id_records
from cover.ragged import Ragged, offsets_from_lengths, segment_any, take_index


@dataclass
class Columns:
    """One row per query: ids, text and ``[0, T]``, plus ragged windows.

    ``windows`` has 2 columns (start, end) for truth, 3 (start, end, score) for
    predictions; row ``i`` owns ``windows[offsets[i]:offsets[i+1]]``. ``line`` is the
    1-based line (or row) a message should point at.
    """

    source: str
    qid: NDArray[np.str_]
    vid: NDArray[np.str_]
    duration: NDArray[np.float64]
    windows: NDArray[np.float64]
    offsets: NDArray[np.int64]
    line: NDArray[np.int64]
    query: NDArray[np.object_] | None = None
    saliency: Ragged | None = None
    problems: list[RowProblem] = field(default_factory=list)
    #: Row -> why a value the reader typed is not what its field needs (a float qid, a
    #: string duration); such rows are rejected first.
    reasons: dict[int, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.qid.size)


def duplicate_qids(qid: NDArray[np.str_], line: NDArray[np.int64]) -> dict[int, str]:
    """Row -> reason for every repeat of a qid after its first occurrence."""
    rows, first = repeats(qid)
    return {i: duplicate_reason(int(line[f]))
            for i, f in zip(rows.tolist(), first.tolist(), strict=True)}


def _later(more: dict[int, str], first: dict[int, str] | None) -> dict[int, str]:
    """``more`` without the rows ``first`` already gives a reason for."""
    return {i: w for i, w in more.items() if not first or i not in first}


def _reject(c: Columns, reasons: dict[int, str]) -> NDArray[np.bool_]:
    keep = np.ones(len(c), dtype=bool)
    for i, why in sorted(reasons.items()):
        keep[i] = False
        c.problems.append(RowProblem(c.source, int(c.line[i]), str(c.qid[i]) or None, why,
                                     "rejected"))
    return keep


def _rejected_rows(c: Columns, keep: NDArray[np.bool_], records: NDArray[np.object_] | None
                   ) -> dict[tuple[int, str | None], Any]:
    """``(line, qid)`` (the key of its problem, :func:`_reject`) -> the record of every
    rejected row, as a kept row's (``records``; else its qid and vid): certified output
    echoes it, and the rows of a document may share a line."""
    gone = np.flatnonzero(~keep)
    recs = records[gone].tolist() if records is not None else id_records(c.qid[gone],
                                                                          c.vid[gone])
    return {(int(c.line[i]), str(c.qid[i]) or None): rec
            for i, rec in zip(gone.tolist(), recs, strict=True)}


#: What a file read holds: a grounder's predictions or the ground truth.
Role = Literal["predictions", "ground_truth"]


def role_table(role: Role, c: Columns, *, clip: float = DEFAULT_CLIP_SECONDS,
               on_error: OnError = "raise", records: NDArray[np.object_] | None = None,
               reasons: dict[int, str] | None = None) -> Loaded:
    """:func:`truth_table` for ground truth, :func:`prediction_table` for predictions."""
    if role == "ground_truth":
        return truth_table(c, on_error=on_error, records=records, reasons=reasons)
    return prediction_table(c, clip=clip, on_error=on_error, records=records, reasons=reasons)


def truth_table(c: Columns, *, on_error: OnError = "raise",
                records: NDArray[np.object_] | None = None,
                reasons: dict[int, str] | None = None) -> Loaded:
    """Ground truth from columns. Rejected (first reason wins; ``reasons``, a reader's
    own findings, come first): a duration that is not a finite number > 0, no window,
    a non-finite window, a window with start > end, a repeated qid. Windows partly
    outside ``[0, T]`` are kept and clipped, counted, when truth is attached
    (:func:`cover.data.join.clip_truth`)."""
    w = c.windows[:, :2]
    with np.errstate(invalid="ignore"):
        bad_t = ~(np.isfinite(c.duration) & (c.duration > 0))
    reasons = first_reason([
        (bad_t, DURATION_RULE),
        (np.diff(c.offsets) == 0, "no true window (no moment)"),
        (nonfinite_windows(w[:, 0], w[:, 1], c.offsets), TRUTH_NONFINITE),
        (reversed_windows(w[:, 0], w[:, 1], c.offsets), TRUTH_REVERSED),
    ], (reasons := c.reasons | dict(reasons or {})) | _later(duplicate_qids(c.qid, c.line),
                                                              reasons))
    keep = _reject(c, reasons)
    flat, off = take_index(c.offsets, np.flatnonzero(keep))
    table = GroundingTable(
        qid=c.qid[keep], vid=c.vid[keep], duration=c.duration[keep],
        pred_start=np.full(int(keep.sum()), np.nan), pred_end=np.full(int(keep.sum()), np.nan),
        relevance=Ragged(np.empty(0), np.zeros(int(keep.sum()) + 1, dtype=np.int64)),
        truth=Intervals(w[flat, 0].copy(), w[flat, 1].copy(), off),
        line=c.line[keep], source=c.source,
        query=None if c.query is None else c.query[keep],
        records=None if records is None else records[keep],
    )
    raise_on_rejections(c.problems, on_error, c.source)
    return Loaded(table, c.problems, _rejected_rows(c, keep, records))


def prediction_table(c: Columns, *, clip: float = DEFAULT_CLIP_SECONDS,
                     on_error: OnError = "raise",
                     records: NDArray[np.object_] | None = None,
                     reasons: dict[int, str] | None = None,
                     repeats: dict[int, str] | None = None) -> Loaded:
    """Predictions from columns. The top-1 interval is the highest-scoring window
    (ties: list order, :func:`cover.io.qvhighlights.top1`); a row with no window is a
    refusal. Rejected (``reasons``, a reader's own findings, first; ``repeats``, rows
    repeating an earlier batch's qid, after the columns' own findings): a non-finite
    window or saliency value, a window with start > end, a duration present but not a
    finite number > 0, a repeated qid."""
    w = c.windows
    if w.shape[1] == 2:  # no score column: rank by list order
        lengths = np.diff(c.offsets)
        scored = np.empty((w.shape[0], 3))
        scored[:, :2] = w
        if w.shape[0] and int(lengths.max()) == 1:  # one window or none a row: all first
            scored[:, 2] = -0.0
        else:
            scored[:, 2] = -(np.arange(w.shape[0], dtype=np.float64)
                             - np.repeat(c.offsets[:-1], lengths))
        w = scored
    sal = c.saliency if c.saliency is not None else Ragged(
        np.empty(0), np.zeros(len(c) + 1, dtype=np.int64))
    with np.errstate(invalid="ignore"):
        bad_t = ~np.isnan(c.duration) & ~(np.isfinite(c.duration) & (c.duration > 0))
    finite = np.isfinite(w)
    # A whole read's order: what the caller could not read (``reasons``), the reader's
    # own findings, then the repeats (a stream's of earlier rows, ``repeats``; those
    # within the batch).
    reasons = c.reasons | dict(reasons or {})
    reasons |= _later(dict(repeats or {}), reasons)
    first = reasons | _later(duplicate_qids(c.qid, c.line), reasons)
    reasons = first_reason([
        (np.zeros(len(c), dtype=bool) if finite.all()  # one flat pass when all are
         else segment_any(~finite.all(axis=1), c.offsets),
         "a predicted window's start or end is no finite number (empty, null, NaN or "
         "inf)"),
        (segment_any(~np.isfinite(sal.values), sal.offsets), "non-finite saliency value"),
        (reversed_windows(w[:, 0], w[:, 1], c.offsets), PRED_REVERSED),
        (bad_t, DURATION_RULE),
    ], dict(first))  # a copy: first_reason adds to the dict it is given
    keep = _reject(c, reasons)
    claimed = np.ones(len(c), dtype=bool)  # the rows the id and duplicate rules kept
    claimed[list(first)] = False
    rows = np.flatnonzero(keep)
    flat, off = take_index(c.offsets, rows)
    every = rows.size == len(c)

    def kept(a: NDArray[Any]) -> NDArray[Any]:
        return a.copy() if every else a[keep]  # a copy either way (a memcpy when every)

    windows = w.copy() if every and w.shape[0] == flat.size else w[flat]
    ps, pe = top1(windows, off)
    table = GroundingTable(
        qid=kept(c.qid), vid=kept(c.vid), duration=kept(c.duration), pred_start=ps,
        pred_end=pe, relevance=sal.take(rows), clip=float(clip), line=kept(c.line),
        pred_windows=Ragged(windows, off),
        source=c.source, query=None if c.query is None else kept(c.query),
        records=None if records is None else kept(records),
    )
    raise_on_rejections(c.problems, on_error, c.source)
    claims = None if every else (np.asarray(c.qid)[claimed].astype(str), c.line[claimed])
    return Loaded(table, c.problems, _rejected_rows(c, keep, records), claims=claims)


def value_ids(values: list[Any], key: str) -> dict[int, str]:
    """Row -> why ``values[row]`` (the ``key`` field of each row, as read) is no id: a
    null (or absent) value is a missing field and anything else is judged by
    :func:`cover.io.row_checks.id_problem`, as the JSON-lines reader says of a row."""
    whys = {i: f"missing field(s): {key}" if v is None else id_problem(v, key)
            for i, v in enumerate(values)}
    return {i: w for i, w in whys.items() if w is not None}


def id_text(values: list[Any]) -> NDArray[np.str_]:
    """Ids as read, as text; a null is the empty text, so a row rejected for it names no
    qid (as the JSON-lines reader's message does), never ``qid=None``."""
    return np.array(["" if v is None else str(v) for v in values], dtype=str)


def id_reasons(qid: dict[int, str], vid: dict[int, str]) -> dict[int, str]:
    """One reason per row from the qid's and the vid's (:func:`value_ids`): the qid's
    first, both named when both are missing (the JSON-lines reader's words)."""
    both = "missing field(s): qid, vid"
    return vid | qid | {i: both for i, w in qid.items()
                        if w.startswith("missing") and vid.get(i, "").startswith("missing")}


def numbers(values: list[Any]) -> NDArray[np.float64]:
    """JSON values as floats: a number as itself, anything else (null, text, a boolean)
    NaN."""
    out = np.full(len(values), np.nan)
    for i, v in enumerate(values):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[i] = float(v)
    return out


def pair_windows(s: NDArray[np.float64], e: NDArray[np.float64]
                 ) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """``(windows, offsets)`` from a start and an end column: one window a row where
    either end is given (a missing one is NaN, rejected as non-finite), none where
    neither is."""
    has = np.isfinite(s) | np.isfinite(e)
    win = np.column_stack([s, e])
    if has.all():  # one window a row: no gather, no count
        return win, np.arange(s.size + 1, dtype=np.int64)
    return win[has], offsets_from_lengths(has)


def saliency_column(values: list[Any]) -> Ragged:
    """One list of saliency values per row (a JSON value each; anything else: none)."""
    sv, so, _ = stack_windows([[[x] for x in v] if isinstance(v, list) else None
                               for v in values], 1)
    return Ragged(sv[:, 0].copy(), so)


def stack_windows(per_row: list[Any], width: int | None = None
                  ) -> tuple[NDArray[np.float64], NDArray[np.int64], list[int]]:
    """Flatten one list of ``[start, end]`` pairs per row (a JSON value each) into
    ``(windows, offsets, bad_rows)``: one numpy conversion per row, never per window.
    A row whose value is not a list of ``width`` numbers is listed in ``bad_rows`` and
    gets no window; no ``width``: 3 if one of the first 50 rows' first window has a
    score, else 2."""
    if width is None:
        width = 3 if any(isinstance(v, list) and v and isinstance(v[0], list)
                         and len(v[0]) == 3 for v in per_row[:50]) else 2
    arrays: list[NDArray[np.float64]] = []
    bad: list[int] = []
    lengths = np.zeros(len(per_row), dtype=np.int64)
    for i, v in enumerate(per_row):
        try:
            a = np.asarray(v if v is not None else [], dtype=np.float64)
        except (TypeError, ValueError):
            bad.append(i)
            continue
        if a.size == 0:
            continue
        if a.ndim == 1 and a.size == width:  # a single bare [s, e]
            a = a.reshape(1, width)
        if a.ndim != 2 or a.shape[1] != width:
            bad.append(i)
            continue
        arrays.append(a)
        lengths[i] = a.shape[0]
    flat = np.concatenate(arrays) if arrays else np.empty((0, width))
    return flat, offsets_from_lengths(lengths), bad
