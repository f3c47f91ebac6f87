"""Time mentions in free text: find them, read them as seconds, and write them back.

A *token* is one time mention with its position in the text and its notation:

* ``hh:mm:ss`` — ``0:00:05``, ``00:01:02.5`` (hours, minutes, seconds);
* ``mm:ss`` — ``0:05``, ``12:30.5`` (minutes, seconds);
* ``seconds`` — a number with a unit: ``5 s``, ``5.0s``, ``5 seconds``, ``2 min``,
  ``1 min 30 s``, ``1h`` (the unit's factor is kept so a bare partner in a range
  inherits it: ``2 to 3 minutes``);
* ``percent`` — ``25%``, ``25 percent`` (of the video's duration);
* ``frame`` — a number after the word frame: ``frame 12``, ``frames 12``;
* ``bare`` — a number with no unit, read by the caller's rule (seconds by default,
  percent, VTimeLLM-style 0-100 bins, or frame indices);
* ``video_start`` / ``video_end`` — "the beginning of the video", "the end of the clip".

A minus sign written against a number (``-5``, ``start: -1``, ``from -5 to 10``,
``frame -3``) makes it negative; a dash right after another time (``0-10``,
``0 -10``) is a range, not a sign. A clock time that cannot exist (seconds >= 60 in
``mm:ss``; minutes or seconds >= 60 in ``hh:mm:ss``: ``00:75``, ``00:61:61``) is kept
as a token with a ``problem`` so the answer fails with that reason instead of being
read as some other time. Minutes >= 60 in ``mm:ss`` (``75:30``) are a long video's
time, and are read.

:func:`format_time` writes seconds back in every notation, so a formatted
interval parses back to itself (property-tested).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["hh:mm:ss", "mm:ss", "seconds", "percent", "frame", "bare",
               "video_start", "video_end"]

_NUM = r"\d{1,18}(?:\.\d{1,18})?"
_SEC_UNIT = r"(?:seconds?|secs?|s)"
_MIN_UNIT = r"(?:minutes?|mins?|m)"
_HOUR_UNIT = r"(?:hours?|hrs?|h)"
_VIDEO = r"(?:video|clip|footage|recording)"

# One alternation, tried left to right at each position: compound units first, then
# clock times, then frames, then numbers with an optional unit. Every piece is
# bounded (no nested unbounded repeats), so matching stays linear in the text length.
_TOKEN = re.compile(
    rf"(?P<hms>(?<![\w.:])(?P<h>\d{{1,3}}):(?P<hm>\d{{1,2}}):(?P<hs>\d{{1,2}}(?:\.\d{{1,9}})?)"
    rf"(?![\d:]|\.\d))"
    rf"|(?P<ms>(?<![\w.:])(?P<m>\d{{1,4}}):(?P<msec>\d{{1,2}}(?:\.\d{{1,9}})?)(?![\d:]|\.\d))"
    rf"|(?P<cmp>(?<![\w.])(?P<ch>{_NUM})\s?{_MIN_UNIT}\s?(?:and\s)?(?P<cs>{_NUM})\s?{_SEC_UNIT}\b)"
    rf"|(?P<frame>\bframes?\s?(?:#|no\.|number|index|idx)?\s?(?P<fneg>[-\u2212])?"
    rf"(?P<fv>\d{{1,9}})(?!\d|\.\d))"
    rf"|(?P<num>(?<![\w.:])(?P<nv>{_NUM})(?![\d:]|\.\d)"
    rf"(?:\s?(?P<pct>%|percent\b)|\s?(?P<hu>{_HOUR_UNIT})\b|\s?(?P<mu>{_MIN_UNIT})\b"
    rf"|\s?(?P<su>{_SEC_UNIT})\b)?)"
    rf"|(?P<vstart>\bthe\s(?:very\s)?(?:beginning|start)(?:\sof\sthe\s{_VIDEO})?\b)"
    rf"|(?P<vend>\bthe\s(?:very\s)?end(?:\sof\sthe\s{_VIDEO})?\b(?!\stime))",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Token:
    """One time mention: ``text[start:end]``, its number (in the unit of ``kind``;
    seconds for clock and unit notations; negative when a minus sign precedes it), its
    notation, and why it cannot be a time (``problem``, for impossible clock times)."""

    start: int
    end: int
    value: float
    kind: Kind
    problem: str | None = None


_MINUS = "-\u2212"  # hyphen-minus and the minus sign (an en dash is a range dash)


def _negative(text: str, start: int, prev_end: int | None) -> bool:
    """Whether a minus sign directly before ``text[start]`` is the number's sign: not
    when only spaces separate it from the previous time (``0-10``, ``0 -10`` are ranges)
    and not inside a word (``Qwen-7``)."""
    k = start - 1
    if k < 0 or text[k] not in _MINUS:
        return False
    if prev_end is not None and not text[prev_end:k].strip():
        return False
    return k == 0 or not (text[k - 1].isalnum() or text[k - 1] in "._%")


def _clock_problem(frag: str, minutes: str | None, seconds: str) -> str | None:
    """Why a clock time cannot exist (minutes or seconds >= 60), or ``None``."""
    if float(seconds) >= 60:
        return f"impossible clock time {frag}: its seconds ({seconds}) must be below 60"
    if minutes is not None and int(minutes) >= 60:
        return f"impossible clock time {frag}: its minutes ({minutes}) must be below 60"
    return None


def tokenize(text: str) -> list[Token]:
    """Every time mention in ``text``, left to right, non-overlapping."""
    out: list[Token] = []
    for m in _TOKEN.finditer(text):
        g = m.groupdict()
        value: float
        kind: Kind
        problem = None
        if g["hms"]:
            value = int(g["h"]) * 3600 + int(g["hm"]) * 60 + float(g["hs"])
            kind = "hh:mm:ss"
            problem = _clock_problem(g["hms"], g["hm"], g["hs"])
        elif g["ms"]:
            value = int(g["m"]) * 60 + float(g["msec"])
            kind = "mm:ss"
            problem = _clock_problem(g["ms"], None, g["msec"])
        elif g["cmp"]:
            value = float(g["ch"]) * 60 + float(g["cs"])
            kind = "seconds"
        elif g["frame"]:
            value = -float(g["fv"]) if g["fneg"] else float(g["fv"])
            kind = "frame"
        elif g["num"]:
            value = float(g["nv"])
            if g["pct"]:
                kind = "percent"
            elif g["hu"]:
                value, kind = value * 3600, "seconds"
            elif g["mu"]:
                value, kind = value * 60, "seconds"
            elif g["su"]:
                kind = "seconds"
            else:
                kind = "bare"
        elif g["vstart"]:
            value, kind = 0.0, "video_start"
        else:
            value, kind = math.nan, "video_end"
        if kind not in ("video_end",) and not math.isfinite(value):
            continue
        start = m.start()
        if kind not in ("video_start", "video_end") and _negative(
                text, start, out[-1].end if out else None):
            value, start = -value, start - 1
        out.append(Token(start, m.end(), value, kind, problem))
    return out


def unit_factor(text: str, tok: Token) -> float:
    """Seconds per unit of a ``seconds`` token as written (60 for ``3 min``), so a
    bare partner in a range (``2 to 3 minutes``) can inherit the unit."""
    frag = text[tok.start:tok.end].lower()
    if re.search(rf"\d\s?{_HOUR_UNIT}$", frag):
        return 3600.0
    if re.search(rf"\d\s?{_MIN_UNIT}$", frag):
        return 60.0
    return 1.0


Notation = Literal["seconds", "s", "mm:ss", "hh:mm:ss", "percent", "frames", "bins"]
NOTATIONS: tuple[Notation, ...] = ("seconds", "s", "mm:ss", "hh:mm:ss", "percent", "frames",
                                   "bins")


def format_time(t: float, notation: Notation, *, duration: float | None = None,
                fps: float | None = None, decimals: int = 3) -> str:
    """Write ``t`` seconds in ``notation`` (the inverse of the parser's reading).

    ``seconds`` gives ``12.5``, ``s`` gives ``12.5s``, ``mm:ss`` gives ``0:12.5``,
    ``hh:mm:ss`` gives ``00:00:12.5``; ``percent`` and ``bins`` need ``duration``
    (``100 * t / duration``), ``frames`` needs ``fps`` (``round(t * fps)``).

    >>> format_time(75.5, "mm:ss"), format_time(3725, "hh:mm:ss"), format_time(2, "s")
    ('1:15.5', '01:02:05', '2s')
    """
    if notation in ("percent", "bins"):
        if not duration:
            raise ValueError(f"{notation} notation needs a duration")
        v = _num(100.0 * t / duration, decimals)
        return f"{v}%" if notation == "percent" else v
    if notation == "frames":
        if not fps:
            raise ValueError("frame notation needs fps")
        return f"frame {round(t * fps)}"
    if notation in ("seconds", "s"):
        v = _num(t, decimals)
        return v + ("s" if notation == "s" else "")
    whole = math.floor(round(t, decimals))
    frac = round(t - whole, decimals)
    sec = _num(whole % 60 + frac, decimals)
    sec = ("0" + sec) if (whole % 60) < 10 else sec
    if notation == "mm:ss":
        return f"{whole // 60}:{sec}"
    return f"{whole // 3600:02d}:{(whole // 60) % 60:02d}:{sec}"


def _num(v: float, decimals: int) -> str:
    s = f"{v:.{decimals}f}".rstrip("0").rstrip(".")
    return s if s else "0"
