"""Which field of an answer file holds the answer text, and what each row's vid is.

**The answer text** (per file): the field named by ``--text-field`` when given; else,
among the fields holding text, the one whose values most often *read like answers*
(over the first 5,000 rows): a string of two or more words (not a file path) with a
digit, a time word ("second", "minute", "start", "end", ...) or a refusal phrase.
Rates within 10 points of the best are ties, which go to the usual names
(:data:`TEXT_FIELDS`, then ``*_pred`` / ``*_generation``, then the higher rate):
timestamped captions read like answers too. A query or description field rarely has
times in it; a file path, an id or a bare ``"00:00:04"`` (an already-parsed time) is
not free text. With no such field, the first of :data:`TEXT_FIELDS` present, else
the one ``*_pred`` field, else an error listing the fields.

**The vid** (the video a row belongs to, which the ground truth joins on):

1. ``--vid-field NAME``: that field of each row;
2. ``--vid-pattern REGEX``: searched in the qid; the vid is its ``vid`` group, else its
   first group, else the whole match (``'^(?P<vid>.+?)_\\d+$'`` for ``<vid>_<i>``);
3. otherwise, in the UAG-OOPS layout (rows keyed by clip name with ``start_time``,
   ``end_time``, ``description``; ``video_path`` or not), the clip's source
   compilation: the clip name without its trailing index (the split unit);
4. else the row's ``vid`` field; else the qid itself.

A row whose vid cannot be determined this way gets the qid as its vid, and the rows
concerned are counted (``vid_missing``) and said, never silently: the ground truth's
join then names them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.errors import InputError
from cover.grounders.parse.answer import refusal_phrase
from cover.io.jsonl import RawRows
from cover.io.peek import TEXT_FIELDS, answer_name_rank, free_text, timed_text
from cover.io.uag_oops import uag_source_video

#: Fields of a UAG-OOPS entry (``video_path`` aside): the vid is the clip's compilation.
UAG_FIELDS = frozenset({"start_time", "end_time", "description"})
_NEAR = 0.1  # rates within this of the best are ties, broken by name
_SAMPLE = 5000  # rows the rates are measured on (the first ones): enough to tell fields apart


def answer_like(value: Any) -> bool:
    """Whether ``value`` reads like a free-text answer: a string of two or more words,
    not a file path, with a digit, a time word or a refusal phrase."""
    return timed_text(value) or (free_text(value) and refusal_phrase(value) is not None)


@dataclass(frozen=True)
class TextField:
    """The answer field of a file and how it was chosen (``how``, for people)."""

    name: str
    how: str


def answer_field(raw: RawRows, wanted: str | None, skip: Sequence[str] = ()) -> TextField:
    """The field holding the answer text (module rule); ``skip`` = id fields."""
    keys = sorted({k for r in raw.records for k in r})
    shown = ", ".join(keys[:12])
    if wanted is not None:
        if wanted not in keys:
            raise InputError(f"{raw.path}: no row has the field {wanted!r} given by "
                             f"--text-field (fields: {shown})")
        return TextField(wanted, "given by --text-field")
    sample = raw.records[:_SAMPLE]
    n = max(len(sample), 1)
    rates = {k: sum(answer_like(r.get(k)) for r in sample) / n for k in keys if k not in skip}
    ranked = sorted((k for k, v in rates.items() if v > 0), key=lambda k: -rates[k])
    if ranked:
        # Timestamped captions ("0.0s: a man ...") read like answers too: among the
        # fields near the best rate, the usual answer names come first.
        near = [k for k in ranked if rates[k] >= rates[ranked[0]] - _NEAR]
        best = min(near, key=lambda k: (answer_name_rank(k), -rates[k]))
        ranked = [best] + [k for k in ranked if k != best]
        others = "; other text fields: " + ", ".join(
            f"{k} {100 * rates[k]:.0f}%" for k in ranked[1:4]) if len(ranked) > 1 else ""
        return TextField(best, f"detected: {100 * rates[best]:.0f}% of rows read like "
                               f"answers{others}")
    for f in TEXT_FIELDS:
        if f in keys:
            return TextField(f, "detected by name (no row reads like an answer)")
    preds = [k for k in keys if k.endswith("_pred")]
    if len(preds) == 1:
        return TextField(preds[0], "detected by name (no row reads like an answer)")
    raise InputError(f"{raw.path}: cannot tell which field holds the answer text "
                     f"(fields: {shown}); pass --text-field")


def text_fields_per_file(values: Sequence[str], files: Sequence[str]) -> list[str | None]:
    """``--text-field`` values, one per answer file: ``FILE=FIELD`` names the file (as
    given, or its file name); a plain ``FIELD`` given once applies to every file not
    named, given once per file it applies in file order; absent = detected."""
    named: dict[str, str] = {}
    plain: list[str] = []
    for v in values:
        path, eq, name = v.rpartition("=")
        if eq and path:
            hits = [f for f in files if path in (f, f.rsplit("/", 1)[-1])]
            if len(hits) != 1:
                raise InputError(f"--text-field {v}: {path} is "
                                 f"{'not one' if not hits else 'more than one'} of the "
                                 "answer files")
            named[hits[0]] = name
        else:
            plain.append(v)
    if len(plain) > 1 and len(plain) != len(files):
        raise InputError(f"--text-field is given {len(plain)} times for {len(files)} answer "
                         "files: give it once (every file), once per file (in file order), "
                         "or as FILE=FIELD")
    out: list[str | None] = []
    for i, f in enumerate(files):
        fallback = plain[0] if len(plain) == 1 else (plain[i] if plain else None)
        out.append(named.get(f, fallback))
    return out


@dataclass(frozen=True)
class Vids:
    """Each row's vid, the rule that gave it, and the rows it could not (vid = qid)."""

    vid: NDArray[np.str_]
    rule: str
    missing: NDArray[np.bool_]


def row_vids(raw: RawRows, qid: NDArray[np.str_], *, vid_field: str | None = None,
             vid_pattern: str | None = None, keyed: bool = False) -> Vids:
    """Each row's vid by the module rule (``keyed``: the file is a JSON object keyed by
    qid, as UAG-OOPS ships)."""
    recs = raw.records
    if vid_field is not None and vid_pattern is not None:
        raise InputError("give --vid-field or --vid-pattern, not both")
    if vid_pattern is not None:
        try:
            rx = re.compile(vid_pattern)
        except re.error as exc:
            raise InputError(f"--vid-pattern {vid_pattern!r}: not a regular expression "
                             f"({exc})") from None
        got = [_vid_of(rx.search(q)) for q in qid.tolist()]
        if recs and not any(got):
            raise InputError(f"{raw.path}: --vid-pattern {vid_pattern!r} matches no qid "
                             f"(first: {qid[0]!r})")
        return _filled(got, qid, f"--vid-pattern {vid_pattern!r} on the qid")
    field = vid_field or "vid"
    if vid_field is not None and not any(vid_field in r for r in recs):
        raise InputError(f"{raw.path}: no row has the field {vid_field!r} given by "
                         "--vid-field")
    if vid_field is None and keyed and recs and all(UAG_FIELDS <= r.keys() for r in recs):
        return Vids(uag_source_video(qid), "source compilation: the clip name without its "
                    "trailing index (UAG-OOPS layout)", np.zeros(len(recs), dtype=bool))
    got = [None if r.get(field) is None else str(r[field]) for r in recs]
    if vid_field is None and not any(got):
        return _filled(got, qid, "the qid (no row has a vid field)")
    return _filled(got, qid, f"--vid-field {vid_field}" if vid_field else "field vid")


def _vid_of(m: re.Match[str] | None) -> str | None:
    if m is None:
        return None
    if "vid" in m.re.groupindex:
        return m.group("vid")
    return m.group(1) if m.re.groups else m.group(0)


def _filled(got: list[str | None], qid: NDArray[np.str_], how: str) -> Vids:
    """``got`` with the qid standing in where it is ``None`` (or empty), counted."""
    missing = np.array([not g for g in got], dtype=bool)
    vid = np.array([q if not g else g for g, q in zip(got, qid.tolist(), strict=True)],
                   dtype=str)
    return Vids(vid, how, missing)
