"""Charades-CD ground truth (the "changing distribution" re-split of Charades-STA, as
redistributed by MomentDiff: ``charades_{train,val,test_iid,test_ood}.json``).

``vid -> {timestamps: [[s, e], ...] in seconds, sentences, video_duration, framestamps,
decode_fps, ...}``. T is the file's ``video_duration`` (the decoded length the
re-split's grounders see; it can differ slightly from ``charades.json``). Ends past
it (151 test_iid, 348 test_ood) are clipped and counted when truth is attached.
qid ``<vid>_<i>``; split unit: the Charades video id (``vid``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cover.io.caption_dict import is_caption_dict, read_caption_dict
from cover.io.jsonl import OnError
from cover.io.qvhighlights import Loaded

UNIT = "source video: the Charades video id (`vid`)"


def sniff(doc: Any) -> bool:
    return is_caption_dict(doc, ("video_duration",))


def read_charades_cd(path: str | Path, *, on_error: OnError = "raise",
                     doc: Any = None) -> Loaded:
    """Read a Charades-CD split file (seconds; T = ``video_duration``)."""
    return read_caption_dict(path, time_base=lambda e: (float(e["video_duration"]), 1.0),
                             on_error=on_error, doc=doc)
