"""The shape ActivityNet Captions, TACoS and Charades-CD share: one JSON object
``video -> {timestamps: [[s, e], ...], sentences: [...], <duration info>}``.

Query ``i`` of a video is ``(timestamps[i], sentences[i])``; its qid is
``<vid>_<i>`` (the Lighthouse TACoS convention). The document is parsed once; the
window columns are built with one numpy conversion per video, never per window.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from cover.data.ids import text_id_column
from cover.errors import RowProblem
from cover.io.columns import Columns, id_reasons, truth_table
from cover.io.document import key_lines, load_object
from cover.io.jsonl import OnError, object_column
from cover.io.qvhighlights import Loaded

#: entry -> (duration in seconds, seconds per time unit of ``timestamps``)
TimeBase = Callable[[dict[str, Any]], tuple[float, float]]


def is_caption_dict(doc: Any, needs: tuple[str, ...]) -> bool:
    """A non-empty JSON object whose first value holds timestamps, sentences and ``needs``."""
    if not isinstance(doc, dict) or not doc:
        return False
    first = next(iter(doc.values()))
    return isinstance(first, dict) and all(k in first for k in
                                           ("timestamps", "sentences", *needs))


def read_caption_dict(path: str | Path, *, time_base: TimeBase,
                      vid_of: Callable[[str], str] = str, on_error: OnError = "raise",
                      doc: Any = None) -> Loaded:
    """Ground truth from a caption dict; ``time_base(entry)`` gives the video's
    duration (s) and the seconds per timestamp unit (1 for seconds, 1/fps for frames).
    A video whose ``timestamps`` and ``sentences`` differ in length, or whose duration
    information is missing, has all its queries rejected with the reason."""
    name = str(path)
    data, doc = load_object(path, doc, "a JSON object of videos")
    keys = list(doc)
    video_line = key_lines(data, keys)
    qids: list[str] = []
    vids: list[str] = []
    queries: list[Any] = []
    durs: list[float] = []
    lines: list[int] = []
    parts: list[np.ndarray] = []
    problems: list[RowProblem] = []
    for key, entry, line in zip(keys, doc.values(), video_line.tolist(), strict=True):
        vid = vid_of(key)
        why, n, t, w = _entry(entry, time_base)
        if why:
            problems += [RowProblem(name, line, f"{vid}_{i}", why, "rejected")
                         for i in range(max(n, 1))]
            continue
        qids += [f"{vid}_{i}" for i in range(n)]
        vids += [vid] * n
        queries += entry["sentences"]
        durs += [t] * n
        lines += [line] * n
        parts.append(w)
    win = np.concatenate(parts) if parts else np.empty((0, 2))
    query = object_column(queries)
    (qid, why_q), (vid_text, why_v) = text_id_column(qids), text_id_column(vids, "vid")
    c = Columns(source=name, qid=qid, vid=vid_text,
                duration=np.asarray(durs, dtype=np.float64), windows=win,
                offsets=np.arange(len(qids) + 1, dtype=np.int64),
                line=np.asarray(lines, dtype=np.int64), query=query, problems=problems,
                reasons=id_reasons(why_q, why_v))
    return truth_table(c, on_error=on_error)


def _entry(entry: Any, time_base: TimeBase) -> tuple[str, int, float, np.ndarray]:
    """(reason or "", number of queries, duration, windows in seconds)."""
    empty = np.empty((0, 2))
    if not isinstance(entry, dict):
        return "video entry is not a JSON object", 0, 0.0, empty
    ts, sents = entry.get("timestamps"), entry.get("sentences")
    if not isinstance(ts, list) or not isinstance(sents, list):
        return "missing field(s): timestamps, sentences", 0, 0.0, empty
    n = len(sents)
    if len(ts) != n:
        return (f"{len(ts)} timestamps for {n} sentences", max(n, len(ts)), 0.0, empty)
    try:
        t, unit = time_base(entry)
        w = np.asarray(ts, dtype=np.float64).reshape(n, 2) * unit
    except (KeyError, TypeError, ValueError) as exc:
        return (f"bad duration or timestamps ({exc})", n, 0.0, empty)
    return "", n, float(t), w
