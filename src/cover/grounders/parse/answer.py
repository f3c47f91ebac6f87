"""One answer in, one :class:`ParsedAnswer` out: interval(s) or a classified non-answer.

Classes (``ParsedAnswer.status``):

* ``ok`` — one or more intervals with positive length inside the video;
* ``zero_length`` — the only interval(s) start where they end ("00:00:00 to 00:00:00");
* ``start_only`` — a start and no end (``start`` holds it);
* ``out_of_range`` — every interval starts at or after the end of the video;
* ``echo`` — the answer repeats an example from the prompt (``prompt_examples``);
* ``refusal`` — no time, and the model declines or says the moment is not there
  ("I'm sorry, but I cannot ...", "not provided in the video", JSON nulls);
* ``failure`` — no readable time and no refusal (narrative, a template with no
  numbers, an end with no start, times with no interval structure), a clock time that
  cannot exist (``00:75``, ``00:61:61``), or a negative time (``from -5 to 10``).

Downstream, only ``ok`` and ``zero_length`` are predictions; every other class is a
refusal, certified as the whole video (never dropped).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from cover.grounders.parse.extract import BareRule, Context, Extract, extract, quoted_ranges

Status = Literal["ok", "refusal", "echo", "failure", "start_only", "zero_length",
                 "out_of_range"]
STATUSES: tuple[Status, ...] = get_args(Status)
#: Classes whose intervals are used as the grounder's prediction.
ANSWERED: tuple[Status, ...] = ("ok", "zero_length")


@dataclass(frozen=True)
class ParsedAnswer:
    """The reading of one free-text answer.

    ``intervals`` are in seconds, as the text states them (reversed bounds swapped;
    intervals starting past the video's end removed); ``status`` says whether to use
    them; ``reason`` says why in words; ``notation`` names how the times were written
    (``hh:mm:ss``, ``mm:ss``, ``seconds``, ``percent``, ``bins``, ``frames``,
    ``relative``; several joined by ``+``); ``start`` is the lone start of a
    ``start_only`` answer.
    """

    status: Status
    intervals: tuple[tuple[float, float], ...] = ()
    reason: str = ""
    notation: str = ""
    start: float | None = None

    @property
    def answered(self) -> bool:
        """Whether the intervals are a usable prediction."""
        return self.status in ANSWERED


_REFUSAL = re.compile(
    r"\b(?:sorry|apologi[sz]e|apologies)\b"
    r"|\bI\s(?:cannot|can't|can\snot|could\snot|couldn't|am\sunable|'m\sunable|am\snot\sable|"
    r"do\snot\shave|don't\shave|won't|will\snot|must\sdecline)\b"
    r"|\b(?:unable|not\sable)\sto\b"
    r"|\bnot\s(?:provided|available|present|shown|visible|mentioned|specified|given|found|"
    r"possible|clear|appropriate|related|a\svalid|explicitly)\b"
    r"|\b(?:cannot|can't|could\snot)\sbe\s(?:determined|found|identified|located)\b"
    r"|\b(?:does|do)(?:\snot|n't)\s(?:contain|appear|show|include|provide|mention|exist)\b"
    r"|\bas\san\sAI\b|\bno\s(?:specific|clear|relevant)\s(?:time|information|moment|start|end)",
    re.IGNORECASE,
)
_NORM = re.compile(r"\s+")
_EDGE = " \t\n\"'`.,;:!?"


def _norm(text: str) -> str:
    return _NORM.sub(" ", text.casefold()).strip(_EDGE)


def refusal_phrase(text: str) -> str | None:
    """The first refusal phrase in ``text`` (``None`` when there is none)."""
    m = _REFUSAL.search(text)
    return m.group(0) if m else None


def _echo(text: str, found: Extract, examples: Sequence[str], ctx: Context) -> str | None:
    """The prompt example ``text`` repeats: the same text (case and spacing aside), the
    example's own times as the answer's, or a range of the example's written anywhere
    in the answer in any notation ("0:10 - 0:20", "00:00:10 to 00:00:20", "10-20 s",
    also inside "End time: 0:10 - 0:20"). A true moment at exactly the example's times
    is then an echo too: the answer cannot tell the two apart."""
    body = _norm(text)
    quoted: list[tuple[float, float]] | None = None
    for ex in examples:
        norm_ex = _norm(ex)
        if not norm_ex:
            continue
        if body == norm_ex:
            return ex
        mine = extract(ex, ctx).intervals
        if not mine:
            continue
        if found.intervals and sorted(mine) == sorted(found.intervals):
            return ex
        if quoted is None:
            quoted = quoted_ranges(text, ctx)
        if any(_same(iv, q) for iv in mine for q in quoted):
            return ex
    return None


def _same(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """The same interval, bounds in either order, to a millisecond."""
    return (abs(min(a) - min(b)) < 1e-3) and (abs(max(a) - max(b)) < 1e-3)


def _positive(x: float | int | None) -> float | None:
    if x is None or isinstance(x, bool):
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) and v > 0 else None


def parse_answer(
    text: str,
    *,
    duration: float | None = None,
    fps: float | None = None,
    n_frames: int | None = None,
    prompt_examples: Sequence[str] = (),
    bare: BareRule = "seconds",
) -> ParsedAnswer:
    """Read a grounder's free-text answer as interval(s) in seconds, or classify why not.

    ``duration`` (s) is needed for percentages, 0-100 bins, relative positions and the
    out-of-range check; ``fps`` or ``n_frames`` for frame indices; ``bare`` says how a
    number with no unit is read (``seconds``; ``bins`` for VTimeLLM-style answers).
    Never raises on any text: anything unreadable is a ``failure`` with a reason.

    >>> parse_answer("The given query happens in 0 - 10 seconds.").intervals
    ((0.0, 10.0),)
    >>> parse_answer("I'm sorry, but I cannot help with that.").status
    'refusal'
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    frames = _positive(n_frames)
    ctx = Context(duration=_positive(duration), fps=_positive(fps),
                  n_frames=int(frames) if frames else None, bare=bare)
    if not text.strip():
        return ParsedAnswer("failure", reason="empty answer")
    found = extract(text, ctx)
    notation = "+".join(sorted(found.kinds))
    example = _echo(text, found, prompt_examples, ctx)
    if example is not None:
        # What the echo would have read, bounds in order like every other class's.
        return ParsedAnswer("echo", tuple((min(a, b), max(a, b)) for a, b in found.intervals),
                            f"repeats the prompt's example {example.strip()[:80]!r}", notation)
    negative = [v for iv in found.intervals for v in iv if v < 0] + [
        v for v in (found.start_only, found.end_only) if v is not None and v < 0]
    if negative:
        # Never made positive: "-5" is not "5", and no moment lies before the video.
        return ParsedAnswer("failure", reason=f"a negative time ({negative[0]:g} s): no "
                            "moment lies before the start of the video", notation=notation)
    if not found.intervals:
        if found.start_only is not None:
            return ParsedAnswer("start_only", reason=f"a start ({found.start_only:g} s) and no "
                                f"end", notation=notation, start=found.start_only)
        if found.end_only is not None:
            return ParsedAnswer("failure", reason=f"an end ({found.end_only:g} s) and no start",
                                notation=notation)
        phrase = refusal_phrase(text)
        if found.nulls:
            return ParsedAnswer("refusal", reason="the answer gives null times")
        if phrase is not None:
            return ParsedAnswer("refusal", reason=f"declines: {phrase!r}")
        return ParsedAnswer("failure", reason=found.problem or "no time found in the answer",
                            notation=notation)
    return _checked(found, ctx, notation)


def _checked(found: Extract, ctx: Context, notation: str) -> ParsedAnswer:
    """Swap reversed bounds, drop intervals starting past the video's end, and class
    the rest as ``ok`` / ``zero_length`` / ``out_of_range``."""
    notes = list(dict.fromkeys(found.notes))
    ivs: list[tuple[float, float]] = []
    for s, e in found.intervals:
        if s > e:
            s, e = e, s
            notes.append("start after end: swapped")
        ivs.append((s, e))
    T = ctx.duration
    if T is not None:
        outside = [iv for iv in ivs if iv[0] >= T and not (iv[0] == iv[1] == T)]
        if outside:
            ivs = [iv for iv in ivs if iv not in outside]
            lst = ", ".join(f"[{s:g}, {e:g}]" for s, e in outside[:3])
            if not ivs:
                return ParsedAnswer("out_of_range", tuple(outside),
                                    f"starts at or after the video's end ({T:g} s): {lst}",
                                    notation)
            notes.append(f"dropped interval(s) past the video's end: {lst}")
        if any(e > T for _, e in ivs):
            notes.append(f"ends past the video's end ({T:g} s); clipped when read")
    how = {"keyed": "start/end fields", "labelled": "start and end named in the text",
           "range": "a range", "relative": "a relative position"}.get(found.how, found.how)
    reason = f"{len(ivs)} interval(s) from {how}" + "".join(f"; {n}" for n in notes)
    if all(s == e for s, e in ivs):
        return ParsedAnswer("zero_length", tuple(ivs), reason + "; zero length", notation)
    return ParsedAnswer("ok", tuple(ivs), reason, notation)
