"""TACoS ground truth (the 2D-TAN split ``train/val/test.json``): frames + fps.

``"<video>.avi" -> {timestamps: [[start_frame, end_frame], ...], sentences, fps,
num_frames}``. Seconds are ``frame / fps`` and the duration ``num_frames / fps``
with the file's own per-video ``fps`` (29.4, the frame rate of the MPII Cooking
videos TACoS is cut from). Why this convention: it is the one every grounder
trained on this split uses (2D-TAN, VSLNet, Lighthouse), and Lighthouse's
``tacos_*_release.jsonl`` hold exactly these seconds, so COVER's TACoS truth equals
the truth those grounders were scored against (checked in the tests). qid
``<video>_<i>`` (Lighthouse's); split unit: the cooking video (``vid``, the
``.avi`` name without extension).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cover.io.caption_dict import is_caption_dict, read_caption_dict
from cover.io.jsonl import OnError
from cover.io.qvhighlights import Loaded

UNIT = "source video: the MPII cooking video (`vid` = `.avi` name without extension)"


def sniff(doc: Any) -> bool:
    return is_caption_dict(doc, ("fps", "num_frames"))


def _time_base(entry: dict[str, Any]) -> tuple[float, float]:
    fps = float(entry["fps"])
    if not fps > 0:
        raise ValueError(f"fps must be > 0, got {entry['fps']}")
    return float(entry["num_frames"]) / fps, 1.0 / fps


def read_tacos(path: str | Path, *, on_error: OnError = "raise", doc: Any = None) -> Loaded:
    """Read a TACoS split file, frames converted to seconds with the file's fps."""
    return read_caption_dict(path, time_base=_time_base,
                             vid_of=lambda k: k.removesuffix(".avi"), on_error=on_error, doc=doc)


def video_durations(doc: dict[str, Any]) -> tuple[list[str], list[Any]]:
    """``(vids, durations in s)`` of a TACoS split, for ``--videos``: ``num_frames / fps``
    per video, as :func:`read_tacos` computes T (None where fps or frames are unusable)."""
    vids: list[str] = []
    durs: list[Any] = []
    for key, entry in doc.items():
        vids.append(key.removesuffix(".avi"))
        try:
            durs.append(_time_base(entry)[0])
        except (KeyError, TypeError, ValueError):
            durs.append(None)
    return vids, durs
