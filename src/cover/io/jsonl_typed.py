"""Typed decode of Moment-DETR prediction lines: only the fields a command reads, each
to the type the per-row reader accepts without a message, as columns.

For the bulk reader (:mod:`cover.io.jsonl_batch`) each line is decoded by msgspec
into a small struct of the fields the certify step reads (``qid``, ``vid``, ``query``,
``duration``, the stds, ``pred_relevant_windows``, and ``pred_saliency_scores`` for a
command that reads the signal); every other field is skipped without building a
Python object. The windows are kept as raw bytes and read as one column over a chunk
of lines (:func:`raw_windows`); windows not written plainly (null, a boolean, ...) are
decoded as typed lists. For a command that does not read the signal (NORM, SEC, SIGMA)
the saliency scores are not decoded at all, only checked as raw bytes
(:func:`cover.io.raw_numbers.raw_number_lists`). (SLS's scores read as one raw column,
as the windows are, measured no faster than typed lists: the cost is one Python float
per number either way.)

Typing is the first half of the checks: a number field refuses a string, a boolean,
an object or an integer beyond float range; a list of floats refuses everything but
numbers. Whatever the structs refuse (and any line that is not valid UTF-8, which
msgspec does not check in a skipped field and the per-row reader rejects) makes
:func:`typed_chunk` return None, and the batch goes to the per-row reader as before,
which says what is wrong. The rest of the checks are the bulk reader's, over numpy
columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain
from operator import attrgetter
from typing import Any, TypeVar

import msgspec
import numpy as np
from msgspec import UNSET, Raw, UnsetType
from numpy.typing import NDArray

from cover.io.json_columns import (
    flat_values,
    flat_windows,
    list_lengths,
    scored_windows,
    text_ids,
)
from cover.io.raw_numbers import raw_number_lists, skeleton, skeleton_rows

__all__ = ["exact_values", "pairs_column", "typed_chunk", "typed_lines", "utf8_lines",
           "windows_column"]

T = TypeVar("T")


class _Row(msgspec.Struct):
    """The fields of a prediction row the certify step reads (the signal aside)."""

    qid: int | str
    vid: int | str
    query: Any = None
    duration: float | None = None
    start_std: float | None = None
    end_std: float | None = None
    pred_relevant_windows: Raw | UnsetType = UNSET  # read as a column: raw_windows
    cover: Raw | UnsetType = UNSET  # only whether it is there: its block is replaced


class _WithSignal(_Row):
    pred_saliency_scores: list[float] | UnsetType | None = UNSET


class _NoSignal(_Row):
    pred_saliency_scores: Raw | UnsetType = UNSET


_DECODE = {True: msgspec.json.Decoder(_WithSignal).decode,
           False: msgspec.json.Decoder(_NoSignal).decode}
_WINDOW_LISTS = msgspec.json.Decoder(list[list[list[float]] | None])
_PAIRS = msgspec.json.Decoder(list[list[tuple[float, float]]])
_FIELDS = attrgetter("qid", "vid", "query", "duration", "start_std", "end_std",
                     "pred_relevant_windows", "pred_saliency_scores", "cover")

#: The integers orjson reads as integers; beyond them it reads floats (msgspec: integers).
_LOW, _HIGH = -(2**63), 2**64
_PLAIN = frozenset({str, float, bool, type(None)})


def typed_chunk(lines: list[bytes], signal: bool) -> tuple[Any, ...] | None:
    """The columns :func:`cover.io.jsonl_batch.decode_batch` joins, for a few lines
    decoded typed (the records are not kept), or None when any line needs the per-row
    reader. ``signal=False``: the saliency scores are checked, not read (the signal
    columns are empty)."""
    rows = typed_lines(_DECODE[signal], lines)
    if rows is None:
        return None
    qv, vv, query, dur, std_s, std_e, win, sal, cov = zip(*map(_FIELDS, rows), strict=True)
    if text_ids(qv) is None or text_ids(vv) is None:
        return None
    if UNSET in win and any(w is UNSET and s is UNSET for w, s in zip(win, sal, strict=True)):
        return None  # neither field: the per-row reader says which is missing
    got = windows_column(win)
    if got is None:
        return None
    if signal:
        sal_lists = ([[] if v is None or v is UNSET else v for v in sal]  # absent, null: []
                     if UNSET in sal or None in sal else sal)
        signal_cols = (flat_values(sal_lists), list_lengths(sal_lists))
    else:
        if not raw_number_lists([s for s in sal if s is not UNSET] if UNSET in sal else sal):
            return None
        signal_cols = (np.empty(0), np.zeros(len(rows), dtype=np.int64))
    scal = [_column(v) for v in (dur, std_s, std_e)]
    values = np.column_stack([v for v, _ in scal]).ravel()
    present = np.column_stack([p for _, p in scal]).ravel()
    return (qv, vv, query, cov.count(UNSET) != len(cov), got[0], got[1],
            *signal_cols, values, present)


def raw_windows(raws: Sequence[Raw]) -> tuple[NDArray[np.float64], NDArray[np.int64]] | None:
    """``(windows, 3)`` and windows per row of raw window lists, when every one is a
    list of ``[s, e, score]`` (or every one of ``[s, e]``) numbers written plainly; else
    None (:func:`windows_column` reads them as lists)."""
    skel = skeleton(raws)
    first = next((r for r in skel.split(b"\n") if r != b"[]"), b"[[,,]]")
    w = first.find(b"]") - 1
    got = skeleton_rows(raws, skel, w) if w in (2, 3) else None
    return None if got is None else (scored_windows(*got), got[1])


def windows_column(raws: Sequence[Raw | UnsetType]
                   ) -> tuple[NDArray[np.float64], NDArray[np.int64]] | None:
    """:func:`raw_windows` of raw window lists (absent ones: ``[]``), read as typed lists
    when they are absent, null or not written plainly; None when one is not a list of
    windows of one width the per-row reader takes without a message."""
    got = raw_windows(raws) if UNSET not in raws else None  # type: ignore[arg-type]
    if got is not None:
        return got
    present = [r for r in raws if r is not UNSET]  # absent, null or unusual: as lists
    try:
        lists = iter(_WINDOW_LISTS.decode(b"[" + b",".join(present) + b"]"))
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return flat_windows([[] if r is UNSET else next(lists) or [] for r in raws])


def pairs_column(raws: Sequence[Raw | UnsetType]
                 ) -> tuple[NDArray[np.float64], NDArray[np.int64]] | None:
    """``(pairs (m, 2), pairs per row)`` when every raw value is a list of ``[a, b]``
    number pairs (a region, true windows), else None (absent, null, not pairs, a
    boolean, a number beyond float range)."""
    if UNSET in raws:
        return None
    try:
        got = _PAIRS.decode(b"[" + b",".join(raws) + b"]")  # type: ignore[arg-type]
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return flat_values(chain.from_iterable(got)).reshape(-1, 2), list_lengths(got)


def exact_values(vals: Sequence[Any]) -> bool:
    """Whether the values are plain scalars (text, numbers, booleans, null) that msgspec
    and orjson read alike: no integer outside ``[-2**63, 2**64)``, no list or object."""
    kinds = set(map(type, vals))
    if not kinds - _PLAIN:
        return True
    if not kinds <= _PLAIN | {int}:
        return False
    ints = [v for v in vals if type(v) is int]
    return _LOW <= min(ints) and max(ints) < _HIGH


def typed_lines(decode: Callable[[bytes], T], lines: list[bytes]) -> list[T] | None:
    """Each line decoded by ``decode`` (a msgspec decoder of a struct of the fields a
    bulk reader reads), or None when a line needs the per-row reader: refused by the
    struct, or not UTF-8 text (msgspec does not look inside a skipped field, and the
    per-row reader rejects such a line)."""
    if not utf8_lines(lines):
        return None
    try:
        return list(map(decode, lines))
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def utf8_lines(lines: list[bytes]) -> bool:
    """Whether every line is UTF-8 text (msgspec does not look inside a skipped field;
    the per-row reader rejects such a line)."""
    if all(map(bytes.isascii, lines)):
        return True
    try:
        for line in lines:
            line.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _column(vals: Sequence[float | None]) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """A number per row (NaN where absent or null) and where present."""
    if None not in vals:
        return np.array(vals, dtype=np.float64), np.ones(len(vals), dtype=bool)
    present = np.array([v is not None for v in vals], dtype=bool)
    return np.array([np.nan if v is None else v for v in vals], dtype=np.float64), present

