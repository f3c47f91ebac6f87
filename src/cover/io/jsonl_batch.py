"""A batch of Moment-DETR prediction lines read in bulk: the per-row reader's checks,
done over the whole batch at once.

:func:`cover.io.qvhighlights.predictions_from_rows` checks each row in Python, which
costs several times the parse itself on files of millions of lines. Here the parsed
rows are checked column by column: type sets and flattening by C-level iteration
(``map``, ``itertools.chain``), numbers by numpy masks over every window and clip of
the batch. A batch passes only when every row is plainly clean; on anything else (a
line that is not JSON or not an object, a missing or mistyped field, a non-finite
number, a window with start > end, a bad duration, a repeated qid, windows of mixed
widths) :func:`decode_batch` returns None and :func:`load_batch` reruns the batch
through the per-row reader, so every rejection and message is exactly the per-row
reader's. A batch that passes gives the same table, column for column.

The parsed rows of a batch are all alive at once (tens of thousands of dicts and
lists), which makes Python's cyclic garbage collector rescan them again and again
while parsing (half the parse time); rows hold no cycles, so collection is paused
while a batch is parsed (:func:`gc_paused`).

Without ``keep_records`` the lines are decoded typed (:mod:`cover.io.jsonl_typed`:
only the fields certify reads; untyped, msgspec was no faster than orjson here).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import repeat
from operator import is_not, itemgetter
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable
from cover.io.json_columns import (
    flat_values,
    flat_windows,
    list_lengths,
    text_ids,
)
from cover.io.jsonl import OnError, RawRows, gc_paused, json_loads, object_column, parse_json_lines
from cover.io.qvhighlights import Loaded, prediction_rules, predictions_from_rows
from cover.ragged import Ragged, offsets_from_lengths

_NUMBER = frozenset({int, float})
_ID = frozenset({int, str})
_WINDOWS, _SALIENCY = "pred_relevant_windows", "pred_saliency_scores"


#: Lines parsed at a time inside a batch: their rows (a few MB) stay in cache and are
#: freed before the next ones are parsed, where a whole batch's rows (60 MB at 16,384
#: lines of 75 clips) cost fresh memory pages and cache misses: 3x the parse itself.
CHUNK_LINES = 64
#: The same for the typed decode, whose rows are small (no dict): fewer, larger chunks.
TYPED_CHUNK_LINES = 1024


@dataclass
class Batch:
    """One batch read: the rows (``raw``; after a fast read its ``records`` are empty
    unless asked for: :meth:`ensure_records`) and the table. ``fast`` says the batch was
    read in bulk: then ``lines`` are its input lines and ``qid_values`` / ``vid_values``
    the ids as parsed, and ``has_cover`` whether a row already has a ``cover`` field."""

    raw: RawRows
    loaded: Loaded
    fast: bool = False
    lines: list[bytes] = field(default_factory=list)
    qid_values: list[Any] = field(default_factory=list)
    vid_values: list[Any] = field(default_factory=list)
    has_cover: bool = False

    def ensure_records(self, table: GroundingTable) -> GroundingTable:
        """``table`` (rows of this batch) with its input rows, parsing them again when the
        bulk read dropped them (the same parser: the same rows)."""
        if table.records is not None or table.line is None:
            return table
        self.raw.records = list(map(json_loads, self.lines))
        at = np.searchsorted(self.raw.lines, table.line).tolist()
        return replace(table, records=object_column([self.raw.records[i] for i in at]))


def load_batch(name: str, batch: Sequence[tuple[int, bytes]], *,
               clip: float = DEFAULT_CLIP_SECONDS, on_error: OnError = "raise",
               fast: bool = True, keep_records: bool = True, signal: bool = True) -> Batch:
    """The rows of ``batch`` (``(line number, bytes)`` pairs) and the prediction table
    of :func:`~cover.io.qvhighlights.predictions_from_rows`: read in bulk when the batch
    is clean (and ``fast``), else row by row. ``keep_records=False`` lets a bulk read
    drop the parsed rows (the table's ``records`` is then None) and decode only the
    fields the certify step reads (:mod:`cover.io.jsonl_typed`); ``signal=False`` too
    leaves the saliency scores out of the table (checked, not read: for a command whose
    score does not read them)."""
    with gc_paused():
        got = (decode_batch(name, batch, clip=clip, keep_records=keep_records, signal=signal)
               if fast else None)
        if got is not None:
            return got
        raw = parse_json_lines(name, batch)
        return Batch(raw, predictions_from_rows(raw, clip=clip, on_error=on_error))


def decode_batch(name: str, batch: Sequence[tuple[int, bytes]], *,
                 clip: float = DEFAULT_CLIP_SECONDS, keep_records: bool = True,
                 signal: bool = True) -> Batch | None:
    """The rows and table of a batch whose every row is clean, or None when any row
    needs the per-row reader (which then says what is wrong). Without ``keep_records``
    the lines are decoded typed (:func:`cover.io.jsonl_typed.typed_chunk`)."""
    lines = list(map(itemgetter(1), batch))  # a blank line fails the parse: per-row reader
    if not lines:
        return None
    from cover.io.jsonl_typed import typed_chunk  # it builds on this module's helpers

    parts: list[tuple[Any, ...]] = []
    try:
        step = CHUNK_LINES if keep_records else TYPED_CHUNK_LINES
        for a in range(0, len(lines), step):
            part = (_chunk(lines[a:a + step]) if keep_records else
                    typed_chunk(lines[a:a + step], signal))
            if part is None:
                return None
            parts.append(part)
    except OverflowError:  # an integer beyond float range: the per-row reader rejects it
        return None
    recs, qv, vv, query = ([x for p in parts for x in p[k]] for k in range(4))
    win, nwin, sal, nsal, scal, has = (np.concatenate([p[k] for p in parts])
                                       for k in range(5, 11))
    qtext = list(map(str, qv))
    if len(set(qtext)) != len(qtext):
        return None  # a repeated qid: the per-row reader names the first line
    woff, soff = offsets_from_lengths(nwin), offsets_from_lengths(nsal)
    dur, std_s, std_e = scal.reshape(-1, 3).T
    has_dur, has_s, has_e = has.reshape(-1, 3).T
    if any(bad.any() for bad, _ in prediction_rules(win, woff, sal, soff, (dur, has_dur),
                                                    (std_s, has_s), (std_e, has_e))):
        return None  # the per-row reader rejects the row, with its message
    raw = RawRows(name, recs, np.fromiter(map(itemgetter(0), batch), np.int64, len(batch)))
    has_std = bool(np.isfinite(std_s).any())
    ps, pe = top1_finite(win, woff)
    table = GroundingTable(
        qid=np.array(qtext, dtype=str), vid=np.array(list(map(str, vv)), dtype=str),
        duration=dur.copy(), pred_start=ps, pred_end=pe, relevance=Ragged(sal, soff),
        clip=float(clip), start_std=std_s.copy() if has_std else None,
        end_std=std_e.copy() if has_std else None, pred_windows=Ragged(win, woff),
        line=raw.lines, source=name, query=object_column(query),
        records=object_column(recs) if keep_records else None)
    return Batch(raw, Loaded(table, raw.problems, raw.rejected), True, lines, qv, vv,
                 any(p[4] for p in parts))


def _chunk(lines: list[bytes]) -> tuple[Any, ...] | None:
    """Parsed columns of a few clean lines, or None."""
    recs = parse_objects(lines)
    if recs is None:
        return None
    ids = []
    for key in ("qid", "vid"):
        vals = list(map(dict.get, recs, repeat(key)))
        if text_ids(vals) is None:
            return None
        ids.append(vals)
    if (~_has(recs, _WINDOWS) & ~_has(recs, _SALIENCY)).any():
        return None
    got = flat_windows(_lists(recs, _WINDOWS))
    sal = flat_numbers(_lists(recs, _SALIENCY))
    scal = [_scalar(recs, k) for k in ("duration", "start_std", "end_std")]
    if got is None or sal is None or any(x is None for x in scal):
        return None
    values = np.column_stack([x[0] for x in scal])  # type: ignore[index]
    present = np.column_stack([x[1] for x in scal])  # type: ignore[index]
    return (recs, ids[0], ids[1],
            list(map(dict.get, recs, repeat("query"))),
            any(map(dict.__contains__, recs, repeat("cover"))),
            got[0], got[1], sal[0], sal[1], values.ravel(), present.ravel())


def parse_objects(lines: list[bytes]) -> list[dict[str, Any]] | None:
    """Each line parsed as a JSON object, or None when any is not one (or holds
    NaN/Infinity, which only the per-row readers take, with their messages)."""
    try:
        recs: list[Any] = list(map(json_loads, lines))
    except ValueError:
        return None
    return recs if set(map(type, recs)) == {dict} else None


def top1_finite(win: NDArray[np.float64], offsets: NDArray[np.int64]
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """:func:`~cover.io.qvhighlights.top1` for finite windows, without its sort: per row
    the first window whose score equals the row's highest."""
    n = offsets.size - 1
    ps, pe = np.full(n, np.nan), np.full(n, np.nan)
    full = np.flatnonzero(np.diff(offsets) > 0)
    if full.size:
        at = offsets[full]
        best = np.maximum.reduceat(win[:, 2], at)
        rows = np.repeat(np.arange(full.size), np.diff(np.append(at, win.shape[0])))
        idx = np.where(win[:, 2] == best[rows], np.arange(win.shape[0]), win.shape[0])
        first = np.minimum.reduceat(idx, at)
        ps[full], pe[full] = win[first, 0], win[first, 1]
    return ps, pe


def _has(recs: list[dict[str, Any]], key: str) -> NDArray[np.bool_]:
    return np.fromiter(map(dict.__contains__, recs, repeat(key)), bool, len(recs))


def _lists(recs: list[dict[str, Any]], key: str) -> list[Any] | None:
    """``rec[key]`` per row, absent and null read as ``[]``; None when one is not a list."""
    vals = list(map(dict.get, recs, repeat(key)))
    kinds = set(map(type, vals))
    if not kinds <= {list, type(None)}:
        return None
    if type(None) in kinds:
        vals = [[] if v is None else v for v in vals]
    return vals


def flat_numbers(vals: list[Any] | None, *, typed: bool = False
                 ) -> tuple[NDArray[np.float64], NDArray[np.int64]] | None:
    """Flat values and lengths of lists of JSON numbers, or None (``typed``: floats)."""
    if vals is None:
        return None
    flat = flat_values(vals, typed=typed)
    return None if flat is None else (flat, list_lengths(vals))


def _scalar(recs: list[dict[str, Any]], key: str
            ) -> tuple[NDArray[np.float64], NDArray[np.bool_]] | None:
    """A number per row (NaN where absent or null) and where present, or None."""
    vals = list(map(dict.get, recs, repeat(key)))
    kinds = set(map(type, vals))
    if not kinds <= _NUMBER | {type(None)}:
        return None
    present = (np.fromiter(map(is_not, vals, repeat(None)), bool, len(vals))
               if type(None) in kinds else np.ones(len(vals), dtype=bool))
    if not present.any():
        return np.full(len(vals), np.nan), present
    return np.array(vals, dtype=np.float64), present

