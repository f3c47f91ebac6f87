"""Per-row suffix counts and sums of values sorted within rows: the SLS sweep's index
(:mod:`cover.studies.sweep`). For a row and a cut ``c``, how many of the row's values are
``>= c`` and the sums of their weights, for a whole ``(thresholds, rows)`` grid of cuts
at once."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

F64 = NDArray[np.float64]


@dataclass(frozen=True)
class SuffixIndex:
    """Per-row suffix counts and sums of values sorted within rows: for a row ``r`` and a cut
    ``c``, :meth:`at` gives ``#{i in r : v_i >= c}`` and ``sum_{i in r, v_i >= c} w_i``."""

    keys: NDArray[np.int64]       # row * (U + 1) + rank of the value, ascending
    uniq: F64                     # the U distinct values, ascending
    ends: NDArray[np.int64]       # per row: end of its segment in sorted order
    cums: tuple[F64, ...]         # per weight: [0, cumulative sums in sorted order]
    sorted_weights: tuple[F64, ...] = ()  # per weight: the weights in sorted order
    sorted_rows: NDArray[np.int64] | None = None  # row of each value in sorted order
    sorted_values: F64 | None = None              # the values in sorted order

    @classmethod
    def of(cls, row: NDArray[np.int64], value: F64, n_rows: int,
           weights: tuple[F64, ...] = ()) -> SuffixIndex:
        uniq, rank = np.unique(value, return_inverse=True)
        keys = row * (uniq.size + 1) + rank.reshape(-1)
        order = np.argsort(keys, kind="stable")
        ends = np.cumsum(np.bincount(row, minlength=n_rows)).astype(np.int64)
        ws = tuple(w[order] for w in weights)
        return cls(keys[order], uniq, ends, cumulative(ws), ws, row[order],
                   value.reshape(-1)[order])

    def take(self, rows: NDArray[np.bool_]) -> SuffixIndex:
        """The index of the rows the mask ``rows`` keeps: bit for bit :meth:`of` of those
        rows' values and weights, without sorting again (the kept entries keep their
        sorted order; values and rows are renumbered among the kept ones)."""
        width = self.uniq.size + 1
        srows = self.keys // width if self.sorted_rows is None else self.sorted_rows
        keep = rows[srows]
        rank = (self.keys % width)[keep]
        present = np.zeros(self.uniq.size, dtype=bool)
        present[rank] = True
        uniq = self.uniq[present]
        new_rank = (np.cumsum(present) - 1)[rank]
        new_rows = (np.cumsum(rows) - 1)[srows[keep]]
        ends = np.cumsum(np.bincount(new_rows, minlength=int(np.count_nonzero(rows))))
        ws = tuple(w[keep] for w in self.sorted_weights)
        values = self.uniq[self.keys % width] if self.sorted_values is None \
            else self.sorted_values
        return SuffixIndex(new_rows * (uniq.size + 1) + new_rank, uniq, ends.astype(np.int64),
                           cumulative(ws), ws, new_rows, values[keep])

    def locate(self, cut: F64) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """``(pos, end)`` with the shape of ``cut`` (``(R, n)``, column = row): the values
        ``>= cut`` of row ``r`` are the sorted positions ``pos .. end - 1``."""
        rows = np.broadcast_to(np.arange(cut.shape[1], dtype=np.int64), cut.shape)
        if cut.ndim == 2 and cut.shape[1] and cut.strides[1] == 0 and \
                cut.size >= self.keys.size // 4:
            return self._locate_common(cut[:, 0]), self.ends[rows]
        q = rows * (self.uniq.size + 1) + np.searchsorted(self.uniq, cut, side="left")
        return np.searchsorted(self.keys, q, side="left"), self.ends[rows]

    def _locate_common(self, cuts: F64) -> NDArray[np.int64]:
        """``pos`` of :meth:`locate` for one cut per threshold, the same in every row:
        ``start(r) + #{v in r : v < cut}`` counted by binning each value among the sorted
        cuts (one pass over the values instead of a search per (threshold, row))."""
        n_rows, width = self.ends.size, self.uniq.size + 1
        rows, values = self.sorted_rows, self.sorted_values
        if rows is None or values is None:
            rows, values = self.keys // width, self.uniq[self.keys % width]
        order = np.argsort(cuts, kind="stable")
        # v < cuts[order[j]]  <=>  j >= #{cuts <= v}
        b = np.searchsorted(cuts[order], values, side="right")
        per = np.bincount(rows * (cuts.size + 1) + b,
                          minlength=n_rows * (cuts.size + 1)).reshape(n_rows, cuts.size + 1)
        less = np.cumsum(per[:, :-1], axis=1)  # (n, R) in sorted-cut order
        starts = np.r_[0, self.ends[:-1]]
        pos = np.empty((cuts.size, n_rows), dtype=np.int64)
        pos[order] = (less + starts[:, None]).T
        return pos

    def at(self, cut: F64) -> tuple[NDArray[np.int64], tuple[F64, ...]]:
        """``(count, sums)`` with shape of ``cut`` (``(R, n)``, column = row)."""
        pos, end = self.locate(cut)
        return end - pos, tuple(c[end] - c[pos] for c in self.cums)


def cumulative(weights: tuple[F64, ...]) -> tuple[F64, ...]:
    """``[0, cumulative sums]`` of each weight array (the suffix sums' table)."""
    return tuple(np.concatenate([[0.0], np.cumsum(w)]) for w in weights)


__all__ = ["SuffixIndex", "cumulative"]
