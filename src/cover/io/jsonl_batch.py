"""A batch of Moment-DETR prediction lines read in bulk: the per-row reader's checks,
done over the whole batch at once.

:func:`cover.io.qvhighlights.predictions_from_rows` checks each row in Python, which
costs several times the parse itself on files of millions of lines. Here the lines are
decoded typed (:mod:`cover.io.jsonl_typed`: only the fields a command reads; untyped,
msgspec was no faster than orjson here) and checked column by column: numbers by numpy
masks over every window and clip of the batch. A batch passes only when every row is
plainly clean; on anything else (a line that is not JSON or not an object, a missing or
mistyped field, a non-finite number, a window with start > end, a bad duration, a
repeated qid, windows of mixed widths) :func:`decode_batch` returns None and
:func:`load_batch` reruns the batch through the per-row reader, so every rejection and
message is exactly the per-row reader's. A batch that passes gives the same table,
column for column; with ``keep_records`` its rows are parsed too, by the per-row
reader's parser. Collection is paused while a batch is parsed (:func:`gc_paused`: why
in :func:`cover.io.jsonl.read_json_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from operator import itemgetter
from typing import Any

import numpy as np

from cover.data.rules import ids_fit
from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable
from cover.io.jsonl import OnError, RawRows, gc_paused, json_loads, object_column, parse_json_lines
from cover.io.jsonl_typed import typed_chunk
from cover.io.prediction_rows import Loaded, prediction_rules, predictions_from_rows, top1
from cover.ragged import Ragged, offsets_from_lengths

#: Lines parsed into dicts at a time inside a batch by the bulk readers that walk dicts
#: (``--videos`` durations; regions and ground truth are decoded typed): their rows (a
#: few MB) stay in cache and are freed before the next ones are parsed, where a whole
#: batch's rows (60 MB at 16,384 lines of 75 clips) cost fresh memory pages and cache
#: misses: 3x the parse itself.
CHUNK_LINES = 64
#: The same for the typed decode, whose rows are small (no dict): fewer, larger chunks.
TYPED_CHUNK_LINES = 1024


@dataclass
class Batch:
    """One batch read: the rows (``raw``; after a fast read its ``records`` are empty
    unless asked for: :meth:`ensure_records`) and the table. ``fast`` says the batch was
    read in bulk: then ``lines`` are its input lines and ``qid_values`` / ``vid_values``
    the ids as parsed. ``has_cover``: whether a row already has a ``cover`` field (either
    read)."""

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
    drop the parsed rows (the table's ``records`` is then None); ``signal=False``
    leaves the saliency scores out of the table (checked, not read: for a command whose
    score does not read them)."""
    with gc_paused():
        got = (decode_batch(name, batch, clip=clip, keep_records=keep_records, signal=signal)
               if fast else None)
        if got is not None:
            return got
        raw = parse_json_lines(name, batch)
        has_cover = any(isinstance(r, dict) and "cover" in r for r in raw.records)
        return Batch(raw, predictions_from_rows(raw, clip=clip, on_error=on_error),
                     has_cover=has_cover)


def decode_batch(name: str, batch: Sequence[tuple[int, bytes]], *,
                 clip: float = DEFAULT_CLIP_SECONDS, keep_records: bool = True,
                 signal: bool = True, keep_stds: bool = False) -> Batch | None:
    """The rows and table of a batch whose every row is clean, or None when any row
    needs the per-row reader (which then says what is wrong). The lines are decoded
    typed (:func:`cover.io.jsonl_typed.typed_chunk`); ``keep_records`` parses the rows
    too (:func:`parse_objects`). ``keep_stds`` keeps ``start_std``/``end_std`` even
    when no ``start_std`` of the batch is finite (where the table has none): a whole
    file's read decides that over every batch."""
    lines = list(map(itemgetter(1), batch))  # a blank line fails the parse: per-row reader
    if not lines:
        return None
    parts: list[tuple[Any, ...]] = []
    for a in range(0, len(lines), TYPED_CHUNK_LINES):
        part = typed_chunk(lines[a:a + TYPED_CHUNK_LINES], signal)
        if part is None:
            return None
        parts.append(part)
    qv, vv, query = ([x for p in parts for x in p[k]] for k in range(3))
    win, nwin, sal, nsal, scal, has = (np.concatenate([p[k] for p in parts])
                                       for k in range(4, 10))
    qtext, vtext = list(map(str, qv)), list(map(str, vv))
    if len(set(qtext)) != len(qtext):
        return None  # a repeated qid: the per-row reader names the first line
    if not ids_fit(qtext, vtext):
        return None  # an id too long for a text column: the per-row reader rejects it
    woff, soff = offsets_from_lengths(nwin), offsets_from_lengths(nsal)
    dur, std_s, std_e = scal.reshape(-1, 3).T
    has_dur, has_s, has_e = has.reshape(-1, 3).T
    if any(bad.any() for bad, _ in prediction_rules(win, woff, sal, soff, (dur, has_dur),
                                                    (std_s, has_s), (std_e, has_e))):
        return None  # the per-row reader rejects the row, with its message
    recs = parse_objects(lines) if keep_records else []
    if recs is None:  # a line only the per-row reader's fallback parser reads
        return None
    raw = RawRows(name, recs, np.fromiter(map(itemgetter(0), batch), np.int64, len(batch)))
    has_std = keep_stds or bool(np.isfinite(std_s).any())
    ps, pe = top1(win, woff)
    table = GroundingTable(
        qid=np.array(qtext, dtype=str), vid=np.array(vtext, dtype=str),
        duration=dur.copy(), pred_start=ps, pred_end=pe, relevance=Ragged(sal, soff),
        clip=float(clip), start_std=std_s.copy() if has_std else None,
        end_std=std_e.copy() if has_std else None, pred_windows=Ragged(win, woff),
        line=raw.lines, source=name, query=object_column(query),
        records=object_column(recs) if keep_records else None)
    return Batch(raw, Loaded(table, raw.problems, raw.rejected), True, lines, qv, vv,
                 any(p[3] for p in parts))


def parse_objects(lines: list[bytes]) -> list[dict[str, Any]] | None:
    """Each line parsed as a JSON object, or None when any is not one (or holds
    NaN/Infinity, which only the per-row readers take, with their messages)."""
    try:
        recs: list[Any] = list(map(json_loads, lines))
    except ValueError:
        return None
    return recs if set(map(type, recs)) == {dict} else None
