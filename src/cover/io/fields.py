"""Columns out of parsed JSON rows, and vectorised checks that reject bad rows.

Readers turn ``RawRows`` into numpy columns (:func:`ragged_field`,
:func:`float_field`), flag bad rows with boolean masks over all rows at once, and
reject them with the first failing reason (:func:`first_reason`,
:func:`reject_rows`), so every rejected row keeps its file, line, qid and reason.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import chain, compress
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.rules import bad_number, not_a_number
from cover.data.table import GroundingTable
from cover.io.jsonl import field_column, number_value, object_column
from cover.io.row_checks import RawRows, reject_rows
from cover.ragged import Ragged, offsets_from_lengths, take_index

__all__ = ["bad_number", "first_reason", "float_field", "not_a_number", "ragged_field",
           "reject_rows", "table_of", "trim_ragged"]


def ragged_field(
    raw: RawRows, key: str, width: tuple[int, ...], *, optional: bool,
    get: Callable[[dict[str, Any]], Any] | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Flatten ``rec[key]`` (or ``get(rec)``; a list of rows of ``width`` numbers, or of
    numbers when ``width == ()``) over records; reject rows whose value has the wrong
    shape or holds anything but JSON numbers (a string "12.5" or ``true`` is never read
    as a number). A missing 3rd column (a window score) is filled so list order ranks
    them."""
    arrays: list[NDArray[np.float64]] = []
    reasons: dict[int, str] = {}
    ncol = max(width) if width else 1
    shape = "[[start, end(, score)], ...] of numbers" if width else "[x, ...] of numbers"
    empty = np.empty((0, ncol))
    for i, rec in enumerate(raw.records):
        v = rec.get(key) if get is None else get(rec)
        if v is None:
            if not optional:
                reasons[i] = f"missing field: {key}"
            arrays.append(empty)
            continue
        why = _not_numbers(v, width)
        if why is not None:
            reasons[i] = f"{key} must look like {shape}" if why == "shape" else f"{key} {why}"
            arrays.append(empty)
            continue
        try:
            a = np.asarray(v, dtype=np.float64)
        except OverflowError:  # an integer beyond float range: inf, rejected as non-finite
            a = np.asarray([[number_value(x) for x in r] for r in v] if width
                           else [number_value(x) for x in v], dtype=np.float64)
        if a.size == 0:
            arrays.append(empty)
        elif not width:
            arrays.append(a.reshape(-1, 1))
        else:
            if a.shape[1] < ncol:  # windows without a score: rank by list order
                a = np.column_stack([a, -np.arange(a.shape[0], dtype=np.float64)])
            arrays.append(a)
    if reasons:
        arrays = list(compress(arrays, reject_rows(raw, reasons)))
    lengths = np.fromiter((a.shape[0] for a in arrays), dtype=np.int64, count=len(arrays))
    flat = np.concatenate(arrays) if arrays else np.empty((0, ncol))
    return flat, offsets_from_lengths(lengths)


def _not_numbers(v: Any, width: tuple[int, ...]) -> str | None:
    """None when ``v`` is a list of numbers (``width == ()``) or of equally long lists of
    ``width`` numbers; "shape" when its nesting is wrong; else what a non-number entry is.
    (Type sets are built by C-level iteration: this runs once per row on every file.)"""
    if type(v) is not list:
        return "shape"
    items: Any = v
    if width:
        if v and (set(map(type, v)) != {list} or len(lengths := set(map(len, v))) != 1
                  or lengths.pop() not in width):
            return "shape"
        items = chain.from_iterable(v)
    kinds = set(map(type, items))
    if kinds <= _NUMBER_TYPES:
        return None
    odd = next(x for x in (chain.from_iterable(v) if width else v)
               if type(x) not in _NUMBER_TYPES)
    if isinstance(odd, (list, dict)):
        return "shape"
    return not_a_number(odd)


_NUMBER_TYPES = {int, float}


def first_reason(checks: list[tuple[NDArray[np.bool_], str]],
                 reasons: dict[int, str] | None = None) -> dict[int, str]:
    """Row -> the first failing check's message (added to ``reasons``, whose rows keep
    theirs)."""
    reasons = {} if reasons is None else reasons
    for bad, why in checks:
        for i in np.flatnonzero(bad).tolist():
            reasons.setdefault(i, why)
    return reasons


def trim_ragged(keep: NDArray[np.bool_], flat: NDArray[np.float64],
          offsets: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Drop the ragged rows where ``keep`` is False."""
    flat_idx, new_off = take_index(offsets, np.flatnonzero(keep))
    return flat[flat_idx], new_off


def float_field(raw: RawRows, key: str, *, get: Callable[[dict[str, Any]], Any] | None = None
                ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """A scalar float column (``rec[key]`` or ``get(rec)``) and where it is present;
    values that are present but not numbers come back as NaN with ``present`` set, so
    :func:`bad_number` rejects them."""
    vals = [rec.get(key) if get is None else get(rec) for rec in raw.records]
    present = np.fromiter((v is not None for v in vals), dtype=bool, count=len(vals))
    return np.fromiter(map(number_value, vals), dtype=np.float64, count=len(vals)), present


def table_of(raw: RawRows, **columns: Any) -> GroundingTable:
    """A table of the rows kept in ``raw``: qid, vid (the qid where absent), query,
    line, source and the records come from ``raw``; ``columns`` give the rest, and
    absent predictions / relevance default to none (refusals)."""
    n = len(raw.records)
    qid = np.array([str(rec["qid"]) for rec in raw.records], dtype=str)
    base: dict[str, Any] = {
        "qid": qid,
        "vid": np.array([str(rec.get("vid", rec["qid"])) for rec in raw.records], dtype=str),
        "pred_start": np.full(n, np.nan),
        "pred_end": np.full(n, np.nan),
        "relevance": Ragged(np.empty(0), np.zeros(n + 1, dtype=np.int64)),
        "line": raw.lines,
        "source": raw.path,
        "query": field_column(raw.records, "query"),
        "records": object_column(raw.records),
    }
    return GroundingTable(**(base | columns))
