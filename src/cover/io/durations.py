"""Video durations for ground-truth formats that carry none (Charades-STA text).

Accepted: a JSON object ``vid -> {"duration": seconds, ...}`` (Charades'
``charades.json``, ActivityNet Captions' split files), a TACoS split (frames + fps:
``num_frames / fps``, as its ground truth reads), or any JSON-lines file with
``vid`` and ``duration`` fields (:func:`cover.io.qvhighlights.read_durations`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from cover.errors import InputError
from cover.io.document import load_document, read_bytes
from cover.io.qvhighlights import read_durations


def read_video_durations(path: str | Path) -> tuple[NDArray[np.str_], NDArray[np.float64]]:
    """``(vid, duration)`` sorted by vid, from either accepted shape."""
    data = read_bytes(path)
    if not data.lstrip().startswith(b"{") or b"\n{" in data.strip():
        return read_durations(path)
    doc = load_document(path, data)
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
