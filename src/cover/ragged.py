"""Ragged columns: one variable-length array per row, stored as flat values + offsets.

Row ``i`` owns ``values[offsets[i]:offsets[i + 1]]``. All helpers are vectorised
over rows; none loops in Python.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray


def offsets_from_lengths(lengths: ArrayLike) -> NDArray[np.int64]:
    """``offsets = [0, cumsum(lengths)]``."""
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def row_ids(offsets: NDArray[np.int64]) -> NDArray[np.int64]:
    """The owning row of every flat element: ``repeat(arange(n), lengths)``."""
    lengths = np.diff(offsets)
    return np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)


def take_index(offsets: NDArray[np.int64], rows: NDArray[np.int64]) -> tuple[
    NDArray[np.int64], NDArray[np.int64]
]:
    """Flat gather index and new offsets that select ``rows`` (in that order)."""
    rows = np.asarray(rows, dtype=np.int64)
    if rows.size == offsets.size - 1 and bool((rows == np.arange(rows.size)).all()):
        # every row, in order (a batch with nothing rejected): no gather to compute
        base = int(offsets[0])
        return (np.arange(base, int(offsets[-1]), dtype=np.int64),
                np.asarray(offsets, dtype=np.int64) - base)
    lengths = offsets[rows + 1] - offsets[rows]
    new_offsets = offsets_from_lengths(lengths)
    shift = np.repeat(offsets[rows] - new_offsets[:-1], lengths)
    flat = np.arange(new_offsets[-1], dtype=np.int64) + shift
    return flat, new_offsets


def segment_sum(values: NDArray[np.floating], offsets: NDArray[np.int64]) -> NDArray[np.float64]:
    """Per-row sum; empty rows sum to 0."""
    n = offsets.size - 1
    return np.bincount(row_ids(offsets), weights=values, minlength=n).astype(np.float64)


def segment_any(mask: ArrayLike, offsets: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Per-row logical or; empty rows are False. Only the true elements are looked up
    (their rows by a binary search of the offsets): a check's mask, mostly false, costs
    one pass."""
    n = offsets.size - 1
    m = np.asarray(mask, dtype=bool).reshape(-1)
    if m.size != int(offsets[-1] - offsets[0]):
        raise ValueError(f"mask has {m.size} elements; the offsets hold "
                         f"{int(offsets[-1] - offsets[0])}")
    out = np.zeros(n, dtype=bool)
    hits = np.flatnonzero(m)
    if hits.size:
        out[np.searchsorted(offsets, hits + offsets[0], side="right") - 1] = True
    return out


def segment_all(mask: ArrayLike, offsets: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Per-row logical and; empty rows are True."""
    return ~segment_any(~np.asarray(mask, dtype=bool), offsets)


def segment_min(
    values: NDArray[np.floating], offsets: NDArray[np.int64], empty: float = np.inf
) -> NDArray[np.float64]:
    """Per-row minimum; empty rows get ``empty``."""
    n = offsets.size - 1
    out = np.full(n, empty, dtype=np.float64)
    lengths = np.diff(offsets)
    nonempty = lengths > 0
    if values.size:
        out[nonempty] = np.minimum.reduceat(values, offsets[:-1][nonempty])
    return out


def segment_max(
    values: NDArray[np.floating], offsets: NDArray[np.int64], empty: float = -np.inf
) -> NDArray[np.float64]:
    """Per-row maximum; empty rows get ``empty``."""
    return -segment_min(-np.asarray(values, dtype=np.float64), offsets, empty=-empty)


_ZEROS: NDArray[np.int64] = np.zeros(1, dtype=np.int64)
_ZEROS.flags.writeable = False


@dataclass(frozen=True)
class Ragged:
    """A ragged float column (e.g. a per-clip relevance signal)."""

    values: NDArray[np.float64]
    offsets: NDArray[np.int64]

    @classmethod
    def empty(cls, n: int) -> Ragged:
        """``n`` rows without values; the offsets are a read-only view of one shared
        zero array (grown on demand), so a large table without relevance signals does
        not fill a fresh ``n + 1`` array with zeros. Offsets are never written in place."""
        global _ZEROS
        if _ZEROS.size < n + 1:
            grown = np.zeros(n + 1, dtype=np.int64)
            grown.flags.writeable = False
            _ZEROS = grown
        return cls(np.empty(0), _ZEROS[: n + 1])

    @classmethod
    def from_lists(cls, rows: list[list[float]]) -> Ragged:
        lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        flat = [v for r in rows for v in r]
        return cls(np.asarray(flat, dtype=np.float64), offsets_from_lengths(lengths))

    def __len__(self) -> int:
        return self.offsets.size - 1

    @property
    def lengths(self) -> NDArray[np.int64]:
        return np.diff(self.offsets)

    def uniform_width(self) -> int | None:
        """``w`` when every row holds exactly ``w >= 1`` values (``offsets == w * (0..n)``),
        so ``values.reshape(n, w)`` is the dense ``(rows, clips)`` view; else None."""
        n = len(self)
        if n == 0 or self.values.size % n or self.offsets[0] != 0:
            return None
        w = self.values.size // n
        if w == 0 or self.offsets[-1] != self.values.size:
            return None
        return w if bool((self.offsets == np.arange(n + 1) * w).all()) else None

    def row(self, i: int) -> NDArray[np.float64]:
        return self.values[self.offsets[i] : self.offsets[i + 1]]

    def take(self, rows: NDArray[np.int64]) -> Ragged:
        flat, offsets = take_index(self.offsets, rows)
        return Ragged(self.values[flat], offsets)
