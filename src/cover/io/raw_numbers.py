"""Numbers read from raw JSON lists (msgspec ``Raw`` values) a batch of values at a
time, without a Python object per number where the bytes allow it.

A value's shape is told by its skeleton (brackets and commas, numbers and blanks
dropped: ``[[0,2.5,1],[4,6,1]]`` is ``[[,,],[,,]]``), checked for every value at once
against the skeleton its count of rows implies; the numbers are then read in one go:
written as plain digits (clip indices, QVHighlights' integer scores) by numpy over the
bytes themselves, anything else by one msgspec decode of the flat list. Every reader
returns None where a value is not plainly what it asks for (a null, a boolean, a
string, another shape, a number beyond float range), for a slower reader to judge.
:func:`raw_number_lists` reads nothing: it says whether saliency lists a command does
not score are what the per-row reader takes (byte classes, or a decode when unsure).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress, repeat

import msgspec
import numpy as np
from msgspec import Raw
from numpy.typing import NDArray

from cover.io.json_columns import list_lengths

#: Byte classes of raw number lists: brackets, commas and the line separator kept, a
#: number's characters and blanks (:data:`_NUMBER_CHARS`) dropped, anything else "x".
_SKELETON = bytes(b if chr(b) in "[],\n" else ord("x") for b in range(256))
_NUMBER_CHARS = b"0123456789.-+eE \t\r"
#: Byte classes of raw integer lists: digits "0", brackets, commas and the line
#: separator kept, anything else "x" (blanks are dropped before).
_DIGITS = bytes(ord("0") if 48 <= b <= 57 else b if chr(b) in "[],\n" else ord("x")
                for b in range(256))
_FLOATS = msgspec.json.Decoder(list[float])
#: Byte classes of raw saliency lists: digits "0", a number's other characters and
#: JSON blanks " ", "[" kept, the line separator kept, anything else (a letter: an
#: exponent, null, true; a quote; a brace) "x".
_CLASSES = bytes(
    ord("0") if chr(b).isdigit() and b < 128 else
    ord(" ") if chr(b) in ".-+,] \t\r" else
    b if chr(b) in "[\n" else ord("x") for b in range(256))
#: A run of this many digits may be a number beyond float range (1e309 has 310).
_LONG_DIGITS = b"0" * 309
#: The byte each raw saliency list opens with.
_OPEN = ord("[")
_NUMBER_LISTS = msgspec.json.Decoder(list[list[float] | None])
#: Digits an integer read by numpy may have (an int64 holds every one of 18 digits).
_MAX_DIGITS = 18
_POWERS = 10 ** np.arange(_MAX_DIGITS, dtype=np.int64)


def skeleton(raws: Sequence[Raw]) -> bytes:
    """The values' skeletons joined by newlines (see the module doc)."""
    return b"\n".join(raws).translate(_SKELETON, _NUMBER_CHARS)


def number_rows(raws: Sequence[Raw], width: int
                ) -> tuple[NDArray[np.float64], NDArray[np.int64]] | None:
    """``(rows, width)`` numbers and rows per value of raw lists of ``width``-number lists
    (``[[a, b, c], ...]``) written plainly, else None."""
    return skeleton_rows(raws, skeleton(raws), width)


def skeleton_rows(raws: Sequence[Raw], skel: bytes, w: int
                  ) -> tuple[NDArray[np.float64], NDArray[np.int64]] | None:
    """:func:`number_rows` from the values' :func:`skeleton`."""
    if b"x" in skel:
        return None
    rows = skel.split(b"\n")
    per_row = (list_lengths(rows) - 1) // (w + 2)  # "[" + k rows "[,,]" + (k-1) "," + "]"
    shapes = {k: b"[" + b",".join(repeat(b"[" + b"," * (w - 1) + b"]", k)) + b"]"
              for k in set(per_row.tolist())}
    if b"\n".join(map(shapes.__getitem__, per_row.tolist())) != skel:
        return None
    has = per_row.astype(bool)
    if not has.all():
        empty = compress(raws, (~has).tolist())
        if any(bytes(r).translate(None, b" \t\r") != b"[]" for r in empty):
            return None  # "[7]" has the skeleton of "[]": a number, not a list of them
        raws = list(compress(raws, has.tolist()))
    flat = flat_numbers(raws)
    return None if flat is None else (flat.reshape(-1, w), per_row)


def int_lists(raws: Sequence[Raw]) -> tuple[NDArray[np.float64], NDArray[np.int64]] | None:
    """The numbers (as floats) and numbers per value of raw flat lists of integers
    ``>= 0`` written as plain digits, 18 at most (``[0, 4, 17]``); else None (a sign, a
    fraction, an exponent, a null, a nested list)."""
    cls = b"\n".join(raws).translate(_DIGITS, b" \t\r")
    if b"x" in cls or b"0" * (_MAX_DIGITS + 1) in cls:
        return None
    skel = cls.translate(None, b"0")
    per_row = list_lengths(skel.split(b"\n")) - 1  # "[" + (k-1) "," + "]"; "[]" below
    per_row[np.array(cls.split(b"\n")) == b"[]"] = 0
    shapes = {k: b"[" + b"," * max(k - 1, 0) + b"]" for k in set(per_row.tolist())}
    if b"\n".join(map(shapes.__getitem__, per_row.tolist())) != skel:
        return None
    flat = flat_numbers(list(compress(raws, per_row.tolist())))
    return None if flat is None else (flat, per_row)


def flat_numbers(raws: Sequence[Raw]) -> NDArray[np.float64] | None:
    """Every number of raw lists of numbers (nested or not, none empty), flat, in list
    order: plain digits by :func:`_plain_ints`, else one msgspec decode; None for a
    number beyond float range (the per-row reader says so)."""
    text = b",".join(raws).translate(None, b"[]")
    if not text.translate(None, b"0123456789, \t\r\n"):
        got = _plain_ints(text)
        if got is not None:
            return got
    try:
        flat = _FLOATS.decode(b"[" + text + b"]")
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    # fromiter with the count fills a preallocated array in C: ~12 ns a float against
    # array("d", ...)'s ~18 ns (491,520 window numbers: 11.7 ms, 17.7 ms)
    return np.fromiter(flat, np.float64, len(flat))


def _plain_ints(text: bytes) -> NDArray[np.float64] | None:
    """The integers of ``text`` (digit runs between commas and blanks) as floats, read
    by numpy: each run's digits times their powers of ten, summed per run as int64 (exact
    up to 18 digits), then converted (rounded as a float parse of the digits would be);
    None when a run is longer."""
    b = np.frombuffer(text, dtype=np.uint8)
    at = np.flatnonzero(b >= ord("0"))  # digits: the only bytes above "," and blanks
    if not at.size:
        return np.empty(0)
    first = np.ones(at.size, dtype=bool)
    first[1:] = np.diff(at) != 1  # a digit not right after another starts a number
    starts = np.flatnonzero(first)
    lengths = np.diff(np.append(starts, at.size))
    if int(lengths.max()) > _MAX_DIGITS:
        return None
    # each digit's power: the digits after it in its number
    power = np.repeat(starts + lengths, lengths) - 1 - np.arange(at.size)
    digits = (b[at] - ord("0")).astype(np.int64)
    return np.add.reduceat(digits * _POWERS[power], starts).astype(np.float64)


def raw_number_lists(raws: Sequence[Raw]) -> bool:
    """Whether every raw JSON value is a list of finite numbers or null (what the
    per-row reader takes as saliency scores without a message). The plain case (flat
    lists of numbers without exponents or runs of 309 digits) is told by byte classes
    over all of them at once; anything else is decoded, as floats, to be sure."""
    if not raws:
        return True
    classes = b"\n".join(raws).translate(_CLASSES)
    n = len(raws)
    # Each value (valid JSON: msgspec read it as Raw) opens with "[" and holds no other
    # "[" and nothing but numbers, commas and blanks: a flat list of plain numbers. The
    # openings are looked up where each value starts (a count of "\n[" scans every byte).
    if (b"x" not in classes and _LONG_DIGITS not in classes
            and classes.count(b"[") == n and _all_open(classes, raws)):
        return True
    try:
        _NUMBER_LISTS.decode(b"[" + b",".join(raws) + b"]")
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False
    return True


def _all_open(joined: bytes, raws: Sequence[Raw]) -> bool:
    """Whether each of ``raws``, joined by one byte into ``joined``, opens with "["."""
    lengths = np.fromiter(map(len, raws), np.int64, len(raws))
    starts = np.cumsum(lengths + 1) - lengths - 1  # where each value begins in joined
    return bool((np.frombuffer(joined, np.uint8)[starts] == _OPEN).all())


__all__ = ["flat_numbers", "int_lists", "number_rows", "raw_number_lists", "skeleton",
           "skeleton_rows"]
