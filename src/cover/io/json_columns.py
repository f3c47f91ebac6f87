"""Flat numpy columns from parsed JSON lists, the step shared by the bulk readers of
JSON lines (:mod:`cover.io.jsonl_batch`, :mod:`cover.io.jsonl_typed`,
:mod:`cover.io.regions_batch`, :mod:`cover.io.gt_lean`): ids as text, list lengths,
numbers and ``[s, e, score]`` windows, each by C-level iteration over the lists, or None
where a value is not what the per-row readers accept without a message.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import chain
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.ragged import offsets_from_lengths

_NUMBER = frozenset({int, float})
_ID = frozenset({int, str})


def text_ids(vals: Sequence[Any]) -> list[str] | None:
    """Ids as text when every one is an integer or a plain non-empty string (no
    surrounding blanks), else None: what the per-row readers accept without a message."""
    if not set(map(type, vals)) <= _ID:  # absent, null, bool, float, list, ...
        return None
    text = list(map(str, vals))
    if not all(text) or list(map(str.strip, text)) != text or "\x00" in "".join(text):
        return None
    return text

def list_lengths(vals: Sequence[Any]) -> NDArray[np.int64]:
    """``len`` of each list, as one array."""
    return np.fromiter(map(len, vals), np.int64, len(vals))

def flat_values(vals: Sequence[Any], *, typed: bool = False) -> NDArray[np.float64] | None:
    """The numbers of lists of JSON numbers, flat, or None when one is not a number."""
    if typed:  # no boolean hides among typed floats: no second look
        return np.frombuffer(array("d", chain.from_iterable(vals)), dtype=np.float64)
    items = list(chain.from_iterable(vals))
    try:  # array("d") takes numbers and booleans only (np.fromiter would parse "1.5")
        flat = np.frombuffer(array("d", items), dtype=np.float64)
    except TypeError:
        return None
    # A boolean becomes 0.0 or 1.0: only those entries need their type looked at.
    suspect = np.flatnonzero((flat == 0.0) | (flat == 1.0)).tolist()
    if suspect and not set(map(type, map(items.__getitem__, suspect))) <= _NUMBER:
        return None
    return flat

def flat_windows(vals: list[Any] | None, *, typed: bool = False
                 ) -> tuple[NDArray[np.float64], NDArray[np.int64]] | None:
    """``(windows, 3)`` and windows per row when every window is ``[s, e, score]``
    (or every one ``[s, e]``, scored by list order as the per-row reader does);
    ``typed``: every window is a list of floats (:func:`flat_values`)."""
    if vals is None:
        return None
    per_row = list_lengths(vals)
    flat_w = list(chain.from_iterable(vals))
    try:  # a window that is not a list: a number has no len(); a string or an object
        widths = set(map(len, flat_w))  # of w characters / keys fails in flat_values
    except TypeError:
        return None
    if not flat_w:
        return np.empty((0, 3)), per_row
    if len(widths) != 1 or not widths <= {2, 3}:
        return None  # mixed widths: the per-row reader decides row by row
    w = widths.pop()
    flat = flat_values(flat_w, typed=typed)
    if flat is None:
        return None
    return scored_windows(flat.reshape(-1, w), per_row), per_row

def scored_windows(win: NDArray[np.float64], per_row: NDArray[np.int64]
                   ) -> NDArray[np.float64]:
    """``(windows, 3)``: two-number windows scored by list order, as the per-row reader."""
    if win.shape[1] == 3:
        return win
    rank = np.arange(win.shape[0]) - np.repeat(offsets_from_lengths(per_row)[:-1], per_row)
    return np.column_stack([win, -rank.astype(np.float64)])
