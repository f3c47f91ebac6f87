"""Ids kept as given and read as text: :func:`qid_text` turns an id column into the
text join key, and :class:`TextIds` holds a table's ``qid`` / ``vid`` column as given
(text or integers), converting it on first read."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.data.rules import ids_fit, shown_id, too_long_id
from cover.errors import InputError


def qid_text(ids: ArrayLike) -> NDArray[np.str_]:
    """Ids as text (the join key), 1-D. Integers take the narrowest ``<U{digits}`` instead of
    numpy's ``<U21`` (``str(i)`` of each, a third of the bytes at 1e7 rows)."""
    a = np.asarray(ids).reshape(-1)
    if a.dtype.kind in "iu" and a.size:
        lo, hi = int(a.min()), int(a.max())
        width = max(len(str(lo)), len(str(hi)))
        return decimal_text(a, width) if lo >= 0 and width <= 18 else a.astype(f"<U{width}")
    try:
        return a.astype(str, copy=False)
    except ValueError:  # a list among object values ("setting an array element with a
        return np.array([str(v) for v in a.tolist()], dtype=str)  # sequence"): str() each


def given_ids(values: ArrayLike, name: str) -> NDArray[Any]:
    """An id column as given, 1-D: a scalar is one id; more dimensions are an error (as
    for a number column). A boolean in a list is kept as one (numpy would read
    ``[True, 2]`` as the integers 1 and 2), for the checks to reject it as the readers
    do."""
    a = np.asarray(values)
    if a.ndim > 1:
        raise InputError(f"{name} has shape {a.shape}; expected one id per row (a 1-D "
                         "array)")
    if (a.dtype.kind in "iuf" and isinstance(values, list | tuple)
            and bool in set(map(type, values))):
        a = np.array(values, dtype=object)
    return a if a.ndim == 1 else a.reshape(-1)  # the caller's array itself (never written)


def decimal_text(a: NDArray[np.integer], width: int, step: int = 1 << 16
                 ) -> NDArray[np.str_]:
    """Integers ``0 <= a < 10**width`` (``width <= 18``) as ``a.astype(f"<U{width}")``
    gives them, built from code points: the ``k`` digits of ``x`` are ``x // 10**(k-1-j)
    % 10``, found for every row of ``k`` digits at once (numpy formats each integer
    alone: twice slower); ``step`` rows at a time, so the digit arrays stay small."""
    out = np.zeros((a.size, width), dtype=np.uint32)
    powers = 10 ** np.arange(1, width, dtype=np.int64)
    for lo in range(0, a.size, step):
        x = a[lo:lo + step].astype(np.int64)
        k = np.searchsorted(powers, x, side="right") + 1  # digits of each
        part = out[lo:lo + step]
        for d in np.unique(k).tolist():
            rows = np.flatnonzero(k == d)
            y = x[rows]
            digits = np.empty((rows.size, d), dtype=np.uint32)
            for j in range(d - 1, -1, -1):  # least significant first
                y, digits[:, j] = np.divmod(y, 10)
            part[rows, :d] = digits + ord("0")
    return out.view(f"<U{width}").reshape(-1)


class TextIds:
    """A column of ids kept as given (text or integers) and read as text (:func:`qid_text`),
    converted on first read and cached: a table built from integer ids pays nothing for
    text it never shows (calibrate and certify read no id)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.raw = f"_{name}_raw"
        self.text = f"_{name}_text"

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        cached = obj.__dict__.get(self.text)
        if cached is None:
            raw = obj.__dict__[self.raw]
            if self.name == "vid" and raw is obj.__dict__.get("_qid_raw"):
                cached = obj.qid  # video ids default to the query ids: one conversion
            else:
                cached = qid_text(raw)
            obj.__dict__[self.text] = cached
        return cached

    def __set__(self, obj: Any, value: ArrayLike) -> None:
        a = np.asarray(value)
        obj.__dict__[self.raw] = a if a.ndim == 1 else a.reshape(-1)
        obj.__dict__.pop(self.text, None)


def text_id_column(ids: list[str], key: str = "qid"
                   ) -> tuple[NDArray[np.str_], dict[int, str]]:
    """``ids`` (text read from a file) as numpy text, and row -> why for each longer than
    ``MAX_ID_CHARS``: those are shown by their start (:func:`cover.data.rules.shown_id`),
    so one id of a million characters cannot make every row a million wide; the reader
    rejects their rows first."""
    if ids_fit(ids):
        return np.array(ids, dtype=str), {}
    why = {i: too_long_id(len(v), key) for i, v in enumerate(ids) if shown_id(v) != v}
    return np.array([shown_id(v) for v in ids], dtype=str), why
