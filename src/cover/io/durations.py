"""Video durations for ground-truth formats that carry none (Charades-STA text).

Accepted: a JSON object ``vid -> {"duration": seconds, ...}`` (Charades'
``charades.json``, ActivityNet Captions' split files), a TACoS split (frames + fps:
``num_frames / fps``, as its ground truth reads), or any JSON-lines file with
``vid`` and ``duration`` fields (:func:`cover.io.qvhighlights.read_durations`).

A JSON-lines file is streamed a few thousand lines at a time and only ``(vid,
duration)`` per video is kept (a 1e6-row ground-truth file held as parsed rows took
~840 MB); a file that is not plainly clean is read by
:func:`~cover.io.qvhighlights.read_durations`, so its rejections and messages are its own.
The videos are held as a :class:`~cover.io.video_index.VideoIndex`: sorted UTF-8 bytes
(a byte an ASCII character; numpy text takes four) beside float64 durations, looked up a
batch at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
from numpy.typing import NDArray

from cover.data.ids import text_id_column
from cover.errors import InputError
from cover.io.document import load_document, read_bytes
from cover.io.durations_document import document_durations
from cover.io.jsonl import json_loads
from cover.io.jsonl_typed import exact_values, typed_lines
from cover.io.narrow import merge_sorted, sorted_find
from cover.io.qvhighlights import DURATIONS_SHAPES, read_durations
from cover.io.video_index import VideoIndex, utf8_ids


def read_video_durations(path: str | Path) -> tuple[NDArray[np.str_], NDArray[np.float64]]:
    """``(vid, duration)`` sorted by vid, from either accepted shape."""
    return read_video_index(path).texts()


def read_video_index(path: str | Path) -> VideoIndex:
    """The durations of ``path`` (either accepted shape) as a :class:`VideoIndex`."""
    shape = _shape(path)
    if shape != "document":
        lean = _lines_lean(path) if shape == "lines" else None
        return lean if lean is not None else VideoIndex.of(*read_durations(path))
    data = read_bytes(path)
    typed = document_durations(data)
    if typed is not None:
        return VideoIndex.of(_vid_column(path, typed[0]), typed[1])
    try:
        doc = json_loads(data)
    except ValueError:
        if _json_lines_after_all(data):
            return VideoIndex.of(*read_durations(path))
        load_document(path, data)  # raises, naming file, line and column
        raise
    if not isinstance(doc, dict) or "vid" in doc:
        return VideoIndex.of(*read_durations(path))
    from cover.io import tacos

    durs: list[Any]
    entries: list[Any] = []
    if tacos.sniff(doc):  # frames + fps: T = num_frames / fps, vid without ".avi"
        vids, durs = tacos.video_durations(doc)
    else:
        vids, entries = list(doc), list(doc.values())
        durs = [v.get("duration", np.nan) if isinstance(v, dict) else np.nan
                for v in entries]
    # A number (not a boolean) per video; anything else (a list too) NaN, named below.
    t = np.fromiter((d if type(d) in (int, float) else np.nan for d in durs),
                    dtype=np.float64, count=len(durs))
    with np.errstate(invalid="ignore"):
        bad = np.flatnonzero(~(np.isfinite(t) & (t > 0)))
    if bad.size:
        i = int(bad[0])
        if entries and isinstance(entries[i], dict) and "duration" not in entries[i]:
            fields = ", ".join(sorted(entries[i])[:6])
            raise InputError(f"{path}: video {vids[i]} has no duration field (its fields: "
                             f"{fields}): not a durations file: {DURATIONS_SHAPES}")
        raise InputError(f"{path}: video {vids[i]}: duration must be a finite number > 0, "
                         f"got {durs[i]}")
    return VideoIndex.of(_vid_column(path, vids), t)


def _vid_column(path: str | Path, vids: list[str]) -> NDArray[np.str_]:
    """The video ids of a durations document as numpy text; one longer than an id may
    be is an error naming it (the column would be as wide as it)."""
    text, why = text_id_column(vids, "vid")
    if why:
        i = min(why)
        raise InputError(f"{path}: video {text[i]}: {why[i]}")
    return text


def _json_lines_after_all(data: bytes) -> bool:
    """Whether a file :func:`_shape` took for a document, and that does not parse as one,
    is JSON lines: one line (the per-row reader names what is wrong in it), or a first
    line that is a whole JSON object (lines indented, which the shape test does not look
    past; a document's first line never is one)."""
    first, newline, _ = data.strip().partition(b"\n")
    if not newline:
        return True
    try:
        return isinstance(json_loads(first), dict)
    except ValueError:
        return False


def lookup_durations(vid: NDArray[np.str_], known_vid: NDArray[np.str_],
                     known_t: NDArray[np.float64]) -> NDArray[np.float64]:
    """Duration of each ``vid`` from sorted ``(known_vid, known_t)``; NaN where unknown
    (one binary search, no per-row dictionary)."""
    pos, hit = sorted_find(known_vid, vid)
    return np.where(hit, known_t[pos] if known_t.size else np.nan, np.nan)


def _shape(path: str | Path) -> str:
    """``document`` (one JSON object: the text opens with ``{`` and no later line does),
    ``lines`` (JSON lines: a later line opens with ``{``) or ``other``, read a block at
    a time up to the first line that tells (the file is not held)."""
    from cover.io.opener import open_input

    with open_input(path) as fh:
        head = b""
        while not head and (block := fh.read(1 << 16)):
            head = block.lstrip()
        if not head:
            read_bytes(path)  # empty: its message
        if head[:1] != b"{":
            return "other"
        last = b""
        while head:
            if b"\n{" in last + head:
                return "lines"
            last, head = head[-1:], fh.read(1 << 20)
    return "document"


def _lines_lean(path: str | Path) -> VideoIndex | None:
    """The durations of a JSON-lines file as :func:`read_durations` gives them (see the
    module doc); None when a line is not plainly clean (not an object, an id or duration
    of another type, a duration that is not finite and > 0, two for one video).

    Ids and durations are gathered as Python values (references to the parsed ones) and
    made columns :data:`_GATHER` rows at a time (UTF-8 bytes and float64); those wait
    until they are a quarter of the videos held (at least :data:`_GATHER`), then are
    merged into them (:func:`_fold`): the held columns stay one row per video, and a
    merge's temporaries are the pending rows and one new copy of the held columns."""
    from cover.io.json_columns import text_ids
    from cover.io.jsonl_batch import CHUNK_LINES, gc_paused
    from cover.io.lines import line_chunks

    held = _Spans(np.array([], dtype="S1"), np.array([]), np.array([]))
    pending: list[tuple[NDArray[np.bytes_], NDArray[np.float64]]] = []
    waiting = 0
    vids: list[str] = []
    durs: list[Any] = []
    with gc_paused():
        for batch in chain(line_chunks(path, CHUNK_LINES), [None]):
            if batch is not None:
                pairs = _vid_durations([line for _, line in batch])
                if pairs is None:
                    return None
                ids = text_ids([v for v, _ in pairs])
                if ids is None or not {type(d) for _, d in pairs} <= {int, float}:
                    return None
                vids += ids
                durs += [d for _, d in pairs]
                if len(vids) < _GATHER:
                    continue
            try:
                t = np.array(durs, dtype=np.float64)
            except OverflowError:
                return None
            if not (np.isfinite(t) & (t > 0)).all():
                return None
            if t.size:
                pending.append((utf8_ids(np.array(vids, dtype=str)), t))
                waiting += t.size
            vids, durs = [], []
            if batch is None or waiting > max(held.vid.size // 4, _GATHER):
                held, pending, waiting = _fold(held, pending), [], 0
                if (held.hi - held.lo > 1e-6).any():
                    return None  # a video given two durations
    return VideoIndex(held.vid, held.lo) if held.vid.size else None


#: Rows of a JSON-lines durations file made columns at a time (:func:`_lines_lean`).
_GATHER = 1 << 16


class _VidDuration(msgspec.Struct, gc=False):
    """The two fields of a line :func:`_lines_lean` reads (absent: None, as null)."""

    vid: Any = None
    duration: Any = None


_DECODE = msgspec.json.Decoder(_VidDuration).decode


def _vid_durations(lines: list[bytes]) -> list[tuple[Any, Any]] | None:
    """``(vid, duration)`` of each line that has both (absent or null: left out), each
    line decoded by msgspec into those two fields alone (a ground-truth line's windows
    and labels are skipped without a Python object); None when a line needs the per-row
    reader (:func:`cover.io.jsonl_typed.typed_lines`) or holds a value the two parsers
    read apart (:func:`cover.io.jsonl_typed.exact_values`)."""
    rows = typed_lines(_DECODE, lines)
    if rows is None:
        return None
    pairs = [(r.vid, r.duration) for r in rows if r.vid is not None and r.duration is not None]
    if not (exact_values([v for v, _ in pairs]) and exact_values([d for _, d in pairs])):
        return None
    return pairs


@dataclass(frozen=True)
class _Spans:
    """Distinct vids (UTF-8 bytes, sorted) with the lowest and highest duration met."""

    vid: NDArray[np.bytes_]
    lo: NDArray[np.float64]
    hi: NDArray[np.float64]


def _fold(held: _Spans, pending: list[tuple[NDArray[np.bytes_], NDArray[np.float64]]]
          ) -> _Spans:
    """The ``(vid, duration)`` rows of ``pending`` merged into ``held``: known vids widen
    their span in place; new ones are merged in (:func:`cover.io.narrow.merge_sorted`: no
    sort of the held columns)."""
    if not pending:
        return held
    vid = np.concatenate([v for v, _ in pending])
    order = np.argsort(vid, kind="stable")
    vid, t = vid[order], np.concatenate([d for _, d in pending])[order]
    head = np.ones(vid.size, dtype=bool)  # where a new vid starts
    np.not_equal(vid[1:], vid[:-1], out=head[1:])
    at = np.flatnonzero(head)  # then each distinct vid's span, sorted by vid
    vid, lo, hi = vid[at], np.minimum.reduceat(t, at), np.maximum.reduceat(t, at)
    del order, t, head, at  # the pending rows' temporaries go before the merge
    pos, hit = sorted_find(held.vid, vid)
    at = pos[hit]  # distinct vids: distinct places
    held.lo[at] = np.minimum(held.lo[at], lo[hit])
    held.hi[at] = np.maximum(held.hi[at], hi[hit])
    if hit.all():
        return held
    vid, lo, hi = vid[~hit], lo[~hit], hi[~hit]  # the new vids alone (the rest freed)
    return _Spans(*merge_sorted(held.vid, vid, (held.lo, lo), (held.hi, hi)))
