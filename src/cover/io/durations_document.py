"""The durations of a JSON document ``vid -> {"duration": seconds, ...}`` read typed.

Charades' ``charades.json`` (1.8 MB, ~9,800 videos) holds each video's actions beside
its duration; parsing it whole builds every one of them as Python objects (~85 ms),
for one number a video. msgspec decodes the same bytes into the ``duration`` field
alone and skips the rest without building an object (~7 ms).

It is a fast path, not a second reader: it answers only where the whole-document read
(:func:`cover.io.durations.read_video_index`) would give the same videos and durations
without a word, and None otherwise, so that read runs and says what it says. The two
parsers accept the same documents but for numbers that overflow a double in a field
msgspec skips (orjson rejects ``1e400`` anywhere), so a document with a number that
may (an exponent of three digits, or 200 digits in a row) is left to the whole read, as
is one that is not UTF-8 text (msgspec does not look inside a skipped string).
"""

from __future__ import annotations

import msgspec
import numpy as np
from msgspec import UNSET, Raw, UnsetType
from numpy.typing import NDArray

from cover.io.jsonl_typed import utf8_lines


class _Video(msgspec.Struct, gc=False):
    """What the whole read looks at in a video's entry: its duration, and the two fields
    that make a TACoS split (frames + fps), which that read handles."""

    duration: float
    fps: Raw | UnsetType = UNSET
    num_frames: Raw | UnsetType = UNSET


_DECODE = msgspec.json.Decoder(dict[str, _Video]).decode
#: Each byte of a number's digits as b"1" (a digit or the point), of its exponent as
#: b"e" and b"+" (sign), any other as b" ": one pass of bytes.translate, then searches.
_NUMBER_BYTES = bytes(49 if 48 <= b <= 57 or b == 46 else 101 if b in b"eE" else
                      43 if b in b"+-" else 32 for b in range(256))
#: A number that may overflow a double: an exponent of three digits after a digit, or
#: 200 digits in a row.
_MAY_OVERFLOW = (b"1e111", b"1e+111", b"1" * 200)


def document_durations(data: bytes) -> tuple[list[str], NDArray[np.float64]] | None:
    """Each video's id (in document order) and duration, when ``data`` is a JSON object
    of videos, each an object with a finite ``duration > 0`` (a number, not a boolean),
    no top-level ``vid`` and no TACoS frames + fps; None for anything else."""
    number_bytes = data.translate(_NUMBER_BYTES)
    if any(pattern in number_bytes for pattern in _MAY_OVERFLOW):
        return None
    if not utf8_lines([data]):
        return None
    try:
        videos = _DECODE(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    if "vid" in videos:
        return None
    if videos:
        first = next(iter(videos.values()))
        if first.fps is not UNSET and first.num_frames is not UNSET:
            return None
    t = np.fromiter((v.duration for v in videos.values()), dtype=np.float64,
                    count=len(videos))
    if not (np.isfinite(t) & (t > 0)).all():
        return None
    return list(videos), t
