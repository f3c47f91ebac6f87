"""Frames out of a video file with a real decoder (PyAV / FFmpeg), as JPEG for a model.

``n`` frames are taken at the centres of ``n`` equal segments of the video,
``t_i = (i + 1/2) · T / n``: for each, the decoder seeks to the key frame before
``t_i`` and decodes forward to the frame nearest ``t_i``; the frame's own timestamp is
what the model is told. Frames are scaled so the longer side is at most ``max_side``
pixels and encoded as JPEG by FFmpeg's own encoder (no imaging library needed).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

from cover.errors import InputError
from cover.io.jsonl import json_text

#: Extensions looked for when a video is named by its id in a folder.
VIDEO_EXTENSIONS = (".mp4", ".mkv", ".webm", ".avi", ".mov", ".m4v")


@dataclass(frozen=True)
class Frame:
    """One sampled frame: its timestamp in seconds and its JPEG bytes."""

    time: float
    jpeg: bytes


@dataclass(frozen=True)
class VideoSample:
    """The frames of one video and what the decoder says about the video."""

    path: str
    duration: float
    fps: float | None
    frames: tuple[Frame, ...]


def _av() -> Any:
    try:
        import av
    except ImportError:
        raise ImportError("sampling video frames needs PyAV: pip install "
                          "'cover-grounding[video]'") from None
    return av


def outside_reason(vid: str) -> str | None:
    """Why ``vid`` cannot name a file inside a folder (``None`` when it can): an
    absolute path, a ``..`` part, an empty name or a NUL byte. A relative name with no
    ``..`` part always joins to a path inside the folder; the check is on the name, not
    on the resolved path, so links the folder's owner put inside it (a folder of links
    to a dataset store) are still followed."""
    if vid.strip() in (".", ""):
        return "is empty"
    if "\x00" in vid:
        return "holds a NUL byte"
    pure = PurePath(vid)
    if pure.is_absolute() or pure.anchor:
        return "is an absolute path"
    if ".." in pure.parts:
        return "has a '..' part"
    return None


def find_video(folder: str | Path, vid: str) -> Path | None:
    """``folder/<vid><ext>`` for the first known extension that exists (or ``vid`` as a
    file name with its extension). A ``vid`` that would reach outside ``folder``
    (:func:`outside_reason`) is an :class:`InputError`, never opened."""
    why = outside_reason(vid)
    if why is not None:
        raise InputError(f"the vid {json_text(vid, 120)} {why}: a video must be a file inside "
                         f"{folder}")
    d = Path(folder)
    try:
        if (d / vid).is_file():
            return d / vid
        for ext in VIDEO_EXTENSIONS:
            p = d / f"{vid}{ext}"
            if p.is_file():
                return p
    except OSError as exc:  # e.g. a name too long for the file system
        raise InputError(f"the vid {json_text(vid)} cannot be looked up in {folder} "
                         f"({exc.strerror or exc})") from None
    return None


def _scaled(width: int, height: int, max_side: int) -> tuple[int, int]:
    """Keep the aspect ratio, longer side <= ``max_side``, even sizes (JPEG 4:2:0)."""
    k = min(1.0, max_side / max(width, height))
    return max(2, int(width * k) // 2 * 2), max(2, int(height * k) // 2 * 2)


def _jpeg(av: Any, frame: Any, max_side: int) -> bytes:
    w, h = _scaled(frame.width, frame.height, max_side)
    enc = av.CodecContext.create("mjpeg", "w")
    enc.width, enc.height, enc.pix_fmt = w, h, "yuvj420p"
    enc.time_base = frame.time_base or av.time_base
    packets = enc.encode(frame.reformat(width=w, height=h, format="yuvj420p"))
    packets += enc.encode(None)
    return b"".join(bytes(p) for p in packets)


def sample_frames(path: str | Path, n: int = 16, *, max_side: int = 448) -> VideoSample:
    """``n`` frames at the segment centres of the video at ``path`` (module docstring)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    av = _av()
    try:
        container = av.open(str(path))
    except (av.error.FFmpegError, OSError) as exc:
        raise InputError(f"{path}: cannot open the video ({exc})") from None
    with container:
        if not container.streams.video:
            raise InputError(f"{path}: no video stream")
        stream = container.streams.video[0]
        duration = _duration(container, stream)
        if not duration or duration <= 0:
            raise InputError(f"{path}: the video's duration is unknown")
        fps = float(stream.average_rate) if stream.average_rate else None
        frames: list[Frame] = []
        for i in range(n):
            t = (i + 0.5) * duration / n
            try:
                frame = _frame_near(container, stream, t)
                if frame is not None:
                    frames.append(Frame(float(frame.time), _jpeg(av, frame, max_side)))
            except (av.error.FFmpegError, OSError) as exc:
                # damaged files surface as FFmpeg errors, some mapped to plain OSErrors
                raise InputError(f"{path}: cannot decode the video near {t:.3f} s "
                                 f"({exc})") from None
            if frame is None:
                raise InputError(f"{path}: no frame could be decoded near {t:.3f} s")
    return VideoSample(str(path), duration, fps, tuple(frames))


def _duration(container: Any, stream: Any) -> float | None:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return float(container.duration) / 1_000_000  # av.time_base = 1/1e6
    return None


def _frame_near(container: Any, stream: Any, t: float) -> Any:
    """The decoded frame whose timestamp is nearest ``t`` (seek to the key frame before
    ``t``, then decode forward)."""
    container.seek(max(0, int(t / stream.time_base)), stream=stream, backward=True,
                   any_frame=False)
    before = None
    for frame in container.decode(stream):
        if frame.time is None:
            continue
        if frame.time >= t:
            if before is None or frame.time - t < t - before.time:
                return frame
            return before
        before = frame
    return before
