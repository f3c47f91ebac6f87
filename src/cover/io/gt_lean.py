"""QVHighlights-style ground truth read without keeping its parsed rows.

:func:`cover.io.qvhighlights.read_ground_truth` holds every parsed row (a dict, its
strings and window lists: ~640 bytes a row, 640 MB at 1e6 rows) while it checks them.
:func:`read_ground_truth_lean` decodes the lines typed, :data:`CHUNK_LINES` at a time
(msgspec structs of only the fields it keeps: qid, vid, query, duration, the true
windows and the highlight labels), and checks them over the whole file at once. A file
passes only when every row is plainly clean; on anything else (a line that is not a
JSON object, a missing or mistyped field, a repeated qid, a bad duration, an empty,
non-finite or reversed window, malformed highlight labels, a JSON array file) the whole
file is read by :func:`~cover.io.qvhighlights.read_ground_truth`, so every rejection and
message is its own. A file that passes gives its table, column for column, without
``records``.
"""

from __future__ import annotations

from collections.abc import Iterator
from operator import attrgetter
from pathlib import Path
from typing import Annotated, Any

import msgspec
import numpy as np
from msgspec import UNSET, Raw, UnsetType
from numpy.typing import NDArray

from cover.data.table import GroundingTable
from cover.intervals import Intervals
from cover.io.json_columns import text_ids
from cover.io.jsonl import OnError, object_column
from cover.io.jsonl_batch import TYPED_CHUNK_LINES, gc_paused
from cover.io.jsonl_typed import exact_values, pairs_column, utf8_lines
from cover.io.opener import open_input
from cover.io.qvhighlights import Loaded, read_ground_truth, truth_rules
from cover.io.saliency_labels import label_problems, saliency_labels
from cover.ragged import Ragged, offsets_from_lengths

_NUMBER = frozenset({int, float})
#: Bytes read at a time by :func:`line_chunks`.
_READ_BYTES = 1 << 22
#: Lines decoded at a time (typed rows are small: few, large chunks).
CHUNK_LINES = TYPED_CHUNK_LINES


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
    cols: tuple[list[Any], ...] = ([], [], [], [], [], [], [])
    numbers: list[NDArray[np.int64]] = []
    for batch in line_chunks(path, CHUNK_LINES):  # the file's bytes are never held whole
        if not numbers and batch[0][1].lstrip()[:1] == b"[":
            return None  # a JSON array: the per-row reader's case
        if not truth_chunk([line for _, line in batch], cols):
            return None
        numbers.append(np.fromiter((n for n, _ in batch), np.int64, len(batch)))
    if not numbers:
        return None  # empty: the per-row reader's case
    qparts, vparts, query, durs, wins, counts, labels = cols
    qtext = _joined(qparts)
    ordered = np.sort(qtext)  # a sort: numpy's hashed unique of text is 3x slower
    if (ordered[1:] == ordered[:-1]).any():
        return None  # a repeated qid: the per-row reader names the first line
    del ordered
    saliency = joined_labels(labels, [c.size for c in counts])
    vtext, dur, win, per_row = _joined(vparts), _joined(durs), _joined(wins), _joined(counts)
    n = len(qtext)
    truth = Intervals(win[:, 0].copy(), win[:, 1].copy(), offsets_from_lengths(per_row))
    del win, per_row
    table = GroundingTable(
        qid=qtext, vid=vtext, duration=dur,
        pred_start=np.full(n, np.nan), pred_end=np.full(n, np.nan),
        relevance=Ragged(np.empty(0), np.zeros(n + 1, dtype=np.int64)),
        line=_joined(numbers), source=str(path),
        query=object_column(query), records=None, truth=truth, truth_saliency=saliency)
    return Loaded(table, [], {})


def line_chunks(path: str | Path, size: int) -> Iterator[list[tuple[int, bytes]]]:
    """The non-blank ``(line number, bytes)`` of a file, at most ``size`` at a time, read a
    few MB at a time (gzip and a byte-order mark as :func:`cover.io.opener.open_input` takes
    them); lines are numbered at ``\\n``, as :func:`cover.io.jsonl.numbered_lines`
    numbers them."""
    pending: list[bytes] = []  # the unended line so far: joined once it ends
    lineno = 0
    with open_input(path) as fh:
        while True:
            block = fh.read(_READ_BYTES)
            if block and b"\n" not in block:
                pending.append(block)
                continue
            lines = b"".join([*pending, block]).split(b"\n")
            pending = [lines.pop()] if block else []
            kept = [(n, line) for n, line in enumerate(lines, start=lineno + 1)
                    if line.strip()]
            lineno += len(lines)
            for a in range(0, len(kept), size):
                yield kept[a:a + size]
            if not block:
                return


def _give_back_free_memory() -> None:
    """Return the C heap's free pages to the system (glibc's ``malloc_trim``; nothing
    elsewhere). The chunks' small arrays, freed once joined, leave holes below the
    table's columns that the heap cannot shrink past: ~140 MB of a 1e6-row file, held
    for the whole run of a command that then streams its predictions."""
    import ctypes

    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc: nothing to give back this way
        return
    trim(0)


def _joined(parts: list[NDArray[Any]]) -> NDArray[Any]:
    """The chunks' ``parts`` as one array; the list is emptied as it is joined (and the
    memory it held given back), so a column is never held twice while the next one is
    joined."""
    whole = np.concatenate(parts)
    parts.clear()
    _give_back_free_memory()
    return whole


def joined_labels(parts: list[Ragged | None], sizes: list[int]) -> Ragged | None:
    """The highlight labels of every chunk as one :class:`Ragged` (None when no chunk
    had any; a chunk without labels gives empty rows)."""
    if all(p is None for p in parts):
        return None
    values = [np.empty((0, 4)) if p is None else p.values for p in parts]
    lengths = [np.zeros(n, dtype=np.int64) if p is None else p.lengths
               for p, n in zip(parts, sizes, strict=True)]
    return Ragged(np.concatenate(values), offsets_from_lengths(np.concatenate(lengths)))


class _Truth(msgspec.Struct, gc=False):
    """The fields of a ground-truth row the lean read keeps (absent: None; the labels
    UNSET, their presence being what the per-row reader looks at). Clip ids beyond
    ``2**63`` (which orjson reads as floats from ``2**64``) are refused, as is any
    label value the per-row reader might read otherwise: the chunk goes to it."""

    qid: Any = None
    vid: Any = None
    query: Any = None
    duration: Any = None
    relevant_windows: Raw | UnsetType = UNSET
    relevant_clip_ids: list[Annotated[int, msgspec.Meta(le=2**63 - 1)]] | UnsetType | None = UNSET
    saliency_scores: list[list[float]] | UnsetType | None = UNSET


_DECODE = msgspec.json.Decoder(_Truth).decode
_FIELDS = attrgetter("qid", "vid", "query", "duration", "relevant_windows",
                     "relevant_clip_ids", "saliency_scores")
_LABELS = ("relevant_clip_ids", "saliency_scores")


def truth_chunk(lines: list[bytes], cols: tuple[list[Any], ...]) -> bool:
    """Append the checked columns of a few lines to ``cols`` (qid and vid as numpy text,
    query, durations, windows, windows per row; the rows are dropped); False when any row
    is not plainly clean. Lines are decoded typed (only these fields; msgspec refuses
    what they cannot be), ids, durations and queries checked as the per-row reader
    checks them."""
    if not utf8_lines(lines):
        return False  # msgspec does not look inside a skipped string
    try:
        recs = list(map(_DECODE, lines))
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False
    qv, vv, query, durs, wins, ids, scores = map(list, zip(*map(_FIELDS, recs), strict=True))
    labels = _label_rows(ids, scores)
    if labels and label_problems(labels):
        return False
    qtext, vtext = text_ids(qv), text_ids(vv)
    if (qtext is None or vtext is None or not set(map(type, durs)) <= _NUMBER
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
    parts: tuple[list[Any], ...] = ([np.array(qtext, dtype=str)], [np.array(vtext, dtype=str)],
                                    query, [dur], [win], [per_row],
                                    [saliency_labels(labels) if labels else None])
    for col, part in zip(cols, parts, strict=True):
        col += part
    return True


def _label_rows(ids: list[Any], scores: list[Any]) -> list[dict[str, Any]]:
    """The highlight labels of each row as the per-row reader's rows hold them (only
    the fields given); ``[]`` when no row gives any."""
    if ids.count(UNSET) == len(ids) and scores.count(UNSET) == len(scores):
        return []
    return [{k: v for k, v in zip(_LABELS, pair, strict=True) if v is not UNSET}
            for pair in zip(ids, scores, strict=True)]
