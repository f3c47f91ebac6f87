"""The five reading stages of :mod:`cover.grounders.parse.extract`, most explicit first:
start/end fields, start and end named in prose, ranges, relative positions, a lone time.
Each fills an :class:`~cover.grounders.parse.reading.Extract` in place.
"""

from __future__ import annotations

import bisect
import re

from cover.grounders.parse.notation import Token
from cover.grounders.parse.reading import Context, Extract, Unreadable, kind_name, to_seconds

# ---- stage 1: keyed values -----------------------------------------------------------
_LABEL_WORDS = r"(?P<lab>start|begin|beginning|onset|end|stop|finish)"
_KEYED = re.compile(
    rf"[\"'`*]{{0,3}}\b{_LABEL_WORDS}(?:[ _-]?(?:time(?:stamp)?|sec(?:ond)?s?|frame|point|"
    rf"idx|index|s))?\b[\"'`*]{{0,3}}\s{{0,3}}[:=][\s\"'`*]{{0,6}}",
    re.IGNORECASE,
)
_NULL = re.compile(r"(?:null|none|nil|n/a|unknown|not\s(?:found|available|given|provided|"
                   r"mentioned|specified|applicable|clear|visible|known))\b", re.IGNORECASE)


def _is_start(label: str) -> bool:
    """Whether a label word names the start (start, starts, begins, onset ...)."""
    word = label.lower()
    return word.startswith(("start", "begin")) or word == "onset"


def _token_at(tokens: list[Token], pos: int, limit: int) -> int | None:
    """Index of the first token starting in ``[pos, limit)`` (binary search)."""
    i = bisect.bisect_left(tokens, pos, key=lambda t: t.start)
    return i if i < len(tokens) and tokens[i].start < limit else None


def _read_value(text: str, tokens: list[Token], i: int, j: int | None, ctx: Context,
                out: Extract) -> tuple[float, float] | None:
    """Token ``i`` (or the range ``i`` .. ``j``) in seconds as ``(lo, hi)``, its notation
    noted in ``out.kinds``; ``None``, with ``out.problem`` set, when it cannot be read."""
    try:
        lo = to_seconds(text, tokens[i], ctx, like=tokens[j] if j is not None else None)
        hi = lo if j is None else to_seconds(text, tokens[j], ctx, like=tokens[i])
    except Unreadable as exc:
        out.problem = str(exc)
        return None
    out.kinds.add(kind_name(tokens[i], ctx, tokens[j] if j is not None else None))
    return lo, hi


def keyed(text: str, tokens: list[Token], ctx: Context, out: Extract) -> None:
    pending: tuple[float, float] | None = None  # a start, as (lo, hi) when given as a range
    matches = list(_KEYED.finditer(text))
    for n, m in enumerate(matches):
        start = _is_start(m.group("lab"))
        if _NULL.match(text, m.end()):
            out.nulls = True
            continue
        i = _token_at(tokens, m.end(), m.end() + 1)
        if i is None:
            continue
        limit = matches[n + 1].start() if n + 1 < len(matches) else len(text)
        j = _range_after(text, tokens, i, limit)
        read = _read_value(text, tokens, i, j, ctx, out)
        if read is None:
            continue
        lo, hi = read
        if start:
            if pending is None:
                pending = (lo, hi)
            continue
        e = (lo + hi) / 2
        if pending is None:
            if out.end_only is None:
                out.end_only = e
            continue
        if pending[0] != pending[1] or lo != hi:
            out.notes.append("a start or end given as a range is read as its midpoint")
        iv = ((pending[0] + pending[1]) / 2, e)
        out.add(iv)
        pending = None
    if out.intervals or pending is not None or out.end_only is not None:
        out.how = "keyed"
        if not out.intervals and pending is not None:
            if pending[0] != pending[1]:
                out.intervals.append(pending)  # "start: 5 - 9" and no end: the range
            else:
                out.start_only = pending[0]


# ---- stage 2: labelled prose ---------------------------------------------------------
_JOINT = re.compile(
    r"\bstart(?:ing)?(?:\s(?:times?|timestamps?|points?))?\s(?:and|&|/)\s(?:the\s)?"
    r"end(?:ing)?(?:\s(?:times?|timestamps?|points?))?\b", re.IGNORECASE)
_LABEL = re.compile(
    r"\b(?P<lab>start(?:s|ing|ed)?|begin(?:s|ning)?|onset|end(?:s|ing|ed)?|"
    r"finish(?:es|ed|ing)?|stop(?:s|ped)?)\b(?!\s(?:of|up)\b)", re.IGNORECASE)
# A negated label is narrative, not a bound: "can't stop laughing", "does not end until".
_NEGATED = re.compile(r"(?:n['’]t|\bnot|\bnever|\bcannot)\s{1,3}\Z", re.IGNORECASE)
_REACH = 100  # characters after a label in which its time must appear


def _range_after(text: str, tokens: list[Token], i: int, limit: int) -> int | None:
    """Index of the token that closes a range opened by token ``i`` (before ``limit``)."""
    j = i + 1
    if j < len(tokens) and tokens[j].start < limit and _connects(text, tokens[i], tokens[j]):
        return j
    return None


def labelled(text: str, tokens: list[Token], ctx: Context, out: Extract) -> None:
    joint = list(_JOINT.finditer(text))
    joint_starts = [j.start() for j in joint]

    def in_joint(pos: int) -> bool:
        k = bisect.bisect_right(joint_starts, pos) - 1
        return k >= 0 and pos < joint[k].end()

    spans = sorted([(m.start(), m.end(), "joint") for m in joint] +
                   [(m.start(), m.end(), "start" if _is_start(m.group("lab")) else "end")
                    for m in _LABEL.finditer(text) if not in_joint(m.start())
                    and not _NEGATED.search(text, max(0, m.start() - 12), m.start())])
    pending: tuple[float, float] | None = None  # start as (lo, hi) when given as a range
    for k, (_, end, what) in enumerate(spans):
        limit = min(spans[k + 1][0] if k + 1 < len(spans) else len(text), end + _REACH)
        i = _token_at(tokens, end, limit)
        if i is None:
            continue
        j = _range_after(text, tokens, i, limit)
        if what == "joint":
            if j is None and i + 1 < len(tokens) and tokens[i + 1].start < limit:
                j = i + 1
            if j is None:
                continue
        read = _read_value(text, tokens, i, j, ctx, out)
        if read is None:
            continue
        lo, hi = read
        if what == "joint":
            out.intervals.append((lo, hi))
            break
        if what == "start":
            if pending is None:
                pending = (lo, hi)
            continue
        if pending is None:
            if out.end_only is None:  # an end before any start: reasoning, or end-only
                out.end_only = lo if lo == hi else (lo + hi) / 2
            continue
        s = pending[0] if pending[0] == pending[1] else (pending[0] + pending[1]) / 2
        e = lo if lo == hi else (lo + hi) / 2
        if pending[0] != pending[1] or lo != hi:
            out.notes.append("a start or end given as a range is read as its midpoint")
        out.intervals.append((s, e))
        break
    if out.intervals:
        out.how = "labelled"
    elif pending is not None:
        out.how = "labelled"
        if pending[0] != pending[1]:
            out.intervals.append(pending)  # "starts from X to Y": the range is the answer
        else:
            out.start_only = pending[0]
    elif out.end_only is not None:
        out.how = "labelled"


# ---- stage 3: ranges -----------------------------------------------------------------
_SEP = re.compile(r"\s{0,3}(?:-{1,2}|–|—|~|to|until|till|through|thru|and|,)\s{0,3}\Z",
                  re.IGNORECASE)
# "X and continues until Y", "X and doesn't stop until Y": a narrative range, as
# explicit as "X until Y" (at most four words between "and" and "until").
_GOES_ON = re.compile(r"\s{0,3},?\s{0,3}and\s(?:[\w'’]{1,15}\s){0,4}(?:until|till|through)"
                      r"\s{0,3}\Z", re.IGNORECASE)
_BETWEEN = re.compile(r"between\s{0,3}\Z", re.IGNORECASE)
_OPEN = re.compile(r"[\[(]\s{0,3}\Z")
_CLOSE = re.compile(r"\s{0,3}[\])]")


def _connects(text: str, a: Token, b: Token) -> bool:
    """Whether the text between tokens ``a`` and ``b`` makes them one range."""
    gap = text[a.end:b.start]
    if len(gap) <= 90 and _GOES_ON.match(gap):
        return a.kind != "video_end" and b.kind != "video_start"
    if len(gap) > 12 or not _SEP.match(gap):
        return False
    word = gap.strip().lower()
    if word == "and":
        return bool(_BETWEEN.search(text, max(0, a.start - 12), a.start))
    if word == ",":
        return bool(_OPEN.search(text, max(0, a.start - 4), a.start)
                    and _CLOSE.match(text, b.end))
    return a.kind != "video_end" and b.kind != "video_start"


def ranges(text: str, tokens: list[Token], ctx: Context, out: Extract) -> None:
    i = 0
    while i + 1 < len(tokens):
        a, b = tokens[i], tokens[i + 1]
        if not _connects(text, a, b):
            i += 1
            continue
        if a.kind.startswith("video") and b.kind.startswith("video"):
            i += 2  # "from the beginning to the end": no time stated
            continue
        try:
            iv = (to_seconds(text, a, ctx, like=b), to_seconds(text, b, ctx, like=a))
        except Unreadable as exc:
            out.problem = str(exc)
            i += 2
            continue
        out.kinds.add(kind_name(a, ctx, b))
        out.kinds.add(kind_name(b, ctx, a))
        out.add(iv)
        i += 2
    if out.intervals:
        out.how = "range"


# ---- stage 4: relative positions ----------------------------------------------------
_ORDINAL = {"first": 0, "second": 1, "third": 2, "fourth": 3, "middle": -2, "last": -1,
            "final": -1}
_PARTS = {"half": 2, "third": 3, "quarter": 4}
_RELATIVE = re.compile(
    r"\b(?P<ord>first|second|third|fourth|middle|last|final)\s(?P<part>half|third|quarter)\b"
    r"|\b(?P<whole>entire|whole|full)\s(?:video|clip)\b", re.IGNORECASE)


def relative(text: str, ctx: Context, out: Extract) -> None:
    for m in _RELATIVE.finditer(text):
        if ctx.duration is None:
            out.problem = "a relative position ('the first half') needs the video duration"
            return
        if m.group("whole"):
            lo, hi = 0.0, 1.0
        else:
            n = _PARTS[m.group("part").lower()]
            k = _ORDINAL[m.group("ord").lower()]
            k = n // 2 if k == -2 else (n - 1 if k == -1 else k)
            if k >= n:
                continue
            lo, hi = k / n, (k + 1) / n
        iv = (lo * ctx.duration, hi * ctx.duration)
        out.add(iv)
    if out.intervals:
        out.how = "relative"
        out.kinds.add("relative")


# ---- stage 5: a lone time ------------------------------------------------------------
_AT = re.compile(r"(?:\bat|around|about|approximately|approx\.|~|@)\s{0,3}\Z", re.IGNORECASE)


def lone(text: str, tokens: list[Token], ctx: Context, out: Extract) -> None:
    """One explicit time and nothing else: a start with no end. Several unconnected
    times are not guessed into an interval."""
    timed = [t for t in tokens if t.kind in ("hh:mm:ss", "mm:ss", "seconds", "percent", "frame")
             or (t.kind == "bare" and _AT.search(text, max(0, t.start - 16), t.start))]
    values: set[float] = set()
    for t in timed:
        try:
            values.add(to_seconds(text, t, ctx))
        except Unreadable as exc:
            out.problem = str(exc)
    if len(values) == 1:
        out.start_only = values.pop()
        out.kinds.add(kind_name(timed[0], ctx))
        out.how = "lone"
    elif len(values) > 1:
        out.problem = (f"{len(values)} times with no start/end or range structure; "
                       "not guessed into an interval")
