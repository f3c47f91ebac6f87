"""Find the answer's interval(s) in free text, stage by stage.

The stages run in order of how unambiguous they are, and the first that finds a
time wins (so narrative after a JSON block cannot override it):

1. **keyed** — JSON and JSON-like blocks and ``Start: ... End: ...`` lines:
   ``{"start": 00:00:00, "end": 00:00:30}``, ``start_time: 1.1, end_time: 2.1``,
   ``"start_time": null``. Every start/end pair found is one interval.
2. **labelled** — prose with start and end named separately ("the start time is 0:00
   and the end time is 0:07", "starts at 4.0s and ends at 4.2s", "the start and end
   times are 2 and 5 s"). The first pair is the answer (later pairs are reasoning).
   A start or end given as a range ("approximately 0:00 - 0:03") is read as its
   midpoint. A negated label is narrative, not a bound ("can't stop", "does not
   end"); a lone start or end found here ("begins at 0:05") gives way to any range
   of stage 3 in the same answer: explicit ranges win over narrative cue words.
3. **ranges** — ``X - Y``, ``X to Y``, ``X until Y``, "from X to Y", "between X and Y",
   "X and continues until Y" (up to four words between ``and`` and ``until``),
   ``[X, Y]``, "from X to the end of the video"; every range found is one interval.
4. **relative** — "the first half", "the last third", "the whole video" (needs the
   duration).
5. **a lone time** — a start with no end ("start-only").

Numbers are read by :mod:`cover.grounders.parse.notation`; a bare number in a range
with a unit inherits it (``2 to 3 minutes``, ``20-40%``, ``frames 10 to 40``). An
impossible clock time anywhere in the answer (``00:75``) stops the reading: no stage
runs, and ``problem`` names it.
"""

from __future__ import annotations

import re

from cover.grounders.parse.notation import tokenize
from cover.grounders.parse.reading import BARE_RULES, BareRule, Context, Extract
from cover.grounders.parse.stages import keyed, labelled, lone, ranges, relative

__all__ = ["BARE_RULES", "BareRule", "Context", "Extract", "extract", "focus",
           "quoted_ranges"]

# ---- pre-processing ------------------------------------------------------------------
_ANSWER_TAG = re.compile(r"<answer>(.{0,2000}?)</answer>", re.IGNORECASE | re.DOTALL)
_ANY_TAG = re.compile(r"</?[A-Za-z_][\w-]{0,20}(?:\s[^<>]{0,60})?/?>")
# A quoted span with three or more spaces is quoted prose (usually the query repeated
# back), whose numbers are not times.
_QUOTED = re.compile(r"\"[^\"\n]{0,400}\"|“[^”\n]{0,400}”")


def focus(text: str) -> str:
    """The part of the answer to read: the ``<answer>`` tag's content when there is one,
    with markup tags (``<time>``) blanked and quoted prose shortened to ``"..."``."""
    m = _ANSWER_TAG.search(text)
    if m and m.group(1).strip():
        text = m.group(1)
    text = _ANY_TAG.sub(" ", text)
    return _QUOTED.sub(lambda q: q.group(0) if q.group(0).count(" ") < 3 else '"..."', text)


def extract(text: str, ctx: Context) -> Extract:
    """Run the stages on ``text`` and return what the first successful one found."""
    body = focus(text)
    tokens = tokenize(body)
    out = Extract()
    bad = next((t.problem for t in tokens if t.problem), None)
    if bad is not None:
        # A time that cannot exist ("00:75") says the answer's times are not to be
        # trusted; reading the others would guess (a failure, whole video, is safe).
        out.problem = bad
        return out
    # "the beginning" / "the end of the video" only close a range with a real time;
    # next to a start or end label they are prose ("the beginning or end of the query").
    timed = [t for t in tokens if t.kind not in ("video_start", "video_end")]
    keyed(body, timed, ctx, out)
    if out.how or out.nulls:
        return out
    out.end_only = None
    labelled(body, timed, ctx, out)
    if out.how and not out.intervals:
        # A lone start or end named by a narrative verb ("begins at 0:05", "can't stop
        # from 0:03 to 0:08") never overrides an explicit range in the same answer.
        spans = Extract()
        ranges(body, tokens, ctx, spans)
        if spans.intervals:
            return spans
    if out.how:
        return out
    ranges(body, tokens, ctx, out)
    if out.how:
        return out
    relative(body, ctx, out)
    if out.how:
        return out
    lone(body, timed, ctx, out)
    return out


def quoted_ranges(text: str, ctx: Context) -> list[tuple[float, float]]:
    """Every range ``X - Y`` the answer writes anywhere (also inside start/end fields,
    where :func:`extract` reads it as a midpoint), in seconds, whatever the notation:
    what echo detection compares with the prompt's example."""
    body = focus(text)
    tokens = tokenize(body)
    if any(t.problem for t in tokens):
        return []
    out = Extract()
    ranges(body, tokens, ctx, out)
    return list(out.intervals)
