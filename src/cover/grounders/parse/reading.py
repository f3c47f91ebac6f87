"""Reading one time mention as seconds, and the record the extraction stages fill.

A bare number (no unit) is read by the caller's rule (:data:`BareRule`); a bare number
in a range takes the unit of its partner (``2 to 3 minutes``, ``20-40%``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from cover.grounders.parse.notation import Token, unit_factor

BareRule = Literal["seconds", "percent", "bins", "frames"]
BARE_RULES: tuple[BareRule, ...] = ("seconds", "percent", "bins", "frames")


@dataclass(frozen=True)
class Context:
    """What the text's numbers need to become seconds: the video's duration, its
    frame rate or frame count, and how a bare number is read (seconds by default;
    ``bins`` = VTimeLLM-style 0-100 positions, ``percent``, ``frames``)."""

    duration: float | None = None
    fps: float | None = None
    n_frames: int | None = None
    bare: BareRule = "seconds"


@dataclass
class Extract:
    """What the stages found: intervals in seconds (as written, unchecked), a lone
    start, whether the answer gave explicit nulls, the notations used, the stage
    that decided, and a problem when times were seen but could not be read."""

    intervals: list[tuple[float, float]] = field(default_factory=list)
    seen: set[tuple[float, float]] = field(default_factory=set)
    start_only: float | None = None
    end_only: float | None = None
    nulls: bool = False
    kinds: set[str] = field(default_factory=set)
    how: str = ""
    notes: list[str] = field(default_factory=list)
    problem: str | None = None

    def add(self, iv: tuple[float, float]) -> None:
        """Append ``iv`` unless the same interval was already found."""
        if iv not in self.seen:
            self.seen.add(iv)
            self.intervals.append(iv)


# ---- reading one token as seconds ----------------------------------------------------
class Unreadable(ValueError):
    """A time mention that needs something the caller did not give (e.g. a duration)."""


def to_seconds(text: str, tok: Token, ctx: Context, *, like: Token | None = None) -> float:
    """Seconds of ``tok``; a bare token takes the notation of its range partner
    ``like`` when that has one (percent, frame, or a unit such as minutes)."""
    kind: str = tok.kind
    value = tok.value
    if kind == "bare" and like is not None and like.kind in ("percent", "frame"):
        kind = like.kind
    elif kind == "bare" and like is not None and like.kind == "seconds":
        return value * unit_factor(text, like)
    if kind == "bare":
        kind = {"seconds": "seconds", "percent": "percent", "bins": "percent",
                "frames": "frame"}[ctx.bare]
    if kind in ("hh:mm:ss", "mm:ss", "seconds", "video_start"):
        return value
    if kind == "video_end":
        if ctx.duration is None:
            raise Unreadable("'the end of the video' needs the video duration")
        return ctx.duration
    if kind == "percent":
        if ctx.duration is None:
            raise Unreadable("a percentage / 0-100 position needs the video duration")
        return value / 100.0 * ctx.duration
    # frame index
    if ctx.fps:
        return value / ctx.fps
    if ctx.n_frames and ctx.duration is not None:
        return value / ctx.n_frames * ctx.duration
    raise Unreadable("a frame index needs fps, or the frame count and the duration")


def kind_name(tok: Token, ctx: Context, like: Token | None = None) -> str:
    """The notation a token was read in, as reported in ``ParsedAnswer.notation``."""
    kind = tok.kind
    if kind == "bare" and like is not None and like.kind not in ("bare", "video_start",
                                                                 "video_end"):
        kind = like.kind
    if kind == "bare":
        return {"seconds": "seconds", "percent": "percent", "bins": "bins",
                "frames": "frames"}[ctx.bare]
    return {"frame": "frames", "video_start": "relative", "video_end": "relative"}.get(
        kind, kind)
