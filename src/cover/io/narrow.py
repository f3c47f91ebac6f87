"""Columns in their narrowest exact form: integer ids read from their text, integers and
floats in the fewest bytes that give every value back (what the compact ground truth of
:mod:`cover.io.truth_index` holds and a streamed calibration keeps per row); and the
steps on sorted columns that it, the duplicate check (:mod:`cover.io.seen`) and the
``--videos`` index (:mod:`cover.io.durations`) share: a find, a merge, a distinct."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray


def int_keys(text: NDArray[np.str_]) -> NDArray[np.int64] | None:
    """``text`` as int64 when every entry is an integer written plainly (``str(int(q))
    == q``: no sign ``+``, leading zero, blank or ``_``), else None."""
    if text.size == 0:
        return np.zeros(0, dtype=np.int64)
    if text.dtype.kind == "U" and text.dtype.itemsize:
        got = _digit_keys(text)
        if got is not False:
            return got
    try:
        ints = text.astype(np.int64)
    except (ValueError, OverflowError):
        return None
    return ints if bool((ints.astype(text.dtype) == text).all()) else None


#: Powers of ten that fit int64 (an 18-digit number never overflows).
_POW10 = 10 ** np.arange(18, dtype=np.int64)


def _digit_keys(text: NDArray[np.str_]) -> NDArray[np.int64] | Literal[False] | None:
    """:func:`int_keys` read from the code points themselves: a few array passes
    instead of numpy's parse of each string and its print back (several times
    faster); False when some entry is longer than 18 characters (it may overflow)."""
    c = np.ascontiguousarray(text.reshape(-1)).view(np.uint32)
    c = c.reshape(-1, text.dtype.itemsize // 4)
    pad = c == 0
    size = c.shape[1] - pad.sum(axis=1)  # characters written (padding only at the end)
    most = int(size.max())
    if most > 18:
        return False
    if most == 0 or not bool((pad[:, :-1] <= pad[:, 1:]).all()):
        return None  # every entry blank, or a NUL before the end
    c, pad = c[:, :most], pad[:, :most]
    neg = c[:, 0] == ord("-")
    digit = (c >= ord("0")) & (c <= ord("9"))
    lead = np.where(neg, c[:, min(1, most - 1)], c[:, 0])
    sign = np.zeros_like(digit)
    sign[:, 0] = neg
    if not (bool((digit | pad | sign).all()) and bool((size > neg).all())
            and not bool(((lead == ord("0")) & (size > neg + 1)).any())
            and not bool((neg & (lead == ord("0"))).any())):
        return None  # blank, a sign alone, a leading zero ("-0" too), or not a digit
    places = size[:, None] - 1 - np.arange(most)  # each digit's power of ten
    d = np.where(digit, c.astype(np.int64) - ord("0"), 0)
    values = (d * _POW10[np.clip(places, 0, None)]).sum(axis=1)
    return np.where(neg, -values, values)


def narrow_int(a: NDArray[np.integer]) -> NDArray[np.integer]:
    """The narrowest of int8, int16, int32 holding every value, else ``a`` as int64."""
    a = np.asarray(a)
    lo, hi = (int(a.min()), int(a.max())) if a.size else (0, 0)
    for t in (np.int8, np.int16, np.int32):
        if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max:
            return a.astype(t)
    return a.astype(np.int64)


def narrow_float(a: NDArray[np.floating]) -> NDArray[Any]:
    """The narrowest exact form of ``a``: int8 or int16 when every value is a whole
    number in range (no ``-0.0``: its sign would be lost), else float32 when that holds
    every value, else float64. Read back with ``.astype(np.float64)``: the same numbers
    (windows on a 2-second clip grid and whole-second durations take 2 bytes, not 4)."""
    a = np.asarray(a, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        whole = a.size > 0 and bool((np.floor(a) == a).all())  # False for NaN
    if whole and not bool(np.signbit(a[a == 0]).any()):
        lo, hi = a.min(), a.max()  # an infinity is in no integer range
        for t in (np.int8, np.int16):
            if np.iinfo(t).min <= lo and hi <= np.iinfo(t).max:
                return a.astype(t)
    with np.errstate(over="ignore"):  # a value beyond float32's range stays float64
        b = a.astype(np.float32)
    return b if np.array_equal(b.astype(np.float64), a) else a


def per_vid(values: NDArray[Any], codes: NDArray[np.integer], n: int,
            step: int = 1 << 20) -> tuple[NDArray[Any], bool]:
    """``(values once per code, True)`` when every row of a code has the same value bit
    for bit (a video's duration on each of its queries), else ``(values, False)``."""
    one = np.zeros(n, dtype=values.dtype)
    one[codes] = values  # one row's value per code
    bits = np.dtype(f"u{values.dtype.itemsize}")
    for a in range(0, codes.size, step):
        if not np.array_equal(one[codes[a:a + step]].view(bits), values[a:a + step].view(bits)):
            return values, False
    return one, True


def sorted_unique(a: NDArray[Any], step: int = 1 << 20) -> tuple[NDArray[Any], NDArray[Any]]:
    """``np.unique(a, return_inverse=True)`` with a lower peak: the sorted copy of ``a``
    is never made whole (the neighbours are compared ``step`` at a time through the
    sort order) and the inverse is int32 when that holds every index (at 1e7 rows,
    the ground truth's vids took ~250 MB beside the columns through np.unique)."""
    order = np.argsort(a)
    first = np.ones(a.size, dtype=bool)  # where a new value starts, in sorted order
    for lo in range(1, a.size, step):
        at = order[lo - 1:lo + step]
        first[lo:lo + step] = a[at[1:]] != a[at[:-1]]
    rank = np.cumsum(first, dtype=np.int32 if a.size < 2**31 else np.int64) - 1
    inv = np.empty(a.size, dtype=rank.dtype)
    inv[order] = rank
    return a[order[first]], inv


def sorted_find(keys: NDArray[Any], asked: NDArray[Any],
                sorter: NDArray[np.integer] | None = None
                ) -> tuple[NDArray[np.intp], NDArray[np.bool_]]:
    """``(at, hit)``: where each of ``asked`` is in ``keys`` (sorted, or sorted by
    ``sorter``: ``at`` is then a position in ``keys``) and whether it is there. Text or
    bytes wider than the keys are cut to their width first (a search then never copies
    the keys), a longer value matching none."""
    if keys.size == 0:
        return np.zeros(asked.size, dtype=np.intp), np.zeros(asked.size, dtype=bool)
    fits: NDArray[np.bool_] | bool = True
    if asked.dtype.kind in "SU" and asked.dtype.itemsize > keys.dtype.itemsize:
        cut = asked.astype(keys.dtype)
        fits, asked = cut == asked, cut  # a longer value, cut, is another one
    at = np.minimum(np.searchsorted(keys, asked, sorter=sorter), keys.size - 1)
    if sorter is not None:
        at = sorter[at]
    return at, (keys[at] == asked) & fits


def merge_sorted(a: NDArray[Any], b: NDArray[Any], *beside: tuple[NDArray[Any], NDArray[Any]]
                 ) -> list[NDArray[Any]]:
    """Sorted ``a`` and ``b`` with no value in common as one sorted array, and each pair of
    columns ``beside`` them merged alike: each value of ``b`` goes where a binary search in
    ``a`` puts it (plus the values of ``b`` before it), those of ``a`` fill the rest in
    order. No sort, and no temporaries beyond the merged arrays and ``b``'s positions (an
    argsort of the concatenation took three more copies)."""
    at = np.searchsorted(a, b)
    at += np.arange(b.size)
    rest = np.ones(a.size + b.size, dtype=bool)
    rest[at] = False
    out = []
    for mine, theirs in ((a, b), *beside):
        merged = np.empty(rest.size, dtype=np.result_type(mine, theirs))
        merged[at] = theirs
        merged[rest] = mine
        out.append(merged)
    return out
