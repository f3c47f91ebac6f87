"""QVHighlights-style ground truth read without keeping its parsed rows.

:func:`cover.io.qvhighlights.read_ground_truth` holds every parsed row (a dict, its
strings and window lists: ~640 bytes a row, 640 MB at 1e6 rows) while it checks them.
:func:`read_ground_truth_lean` parses the lines 64 at a time, keeps only the columns
(qid, vid, query, duration, the true windows) and checks them over the whole file at
once. A file passes only when every row is plainly clean; on anything else (a line that
is not a JSON object, a missing or mistyped field, a repeated qid, a bad duration, an
empty, non-finite or reversed window, malformed highlight labels, a JSON array file)
the whole file is read by :func:`~cover.io.qvhighlights.read_ground_truth`, so every
rejection and message is
its own. A file that passes gives its table, column for column, without ``records``.
"""

from __future__ import annotations

from array import array
from itertools import chain, repeat
from pathlib import Path
from typing import Any

import numpy as np

from cover.data.table import GroundingTable
from cover.intervals import Intervals
from cover.io.jsonl import OnError, numbered_lines, object_column, read_input_bytes
from cover.io.jsonl_batch import (
    CHUNK_LINES,
    flat_numbers,
    gc_paused,
    list_lengths,
    parse_objects,
    text_ids,
)
from cover.io.qvhighlights import Loaded, read_ground_truth, truth_rules
from cover.io.saliency_labels import label_problems, saliency_labels
from cover.ragged import Ragged, offsets_from_lengths

_NUMBER = frozenset({int, float})


def read_ground_truth_lean(path: str | Path, *, on_error: OnError = "raise") -> Loaded:
    """:func:`~cover.io.qvhighlights.read_ground_truth` without the parsed rows (the
    table's ``records`` is None) when every row is clean, else exactly it."""
    try:
        with gc_paused():
            got = _decode(path)
    except OverflowError:  # a number beyond float range: the per-row reader says so
        got = None
    return got if got is not None else read_ground_truth(path, on_error=on_error)


def _decode(path: str | Path) -> Loaded | None:
    data = read_input_bytes(path)
    if not data.strip() or data.lstrip()[:1] == b"[":
        return None  # empty, or a JSON array: the per-row reader's cases
    cols: tuple[list[Any], ...] = ([], [], [], [], [], [], [])
    numbers = array("q")
    chunk: list[bytes] = []
    for lineno, line in numbered_lines(data):
        if not line.strip():
            continue  # blank lines are skipped, as the per-row reader skips them
        chunk.append(line)
        numbers.append(lineno)
        if len(chunk) == CHUNK_LINES:
            if not _chunk(chunk, cols):
                return None
            chunk = []
    if chunk and not _chunk(chunk, cols):
        return None
    del data  # the file's bytes are not needed for the table
    qtext, vtext, query, durs, wins, counts, labels = cols
    if len(set(qtext)) != len(qtext):
        return None  # a repeated qid: the per-row reader names the first line
    dur, win, per_row = np.concatenate(durs), np.concatenate(wins), np.concatenate(counts)
    n = len(qtext)
    table = GroundingTable(
        qid=np.array(qtext, dtype=str), vid=np.array(vtext, dtype=str), duration=dur,
        pred_start=np.full(n, np.nan), pred_end=np.full(n, np.nan),
        relevance=Ragged(np.empty(0), np.zeros(n + 1, dtype=np.int64)),
        line=np.frombuffer(numbers, dtype=np.int64).copy(), source=str(path),
        query=object_column(query), records=None,
        truth=Intervals(win[:, 0].copy(), win[:, 1].copy(), offsets_from_lengths(per_row)),
        truth_saliency=_joined_labels(labels, [c.size for c in counts]))
    return Loaded(table, [], {})


def _joined_labels(parts: list[Ragged | None], sizes: list[int]) -> Ragged | None:
    """The highlight labels of every chunk as one :class:`Ragged` (None when no chunk
    had any; a chunk without labels gives empty rows)."""
    if all(p is None for p in parts):
        return None
    values = [np.empty((0, 4)) if p is None else p.values for p in parts]
    lengths = [np.zeros(n, dtype=np.int64) if p is None else p.lengths
               for p, n in zip(parts, sizes, strict=True)]
    return Ragged(np.concatenate(values), offsets_from_lengths(np.concatenate(lengths)))


def _chunk(lines: list[bytes], cols: tuple[list[Any], ...]) -> bool:
    """Append the checked columns of a few lines to ``cols`` (qid text, vid text, query,
    durations, windows, windows per row; the rows are dropped); False when any row is not
    plainly clean."""
    recs = parse_objects(lines)
    if recs is None or label_problems(recs):
        return False
    qtext = text_ids(list(map(dict.get, recs, repeat("qid"))))
    vtext = text_ids(list(map(dict.get, recs, repeat("vid"))))
    durs = list(map(dict.get, recs, repeat("duration")))
    wins: list[Any] = list(map(dict.get, recs, repeat("relevant_windows")))
    if (qtext is None or vtext is None or not set(map(type, durs)) <= _NUMBER
            or set(map(type, wins)) != {list}):
        return False
    per_row = list_lengths(wins)
    comps = list(chain.from_iterable(wins))
    if not (per_row > 0).all() or set(map(type, comps)) != {list}:
        return False  # a row without a window, or a window that is not a list
    flat = flat_numbers(comps) if (list_lengths(comps) == 2).all() else None
    if flat is None:
        return False
    win, dur = flat[0].reshape(-1, 2), np.array(durs, dtype=np.float64)
    if any(bad.any() for bad, _ in truth_rules(dur, win, offsets_from_lengths(per_row))):
        return False  # the per-row reader rejects the row, with its message
    parts: tuple[list[Any], ...] = (qtext, vtext, list(map(dict.get, recs, repeat("query"))),
                                    [dur], [win], [per_row], [saliency_labels(recs)])
    for col, part in zip(cols, parts, strict=True):
        col += part
    return True


