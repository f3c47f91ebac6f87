"""ActivityNet Captions ground truth (``train.json`` / ``val_1.json`` / ``val_2.json``).

``"v_<youtube id>" -> {duration, timestamps: [[s, e], ...] in seconds, sentences}``.
qid ``<vid>_<i>``; Lighthouse numbers val_1 queries 37421 + running index instead,
and its predictions join by (vid, query) text. Split unit: the YouTube video
(``vid``, ``v_<id>``).

Annotation noise: windows ending past ``duration`` (train 29, val_1 5, val_2 1; at
most 0.01 s) are clipped and counted when truth is attached; windows with start >
end (train 2) are rejected with that reason (``on_error='reject'`` sets them aside).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cover.io.caption_dict import is_caption_dict, read_caption_dict
from cover.io.jsonl import OnError
from cover.io.qvhighlights import Loaded

UNIT = "source video: the YouTube id (`vid` = `v_<id>`)"


def sniff(doc: Any) -> bool:
    return is_caption_dict(doc, ("duration",)) and "fps" not in next(iter(doc.values()))


def read_activitynet_captions(path: str | Path, *, on_error: OnError = "raise",
                              doc: Any = None) -> Loaded:
    """Read an ActivityNet Captions split file; T is the file's ``duration``."""
    return read_caption_dict(path, time_base=lambda e: (float(e["duration"]), 1.0),
                             on_error=on_error, doc=doc)
