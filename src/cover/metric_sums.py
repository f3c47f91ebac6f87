"""Sums that give the same bits whether rows arrive at once or in batches of any size.

Metrics are means over rows. A file evaluated a batch at a time must report the same
numbers as the whole file in memory, so every float sum is taken in one fixed way:
rows are cut into chunks of :data:`CHUNK` rows *counted over the whole stream* (not per
batch), each chunk is summed by ``np.add.reduce`` (numpy's pairwise sum), and the
chunk sums are added exactly (``math.fsum``). A file of at most ``CHUNK`` rows gets
exactly ``np.sum``. Counts (coverage, refusals, R1) are integers and exact anyway.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.utf8 import as_bytes

#: Rows per summed chunk; a stream holds at most this many values per sum between chunks.
CHUNK = 65_536
#: Per-unit sums of batches wait to be merged until there are this many (or a quarter of
#: the units merged so far: a merge copies the merged arrays once, so the pending parts
#: stay small beside them at a few copies per unit in all).
MERGE_UNITS = 65_536


class ChunkedSum:
    """Running ``sum(x, axis=0)`` over a stream of row blocks (1-D, or 2-D with a fixed
    number of columns); :meth:`total` is identical for every way of cutting the rows."""

    def __init__(self) -> None:
        self.n = 0
        self._carry: list[NDArray[np.float64]] = []
        self._pending = 0
        self._sums: list[NDArray[np.float64]] = []

    def add(self, x: NDArray[Any]) -> None:
        """Append the rows of ``x`` (converted to float64)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        self.n += x.shape[0]
        i = 0
        while i < x.shape[0]:
            take = min(CHUNK - self._pending, x.shape[0] - i)
            if take == CHUNK:  # a whole chunk in place: no copy
                self._sums.append(np.asarray(np.add.reduce(x[i:i + take], axis=0)))
            else:
                self._carry.append(x[i:i + take])
                self._pending += take
                if self._pending == CHUNK:
                    self._flush()
            i += take

    def _flush(self) -> None:
        chunk = np.concatenate(self._carry) if len(self._carry) > 1 else self._carry[0]
        self._sums.append(np.asarray(np.add.reduce(np.ascontiguousarray(chunk), axis=0)))
        self._carry, self._pending = [], 0

    def total(self) -> Any:
        """The sum: a float (1-D rows) or a float64 array (2-D rows); 0.0 when empty."""
        sums = list(self._sums)
        if self._carry:
            chunk = np.ascontiguousarray(np.concatenate(self._carry))
            sums.append(np.asarray(np.add.reduce(chunk, axis=0)))
        if not sums:
            return 0.0
        if sums[0].ndim == 0:
            return math.fsum(float(s) for s in sums)
        stacked = np.stack(sums)
        return np.array([math.fsum(col) for col in stacked.T.tolist()], dtype=np.float64)

    def mean(self) -> Any:
        """``total() / n`` (NaN, or a NaN array, when no row was added)."""
        if self.n == 0:
            return float("nan")
        t = self.total()
        return t / self.n if isinstance(t, np.ndarray) else float(np.float64(t) / self.n)


class UnitSums:
    """Per-unit count of rows and sum of a 0/1 value (the cluster sd by video), kept as
    sorted unit arrays (UTF-8 bytes); memory is bounded by the number of distinct units."""

    def __init__(self) -> None:
        self._keys: list[NDArray[np.bytes_]] = []
        self._sums: list[NDArray[np.int64]] = []
        self._counts: list[NDArray[np.int64]] = []
        self._merged = 0  # units in the first (already merged) part
        self._pending = 0

    def add(self, units: NDArray[np.str_], y: NDArray[np.bool_]) -> None:
        if units.size == 0:
            return
        # As UTF-8 bytes (a quarter of numpy text): byte order is code-point order, so
        # the units sort as their text does and the sd is the same bit for bit.
        keys, inv = np.unique(as_bytes(units), return_inverse=True)
        self._keys.append(keys)
        self._sums.append(np.bincount(inv, weights=y, minlength=keys.size).astype(np.int64))
        self._counts.append(np.bincount(inv, minlength=keys.size))
        self._pending += keys.size
        if self._pending > max(self._merged // 4, MERGE_UNITS):  # amortised: O(units)
            self._merge()

    def _merge(self) -> None:
        """Fold the pending parts into the merged one. The pending parts are unioned
        first (at most as many units as merged), then merged into the first part by a
        binary search: units already there are added in place, new ones inserted. No
        sort over every unit and no second copy of its sums, so the peak stays near the
        merged arrays themselves (a merge by ``np.unique`` of every key held ~5 copies)."""
        start = 1 if self._merged else 0
        keys, inv = np.unique(np.concatenate(self._keys[start:]), return_inverse=True)
        sums, counts = (np.bincount(inv, weights=np.concatenate(part[start:]),
                                    minlength=keys.size).astype(np.int64)
                        for part in (self._sums, self._counts))
        del inv
        if start:
            have = self._keys[0]
            width = max(have.dtype.itemsize, keys.dtype.itemsize)  # never cut a key
            have, keys = have.astype(f"S{width}", copy=False), keys.astype(f"S{width}")
            at = np.searchsorted(have, keys)
            old = at < have.size
            old[old] = have[at[old]] == keys[old]
            for total, part in ((self._sums[0], sums), (self._counts[0], counts)):
                total[at[old]] += part[old]  # each unit once: no repeated index
            new = ~old
            at = at[new]
            # each merged column is let go as soon as its successor is made
            self._keys = [np.insert(have, at, keys[new])]  # the widened keys
            del have
            self._sums = [np.insert(self._sums[0], at, sums[new])]
            self._counts = [np.insert(self._counts[0], at, counts[new])]
        else:
            self._keys, self._sums, self._counts = [keys], [sums], [counts]
        keys = self._keys[0]
        self._merged, self._pending = keys.size, 0

    def totals(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """``(sum of y, rows)`` per unit, in sorted unit order."""
        if not self._keys:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        if len(self._keys) > 1:
            self._merge()
        return self._sums[0], self._counts[0]


class CodeUnitSums:
    """:class:`UnitSums` when every unit is known up front as a code, its rank among the
    units' sorted text (:func:`cover.stream.fit_columns.unit_codes`): one count and one
    sum per unit in place (8 bytes a unit), no keys, no merges; :meth:`totals` gives
    the same arrays as :class:`UnitSums` fed the units' text (units with rows only)."""

    def __init__(self, n_units: int) -> None:
        self._sums = np.zeros(n_units, dtype=np.int32)
        self._counts = np.zeros(n_units, dtype=np.int32)
        self._rows = 0

    def add(self, codes: NDArray[np.integer], y: NDArray[np.bool_]) -> None:
        if codes.size == 0:
            return
        self._rows += codes.size
        if self._rows >= 2**31 and self._counts.dtype != np.int64:  # a unit could overflow
            self._sums, self._counts = self._sums.astype(np.int64), self._counts.astype(np.int64)
        units, inv = np.unique(codes, return_inverse=True)
        self._sums[units] += np.bincount(inv, weights=y, minlength=units.size).astype(
            self._sums.dtype)
        self._counts[units] += np.bincount(inv, minlength=units.size).astype(
            self._counts.dtype)

    def totals(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """``(sum of y, rows)`` per unit with rows, in sorted unit order."""
        have = self._counts > 0
        return self._sums[have].astype(np.int64), self._counts[have].astype(np.int64)


def cluster_sd_of(unit_sum: NDArray[Any], unit_n: NDArray[Any], n: int) -> float:
    """Cluster-robust sd of a mean from per-unit sums: ``sqrt(sum_u (S_u - n_u ybar)^2) / n``
    with ``ybar = sum_u S_u / n``; units in sorted order (so a stream and the whole
    table give the same bits)."""
    if n == 0:
        return float("nan")
    s = np.asarray(unit_sum, dtype=np.float64)
    # the same values in the same order, made Python floats a chunk at a time (a list of
    # every unit's sum took ~32 bytes a unit)
    ybar = math.fsum(itertools.chain.from_iterable(
        s[a:a + CHUNK].tolist() for a in range(0, s.size, CHUNK))) / n
    per_unit = s - np.asarray(unit_n, dtype=np.float64) * ybar
    return float(np.sqrt(np.sum(per_unit**2)) / n)
