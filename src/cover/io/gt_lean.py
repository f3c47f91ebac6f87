"""QVHighlights-style ground truth read typed, a batch of lines at a time, without its
parsed rows: one read for a stream's compact columns and for the table in memory.

:func:`cover.io.qvhighlights.read_ground_truth` holds every parsed row (a dict, its
strings and window lists: ~640 bytes a row, 640 MB at 1e6 rows) while it checks them.
:func:`read_truth_compact` decodes the lines typed, :data:`CHUNK_LINES` at a time
(msgspec structs of only the fields it keeps: qid, vid, query, duration, the true
windows and the highlight labels), checks them as the per-row reader does
(:func:`truth_chunk`) and keeps, :data:`BATCH_LINES` rows at a time, only compact
columns (:class:`cover.io.truth_index.CompactColumns`). A file passes only when every row
is plainly clean; on anything else (a line that is not a JSON object, a missing or
mistyped field, a repeated qid, a bad duration, an empty, non-finite or reversed window,
highlight labels not written as plain numbers (a null too), an empty file, a JSON array
file) the read gives None and the whole file is read by
:func:`~cover.io.qvhighlights.read_ground_truth`, so every rejection and message is its
own. :func:`read_ground_truth_lean` is that read in
memory: the compact columns' table (their narrow numbers widen back exactly), column
for column the per-row reader's, without ``records``.
"""

from __future__ import annotations

from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
from msgspec import UNSET, Raw, UnsetType
from numpy.typing import NDArray

from cover._memory import trim
from cover.data.ids import qid_text
from cover.data.table import DEFAULT_CLIP_SECONDS
from cover.errors import InputError
from cover.io.gt_compact import CompactColumns
from cover.io.json_columns import text_ids
from cover.io.jsonl import OnError
from cover.io.jsonl_batch import TYPED_CHUNK_LINES, gc_paused
from cover.io.jsonl_typed import exact_values, pairs_column, typed_lines
from cover.io.lines import line_chunks
from cover.io.qvhighlights import Loaded, read_ground_truth, truth_rules
from cover.io.raw_numbers import int_lists, number_rows
from cover.io.saliency_labels import ANNOTATORS
from cover.io.truth_index import CompactTruth
from cover.ragged import Ragged, offsets_from_lengths

_NUMBER = frozenset({int, float})
#: Lines decoded at a time (typed rows are small: few, large chunks).
CHUNK_LINES = TYPED_CHUNK_LINES
#: Lines checked and compacted at a time.
BATCH_LINES = 16_384


def read_ground_truth_lean(path: str | Path, *, on_error: OnError = "raise") -> Loaded:
    """:func:`~cover.io.qvhighlights.read_ground_truth` without the parsed rows (the
    table's ``records`` is None) when every row is clean, else exactly it."""
    truth = read_truth_compact(path)
    if truth is None:
        return read_ground_truth(path, on_error=on_error)
    table = truth.table()
    del truth
    trim()  # what the read freed goes back before the command goes on
    return Loaded(table, [], {})


def read_truth_compact(path: str | Path, *, labels: bool = True) -> CompactTruth | None:
    """The ground-truth JSON-lines file ``path`` as a :class:`CompactTruth`, or None
    when the per-row reader must read it (see the module doc). ``labels=False``: the
    highlight labels are checked but not kept (a caller that never scores highlights)."""
    try:
        with gc_paused():
            return _read(path, labels)
    except (OverflowError, InputError):  # the per-row reader says what is wrong
        return None


def _read(path: str | Path, keep_labels: bool) -> CompactTruth | None:
    cols = CompactColumns(str(path), DEFAULT_CLIP_SECONDS)
    labels: list[Ragged | None] = []
    sizes: list[int] = []
    for batch in line_chunks(path, BATCH_LINES):  # the file's bytes are never held whole
        got: tuple[list[Any], ...] = ([], [], [], [], [], [], [])
        for a in range(0, len(batch), CHUNK_LINES):
            if not truth_chunk(list(map(itemgetter(1), batch[a:a + CHUNK_LINES])), got,
                               keep_labels):
                return None
        qids, vids, query, durs, wins, counts, labs = got
        if len({q.dtype.kind for q in qids}) > 1:  # integer chunks among text ones
            qids = [qid_text(q) for q in qids]
        win = np.concatenate(wins)
        cols.add(np.concatenate(qids), np.concatenate(vids), query,  # numpy text per chunk
                 np.concatenate(durs), win[:, 0], win[:, 1], np.concatenate(counts),
                 np.fromiter(map(itemgetter(0), batch), dtype=np.int64, count=len(batch)))
        labels += labs
        sizes += [c.size for c in counts]
    if cols.n == 0:
        return None  # an empty file: the per-row reader's case
    return cols.finish(_joined_labels(labels, sizes))


def _joined_labels(parts: list[Ragged | None], sizes: list[int]) -> Ragged | None:
    """The highlight labels of every chunk as one :class:`Ragged` (None when no chunk
    had any; a chunk without labels gives empty rows)."""
    if all(p is None for p in parts):
        return None
    values = [np.empty((0, 4)) if p is None else p.values for p in parts]
    lengths = [np.zeros(n, dtype=np.int64) if p is None else p.lengths
               for p, n in zip(parts, sizes, strict=True)]
    return Ragged(np.concatenate(values), offsets_from_lengths(np.concatenate(lengths)))


class _Truth(msgspec.Struct, gc=False):
    """The fields of a ground-truth row the lean read keeps (absent: None; the windows
    and labels raw, read a chunk at a time, and UNSET when absent, the labels' presence
    being what the per-row reader looks at)."""

    qid: Any = None
    vid: Any = None
    query: Any = None
    duration: Any = None
    relevant_windows: Raw | UnsetType = UNSET
    relevant_clip_ids: Raw | UnsetType = UNSET
    saliency_scores: Raw | UnsetType = UNSET


_DECODE = msgspec.json.Decoder(_Truth).decode
_FIELDS = attrgetter("qid", "vid", "query", "duration", "relevant_windows",
                     "relevant_clip_ids", "saliency_scores")


def truth_chunk(lines: list[bytes], cols: tuple[list[Any], ...],
                keep_labels: bool = True) -> bool:
    """Append the checked columns of a few lines to ``cols`` (qid as int64 or numpy text,
    vid as numpy text, query, durations, windows, windows per row, labels; the rows are
    dropped); False when any row is not plainly clean (see the module doc)."""
    recs = typed_lines(_DECODE, lines)
    if recs is None:
        return False
    qv, vv, query, durs, wins, ids, scores = map(list, zip(*map(_FIELDS, recs), strict=True))
    clean, labels = _labels(ids, scores, keep_labels)
    if not clean:
        return False
    qid, vtext = _qid_column(qv), text_ids(vv)
    if (qid is None or vtext is None or not set(map(type, durs)) <= _NUMBER
            or not exact_values(durs) or not exact_values(query)):
        return False
    got = pairs_column(wins)
    if got is None or not (got[1] > 0).all():
        return False  # a row without a window, or a window that is not a number pair
    win, per_row = got
    dur = np.array(durs, dtype=np.float64)
    if any(bad.any() for bad, _ in truth_rules(dur, win, offsets_from_lengths(per_row))):
        return False  # the per-row reader rejects the row, with its message
    # ids as numpy text at once: a chunk's strings are freed with it, where lists of
    # them kept to the end pinned ~140 bytes a row between the query strings.
    parts: tuple[list[Any], ...] = ([qid], [np.array(vtext, dtype=str)],
                                    query, [dur], [win], [per_row],
                                    [labels])
    for col, part in zip(cols, parts, strict=True):
        col += part
    return True


def _qid_column(qv: list[Any]) -> NDArray[Any] | None:
    """The qids as int64 when every one is a JSON integer in its range (no text made: the
    compact columns key them so), else as numpy text; None when one is not an id
    (:func:`cover.io.json_columns.text_ids`)."""
    if set(map(type, qv)) == {int}:
        try:
            return np.array(qv, dtype=np.int64)
        except OverflowError:  # beyond int64: kept as text, as the compact keys keep it
            pass
    text = text_ids(qv)
    return None if text is None else np.array(text, dtype=str)


def _labels(ids: list[Raw | UnsetType], scores: list[Raw | UnsetType], keep: bool
            ) -> tuple[bool, Ragged | None]:
    """Whether a chunk's raw highlight labels are plainly clean, and its labels (None
    when no row names ``relevant_clip_ids``, or not ``keep``): every row with both
    fields written as numbers (:func:`~cover.io.raw_numbers.int_lists`, three-number rows
    of :func:`~cover.io.raw_numbers.number_rows`, as many as clip ids) or with neither
    (no clips). Anything else (a null, a sign or fraction in a clip id, a missing field)
    is the per-row reader's to judge."""
    keyed = ids.count(UNSET) != len(ids)
    if not keyed:
        return scores.count(UNSET) == len(scores), None
    pairs = [(b"[]", b"[]") if i is UNSET and s is UNSET else (i, s)
             for i, s in zip(ids, scores, strict=True)]
    if any(UNSET in p for p in pairs):
        return False, None
    raw_ids, raw_scores = map(list, zip(*pairs, strict=True))
    got, rows = int_lists(raw_ids), number_rows(raw_scores, ANNOTATORS)
    if got is None or rows is None or not np.array_equal(got[1], rows[1]):
        return False, None
    if not keep:
        return True, None
    return True, Ragged(np.column_stack([got[0], rows[0]]), offsets_from_lengths(got[1]))
