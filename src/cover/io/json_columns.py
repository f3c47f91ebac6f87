"""Flat numpy columns from parsed JSON lists, the step shared by the bulk readers of
JSON lines (:mod:`cover.io.jsonl_batch`, :mod:`cover.io.jsonl_typed`,
:mod:`cover.io.regions_batch`, :mod:`cover.io.gt_lean`): ids as text, list lengths,
numbers and ``[s, e, score]`` windows, each by C-level iteration over the lists, or None
where a value is not what the per-row readers accept without a message.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.rules import ids_fit
from cover.ragged import offsets_from_lengths

_ID = frozenset({int, str})


def text_ids(vals: Sequence[Any]) -> list[str] | None:
    """Ids as text when every one is an integer or a plain non-empty string (no
    surrounding blanks, at most ``MAX_ID_CHARS`` long), else None: what the per-row
    readers accept without a message."""
    if not set(map(type, vals)) <= _ID:  # absent, null, bool, float, list, ...
        return None
    text = list(map(str, vals))
    if not all(text) or list(map(str.strip, text)) != text or "\x00" in "".join(text):
        return None
    return text if ids_fit(text) else None  # an id too long for a text column

def list_lengths(vals: Sequence[Any]) -> NDArray[np.int64]:
    """``len`` of each list, as one array."""
    return np.fromiter(map(len, vals), np.int64, len(vals))

def flat_values(vals: Iterable[Any]) -> NDArray[np.float64]:
    """The numbers of lists of floats as typed-decoded (no boolean hides among them), flat."""
    # fromiter fills the array from the iterator in C: about twice array("d", ...)'s speed
    return np.fromiter(chain.from_iterable(vals), np.float64)

def flat_windows(vals: list[Any]) -> tuple[NDArray[np.float64], NDArray[np.int64]] | None:
    """``(windows, 3)`` and windows per row of typed-decoded window lists when every
    window is ``[s, e, score]`` (or every one ``[s, e]``, scored by list order as the
    per-row reader does)."""
    per_row = list_lengths(vals)
    flat_w = list(chain.from_iterable(vals))
    if not flat_w:
        return np.empty((0, 3)), per_row
    widths = set(map(len, flat_w))
    if len(widths) != 1 or not widths <= {2, 3}:
        return None  # mixed widths: the per-row reader decides row by row
    return scored_windows(flat_values(flat_w).reshape(-1, widths.pop()), per_row), per_row

def scored_windows(win: NDArray[np.float64], per_row: NDArray[np.int64]
                   ) -> NDArray[np.float64]:
    """``(windows, 3)``: two-number windows scored by list order, as the per-row reader."""
    if win.shape[1] == 3:
        return win
    rank = np.arange(win.shape[0]) - np.repeat(offsets_from_lengths(per_row)[:-1], per_row)
    return np.column_stack([win, -rank.astype(np.float64)])
