"""Unions of closed intervals, one union per row, as flat arrays + offsets.

This is the region type of COVER (a certified region may be several disjoint
intervals) and also the type of multi-window ground truth. Everything is
vectorised over rows, including merging, containment and intersection.

>>> iv = Intervals.from_lists([[[5, 8], [0, 2], [1, 3]], []]).normalized()
>>> iv.to_lists()
[[[0.0, 3.0], [5.0, 8.0]], []]
>>> iv.length().tolist(), iv.n_components.tolist()
([6.0, 0.0], [2, 0])
>>> iv.contains(Intervals.from_lists([[[1, 2.5]], []])).tolist()
[True, True]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.ragged import offsets_from_lengths, row_ids, segment_all, segment_any, segment_sum
from cover.ragged import take_index as _take_index

#: Containment is judged with this slack (seconds). Regions and truths are
#: produced by float arithmetic; a microsecond is far below any video timestamp
#: resolution and keeps ``score <= lam  <=>  truth inside region`` exact in practice.
CONTAINMENT_ATOL = 1e-6


@dataclass(frozen=True)
class Intervals:
    """Per-row unions of closed intervals ``[starts[j], ends[j]]``.

    Row ``i`` owns components ``offsets[i]:offsets[i+1]``. A *normalized* set has,
    within each row, components sorted by start, disjoint and non-touching.
    """

    starts: NDArray[np.float64]
    ends: NDArray[np.float64]
    offsets: NDArray[np.int64]

    # ---- construction -------------------------------------------------------------
    @classmethod
    def single(cls, starts: ArrayLike, ends: ArrayLike) -> Intervals:
        """One interval per row (offsets ``0..n``; :attr:`is_single` known without a scan)."""
        s = np.asarray(starts, dtype=np.float64)
        e = np.asarray(ends, dtype=np.float64)
        out = cls(s, e, single_offsets(s.size))
        out.__dict__["is_single"] = True  # cached_property slot; the dataclass stays frozen
        return out

    @classmethod
    def from_lists(cls, rows: Sequence[Sequence[Sequence[float]]]) -> Intervals:
        """From ``[[[s, e], ...], ...]`` (one list of pairs per row)."""
        lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        flat = np.asarray([p for r in rows for p in r], dtype=np.float64).reshape(-1, 2)
        return cls(flat[:, 0].copy(), flat[:, 1].copy(), offsets_from_lengths(lengths))

    @classmethod
    def concat(cls, parts: Sequence[Intervals]) -> Intervals:
        """The rows of ``parts``, one part after the other."""
        spans = [slice(p.offsets[0], p.offsets[-1]) for p in parts]
        return cls(np.concatenate([p.starts[s] for p, s in zip(parts, spans, strict=True)]),
                   np.concatenate([p.ends[s] for p, s in zip(parts, spans, strict=True)]),
                   offsets_from_lengths(np.concatenate([np.diff(p.offsets) for p in parts])))

    @classmethod
    def empty(cls, n: int) -> Intervals:
        return cls(np.empty(0), np.empty(0), np.zeros(n + 1, dtype=np.int64))

    # ---- basic views --------------------------------------------------------------
    def __len__(self) -> int:
        return self.offsets.size - 1

    @property
    def n_components(self) -> NDArray[np.int64]:
        """Number of components per row."""
        return np.diff(self.offsets)

    @cached_property
    def is_single(self) -> bool:
        """Exactly one component per row (``offsets == 0..n``): the fast paths' case."""
        n = len(self)
        return self.starts.size == n and bool((self.offsets == np.arange(n + 1)).all())

    @property
    def rows(self) -> NDArray[np.int64]:
        """Owning row of every component."""
        return row_ids(self.offsets)

    def row(self, i: int) -> list[list[float]]:
        a, b = self.offsets[i], self.offsets[i + 1]
        return [[float(s), float(e)] for s, e in zip(self.starts[a:b], self.ends[a:b], strict=True)]

    def to_lists(self) -> list[list[list[float]]]:
        """``[[[s, e], ...], ...]``; for writing, not for hot paths."""
        pairs = np.stack([self.starts, self.ends], axis=1).tolist()
        bounds = self.offsets.tolist()
        return [pairs[bounds[i] : bounds[i + 1]] for i in range(len(self))]

    def take(self, rows: ArrayLike) -> Intervals:
        flat, offsets = _take_index(self.offsets, np.asarray(rows, dtype=np.int64))
        return Intervals(self.starts[flat], self.ends[flat], offsets)

    def envelope(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Earliest start and latest end per row (NaN for rows without components)."""
        n = len(self)
        if self.is_single:
            return self.starts, self.ends
        lo = np.full(n, np.nan)
        hi = np.full(n, np.nan)
        k = self.n_components > 0
        if self.starts.size:
            lo[k] = np.minimum.reduceat(self.starts, self.offsets[:-1][k])
            hi[k] = np.maximum.reduceat(self.ends, self.offsets[:-1][k])
        return lo, hi

    # ---- measures -----------------------------------------------------------------
    def length(self) -> NDArray[np.float64]:
        """Total measure per row, ``sum_j (e_j - s_j)`` (assumes a normalized set)."""
        if self.is_single:
            return self.ends - self.starts
        return segment_sum(self.ends - self.starts, self.offsets)

    # ---- algebra ------------------------------------------------------------------
    def clip(self, lo: ArrayLike, hi: ArrayLike) -> Intervals:
        """Intersect each row with ``[lo_i, hi_i]``; components that vanish are dropped."""
        r = self.rows
        lo_r = np.broadcast_to(np.asarray(lo, dtype=np.float64), (len(self),))[r]
        hi_r = np.broadcast_to(np.asarray(hi, dtype=np.float64), (len(self),))[r]
        s = np.maximum(self.starts, lo_r)
        e = np.minimum(self.ends, hi_r)
        keep = s <= e
        return from_flat(s[keep], e[keep], r[keep], len(self))

    def normalized(self) -> Intervals:
        """Sort components within rows and merge overlapping or touching ones.

        A new component starts where the row changes or ``start > max(previous ends
        in the row)``. The running maximum within rows is exact: ends are replaced by
        their integer ranks and shifted by ``row * (m + 1)``, so one global
        ``maximum.accumulate`` never carries across rows.
        """
        m = self.starts.size
        if m == 0:
            return self
        r = self.rows
        order = np.lexsort((self.ends, self.starts, r))
        s, e, r = self.starts[order], self.ends[order], r[order]
        end_rank = np.empty(m, dtype=np.int64)
        by_end = np.argsort(e, kind="stable")
        end_rank[by_end] = np.arange(m)
        key = r * (m + 1) + end_rank
        running = np.maximum.accumulate(key) - r * (m + 1)
        running_end = e[by_end][running]
        new = np.ones(m, dtype=bool)
        new[1:] = (r[1:] != r[:-1]) | (s[1:] > running_end[:-1])
        starts_idx = np.flatnonzero(new)
        last_idx = np.append(starts_idx[1:], m) - 1
        return from_flat(s[starts_idx], running_end[last_idx], r[starts_idx], len(self))

    def _pairs(self, other: Intervals) -> tuple[NDArray[np.int64], NDArray[np.int64],
                                                 NDArray[np.int64]]:
        """All (component of self, component of other) pairs within the same row."""
        na = self.n_components
        nb = other.n_components
        npairs = na * nb
        pair_off = offsets_from_lengths(npairs)
        prow = row_ids(pair_off)
        p = np.arange(pair_off[-1], dtype=np.int64) - pair_off[prow]
        nb_r = nb[prow]
        ia = self.offsets[prow] + p // np.maximum(nb_r, 1)
        ib = other.offsets[prow] + p % np.maximum(nb_r, 1)
        return ia, ib, prow

    def relate(self, other: Intervals, atol: float = CONTAINMENT_ATOL) -> tuple[
        NDArray[np.bool_], NDArray[np.float64]
    ]:
        """Row-wise ``(other ⊆ self, |self ∩ other|)`` from one pass over component pairs.

        Containment: every component of ``other`` lies in one component of ``self``
        (``self`` normalized), up to ``atol`` seconds; an empty ``other`` is contained.
        """
        if len(self) != len(other):
            raise ValueError("row counts differ")
        if self.is_single and other.is_single:
            # One pair per row: the pair formulas themselves, without the expansion.
            s_a, e_a, s_b, e_b = self.starts, self.ends, other.starts, other.ends
            inside = (s_a <= s_b + atol) & (e_a >= e_b - atol)
            return inside, np.maximum(np.minimum(e_a, e_b) - np.maximum(s_a, s_b), 0.0)
        ia, ib, prow = self._pairs(other)
        s_a, e_a, s_b, e_b = self.starts[ia], self.ends[ia], other.starts[ib], other.ends[ib]
        inside = (s_a <= s_b + atol) & (e_a >= e_b - atol)
        # Component ib of other is covered if any pair covers it.
        covered = np.bincount(ib, weights=inside, minlength=other.starts.size) > 0
        overlap = np.maximum(np.minimum(e_a, e_b) - np.maximum(s_a, s_b), 0.0)
        inter = np.bincount(prow, weights=overlap, minlength=len(self)).astype(np.float64)
        return segment_all(covered, other.offsets), inter

    def contains(self, other: Intervals, atol: float = CONTAINMENT_ATOL) -> NDArray[np.bool_]:
        """Row-wise ``other ⊆ self`` (see :meth:`relate`)."""
        return self.relate(other, atol)[0]

    def intersection_length(self, other: Intervals) -> NDArray[np.float64]:
        """Row-wise ``|self ∩ other|`` for two normalized sets."""
        return self.relate(other)[1]

    @staticmethod
    def iou_from(inter: NDArray[np.float64], len_a: NDArray[np.float64],
                 len_b: NDArray[np.float64]) -> NDArray[np.float64]:
        """``inter / (len_a + len_b - inter)``, 0 where the union is empty."""
        union = len_a + len_b - inter
        return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)

    def iou(self, other: Intervals) -> NDArray[np.float64]:
        """Row-wise ``|A ∩ B| / |A ∪ B|`` (0 when both are empty)."""
        return self.iou_from(self.intersection_length(other), self.length(), other.length())

    def any_component(self) -> NDArray[np.bool_]:
        return segment_any(np.ones(self.starts.size, dtype=bool), self.offsets)


_RANGE: NDArray[np.int64] = np.zeros(1, dtype=np.int64)
_RANGE.flags.writeable = False


def single_offsets(n: int) -> NDArray[np.int64]:
    """``0..n``, the offsets of one component per row: a read-only view of one shared
    ``arange`` (grown on demand), so a large single-interval result does not page in a
    fresh offsets array each time. Offsets are never written in place."""
    global _RANGE
    if _RANGE.size < n + 1:
        grown = np.arange(n + 1, dtype=np.int64)
        grown.flags.writeable = False
        _RANGE = grown
    return _RANGE[: n + 1]


def from_flat(
    starts: NDArray[np.float64], ends: NDArray[np.float64], rows: NDArray[np.int64], n: int
) -> Intervals:
    """Build from components already grouped by row (rows non-decreasing)."""
    if rows.size == n and (n == 0 or (rows[0] == 0 and rows[-1] == n - 1)):
        # n non-decreasing rows from 0 to n - 1 with n entries: strictly increasing only
        # if every step is 1; a repeat forces a gap elsewhere, which the check catches.
        if n < 2 or bool((rows[1:] != rows[:-1]).all()):
            return Intervals.single(starts, ends)
    counts = np.bincount(rows, minlength=n).astype(np.int64)
    return Intervals(starts, ends, offsets_from_lengths(counts))
