"""Typed decode of Moment-DETR prediction lines: only the fields a command reads, each
to the type the per-row reader accepts without a message, as columns.

The bulk reader (:mod:`cover.io.jsonl_batch`) parses each line into a dict of Python
objects, then takes the fields out of the dicts. Here each line is decoded by msgspec
into a small struct of the fields the certify step reads (``qid``, ``vid``, ``query``,
``duration``, the stds, ``pred_relevant_windows``, and ``pred_saliency_scores`` for a
command that reads the signal); every other field is skipped without building a
Python object. For a command that does not read the signal (NORM, SEC, SIGMA) the
saliency scores are not decoded at all: they are kept as raw bytes and checked to be
what the per-row reader takes without a message (a list of finite numbers, or null),
by byte classes over the batch (:func:`raw_number_lists`).

Typing is the first half of the checks: a number field refuses a string, a boolean,
an object or an integer beyond float range; a list of floats refuses everything but
numbers. Whatever the structs refuse (and any line that is not valid UTF-8, which
msgspec does not check in a skipped field and the per-row reader rejects) makes
:func:`typed_chunk` return None, and the batch goes to the per-row reader as before,
which says what is wrong. The rest of the checks are the bulk reader's, over numpy
columns.
"""

from __future__ import annotations

from array import array
from itertools import chain
from operator import attrgetter
from typing import Any

import msgspec
import numpy as np
from msgspec import UNSET, Raw, UnsetType
from numpy.typing import NDArray

__all__ = ["raw_number_lists", "typed_chunk"]


class _Row(msgspec.Struct):
    """The fields of a prediction row the certify step reads (the signal aside)."""

    qid: int | str
    vid: int | str
    query: Any = None
    duration: float | None = None
    start_std: float | None = None
    end_std: float | None = None
    pred_relevant_windows: list[list[float]] | UnsetType | None = UNSET
    cover: Raw | UnsetType = UNSET  # only whether it is there: its block is replaced


class _WithSignal(_Row):
    pred_saliency_scores: list[float] | UnsetType | None = UNSET


class _NoSignal(_Row):
    pred_saliency_scores: Raw | UnsetType = UNSET


_DECODE = {True: msgspec.json.Decoder(_WithSignal).decode,
           False: msgspec.json.Decoder(_NoSignal).decode}
_NUMBER_LISTS = msgspec.json.Decoder(list[list[float] | None])
_FIELDS = attrgetter("qid", "vid", "query", "duration", "start_std", "end_std",
                     "pred_relevant_windows", "pred_saliency_scores", "cover")

#: Byte classes of raw saliency lists: digits "0", a number's other characters and
#: JSON blanks " ", "[" kept, the line separator kept, anything else (a letter: an
#: exponent, null, true; a quote; a brace) "x".
_CLASSES = bytes(
    ord("0") if chr(b).isdigit() and b < 128 else
    ord(" ") if chr(b) in ".-+,] \t\r" else
    b if chr(b) in "[\n" else ord("x") for b in range(256))
#: A run of this many digits may be a number beyond float range (1e309 has 310).
_LONG_DIGITS = b"0" * 309


def typed_chunk(lines: list[bytes], signal: bool) -> tuple[Any, ...] | None:
    """The columns :func:`cover.io.jsonl_batch.decode_batch` joins, for a few lines
    decoded typed (the records are not kept), or None when any line needs the per-row
    reader. ``signal=False``: the saliency scores are checked, not read (the signal
    columns are empty)."""
    from cover.io.jsonl_batch import flat_windows, list_lengths, text_ids

    if not all(map(bytes.isascii, lines)) and not _utf8(lines):
        return None
    try:
        rows = list(map(_DECODE[signal], lines))
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    cols = list(zip(*map(_FIELDS, rows), strict=True))
    qv, vv, query, dur, std_s, std_e, win, sal, cov = map(list, cols)
    if text_ids(qv) is None or text_ids(vv) is None:
        return None
    if UNSET in win and any(w is UNSET and s is UNSET for w, s in zip(win, sal, strict=True)):
        return None  # neither field: the per-row reader says which is missing
    got = flat_windows(_lists(win))
    if got is None:
        return None
    if signal:
        sal = _lists(sal)
        flat = np.frombuffer(array("d", chain.from_iterable(sal)), dtype=np.float64)
        signal_cols = (flat, list_lengths(sal))
    else:
        if not raw_number_lists([s for s in sal if s is not UNSET] if UNSET in sal else sal):
            return None
        signal_cols = (np.empty(0), np.zeros(len(rows), dtype=np.int64))
    scal = [_column(v) for v in (dur, std_s, std_e)]
    values = np.column_stack([v for v, _ in scal]).ravel()
    present = np.column_stack([p for _, p in scal]).ravel()
    return ([], qv, vv, query, cov.count(UNSET) != len(cov), got[0], got[1],
            *signal_cols, values, present)


def raw_number_lists(raws: list[Raw]) -> bool:
    """Whether every raw JSON value is a list of finite numbers or null (what the
    per-row reader takes as saliency scores without a message). The plain case (flat
    lists of numbers without exponents or runs of 309 digits) is told by byte classes
    over all of them at once; anything else is decoded, as floats, to be sure."""
    if not raws:
        return True
    classes = b"\n".join(raws).translate(_CLASSES)
    if (b"x" not in classes and _LONG_DIGITS not in classes and classes[:1] == b"["
            and classes.count(b"[") == len(raws) and classes.count(b"\n[") == len(raws) - 1):
        return True  # each value: "[" then numbers, commas and blanks, then "]"
    try:
        _NUMBER_LISTS.decode(b"[" + b",".join(raws) + b"]")
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False
    return True


def _lists(vals: list[Any]) -> list[Any]:
    """Absent and null read as ``[]``."""
    if UNSET in vals or None in vals:
        return [[] if v is None or v is UNSET else v for v in vals]
    return vals


def _utf8(lines: list[bytes]) -> bool:
    try:
        for line in lines:
            line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _column(vals: list[float | None]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """A number per row (NaN where absent or null) and where present."""
    if None not in vals:
        return np.array(vals, dtype=np.float64), np.ones(len(vals), dtype=bool)
    present = np.array([v is not None for v in vals], dtype=bool)
    return np.array([np.nan if v is None else v for v in vals], dtype=np.float64), present

