"""Video durations for ground-truth formats that carry none (Charades-STA text).

Accepted: a JSON object ``vid -> {"duration": seconds, ...}`` (Charades'
``charades.json``, ActivityNet Captions' split files), a TACoS split (frames + fps:
``num_frames / fps``, as its ground truth reads), or any JSON-lines file with
``vid`` and ``duration`` fields (:func:`cover.io.qvhighlights.read_durations`).

A JSON-lines file is streamed a few thousand lines at a time and only ``(vid,
duration)`` per video is kept (a 1e6-row ground-truth file held as parsed rows took
~840 MB); a file that is not plainly clean is read by
:func:`~cover.io.qvhighlights.read_durations`, so its rejections and messages are its own.
"""

from __future__ import annotations

from itertools import repeat
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from cover.errors import InputError
from cover.io.document import load_document, read_bytes
from cover.io.qvhighlights import read_durations


def read_video_durations(path: str | Path) -> tuple[NDArray[np.str_], NDArray[np.float64]]:
    """``(vid, duration)`` sorted by vid, from either accepted shape."""
    shape = _shape(path)
    if shape != "document":
        lean = _lines_lean(path) if shape == "lines" else None
        return lean if lean is not None else read_durations(path)
    doc = load_document(path, read_bytes(path))
    if not isinstance(doc, dict) or "vid" in doc:
        return read_durations(path)
    from cover.io import tacos

    if tacos.sniff(doc):  # frames + fps: T = num_frames / fps, vid without ".avi"
        vids, listed = tacos.video_durations(doc)
        durs = np.array(listed, dtype=object)
    else:
        vids = list(doc)
        durs = np.array([v.get("duration", np.nan) if isinstance(v, dict) else np.nan
                         for v in doc.values()], dtype=object)
    ok = np.array([isinstance(d, (int, float)) and not isinstance(d, bool) for d in durs],
                  dtype=bool)
    t = np.where(ok, durs, np.nan).astype(np.float64)
    with np.errstate(invalid="ignore"):
        bad = np.flatnonzero(~(np.isfinite(t) & (t > 0)))
    if bad.size:
        raise InputError(f"{path}: video {vids[int(bad[0])]}: duration must be a finite "
                         f"number > 0, got {durs[int(bad[0])]}")
    v = np.array(vids, dtype=str)
    order = np.argsort(v, kind="stable")
    return v[order], t[order]


def lookup_durations(vid: NDArray[np.str_], known_vid: NDArray[np.str_],
                     known_t: NDArray[np.float64]) -> NDArray[np.float64]:
    """Duration of each ``vid`` from sorted ``(known_vid, known_t)``; NaN where unknown
    (one binary search, no per-row dictionary)."""
    if known_vid.size == 0:
        return np.full(vid.size, np.nan)
    pos = np.minimum(np.searchsorted(known_vid, vid), known_vid.size - 1)
    return np.where(known_vid[pos] == vid, known_t[pos], np.nan)


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


def _lines_lean(path: str | Path) -> tuple[NDArray[np.str_], NDArray[np.float64]] | None:
    """``(vid, duration)`` of a JSON-lines file as :func:`read_durations` gives them,
    holding only per-video columns; None when any line is not plainly clean (not an
    object, an id or duration of another type, a duration that is not finite and > 0,
    two durations for one video): :func:`read_durations` then says which."""
    from cover.io.gt_lean import line_chunks
    from cover.io.json_columns import text_ids
    from cover.io.jsonl_batch import CHUNK_LINES, gc_paused, parse_objects

    parts: list[tuple[NDArray[np.str_], NDArray[np.float64], NDArray[np.float64]]] = []
    pending = folded = 0
    with gc_paused():
        for batch in line_chunks(path, CHUNK_LINES):
            recs = parse_objects([line for _, line in batch])
            if recs is None:
                return None
            pairs = [(v, d) for v, d in zip(map(dict.get, recs, repeat("vid")),
                                            map(dict.get, recs, repeat("duration")),
                                            strict=True)
                     if v is not None and d is not None]
            vids = text_ids([v for v, _ in pairs])
            if vids is None or not {type(d) for _, d in pairs} <= {int, float}:
                return None
            try:
                t = np.array([d for _, d in pairs], dtype=np.float64)
            except OverflowError:
                return None
            if not (np.isfinite(t) & (t > 0)).all():
                return None
            parts.append((np.array(vids, dtype=str), t, t))
            pending += t.size
            if pending > max(folded, 1 << 16):  # fold: held columns stay per video
                parts = [_fold(parts)]
                folded, pending = parts[0][0].size, 0
    if not parts:
        return None
    vid, lo, hi = _fold(parts)
    if vid.size == 0 or (hi - lo > 1e-6).any():
        return None
    return vid, lo


def _fold(parts: list[tuple[NDArray[np.str_], NDArray[np.float64], NDArray[np.float64]]]
          ) -> tuple[NDArray[np.str_], NDArray[np.float64], NDArray[np.float64]]:
    """``(vid, lowest, highest duration)`` per distinct vid of ``parts``, sorted by vid."""
    vid = np.concatenate([v for v, _, _ in parts])
    uniq, inv = np.unique(vid, return_inverse=True)
    del vid
    lo = np.full(uniq.size, np.inf)
    hi = np.full(uniq.size, -np.inf)
    np.minimum.at(lo, inv, np.concatenate([a for _, a, _ in parts]))
    np.maximum.at(hi, inv, np.concatenate([b for _, _, b in parts]))
    return uniq, lo, hi
