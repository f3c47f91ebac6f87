"""One sweep at a fixed set of thresholds, read for any subset of its rows.

Repeating a study over many unit-level splits evaluates the same rows at the same few
thresholds again and again (a threshold is always one of the table's scores). A
:class:`SweepGrid` evaluates the whole table once at every threshold any split needs;
:meth:`SweepGrid.take` then gives, for one split's test rows and its thresholds, bit for
bit what ``Sweep.of(test table).at(thresholds)`` computes:

* per-row quantities of the interval families, coverage, counts and components are
  elementwise, so they are gathered;
* the SLS length and overlap are suffix sums whose cumulative-sum table runs over the
  rows of the table it was built on; the subset's table is the whole table's sorted
  weights restricted to the subset's clips (the same order), summed again (one
  ``cumsum`` per split), and the whole table's positions are mapped into it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from cover.studies.suffix_index import cumulative
from cover.studies.sweep import F64, Sweep, SweepMetrics, certified_length, finish_metrics

I64 = NDArray[np.int64]


@dataclass(frozen=True)
class SweepGrid:
    """``sweep`` evaluated at ``lams`` (``(U,)``, ascending) for every row: ``(U, n)``
    arrays. Interval families keep ``length``/``inter``; SLS keeps the suffix positions
    (``pos``, ``end``) instead, whose sums depend on the subset."""

    sweep: Sweep
    lams: F64
    comps: F64
    length: F64 | None = None
    inter: F64 | None = None
    pos: I64 | None = None
    end: I64 | None = None
    row_of: I64 | None = None     # SLS: the row of each clip in the index's order

    @classmethod
    def of(cls, sweep: Sweep, lams: F64) -> SweepGrid:
        lam = np.broadcast_to(np.asarray(lams, dtype=np.float64)[:, None],
                              (len(lams), len(sweep)))
        if sweep.by_value is not None and sweep.by_pair_min is not None:
            pos, end = sweep.by_value.locate(-lam)
            n_joined, _ = sweep.by_pair_min.at(-lam)
            idx = sweep.by_value
            return cls(sweep, np.asarray(lams), (end - pos - n_joined).astype(np.float64),
                       pos=pos, end=end, row_of=idx.keys // (idx.uniq.size + 1))
        length, inter, comps = sweep.interval_parts(lam)
        return cls(sweep, np.asarray(lams), comps, length=length, inter=inter)

    def index(self, lams: F64) -> NDArray[np.intp]:
        """Positions of ``lams`` (each one of :attr:`lams`) in the grid."""
        i = np.searchsorted(self.lams, lams)
        if not np.array_equal(self.lams[np.minimum(i, self.lams.size - 1)], lams):
            raise ValueError("a threshold is not on the grid")
        return i

    def _parts(self, which: NDArray[np.intp], rows: NDArray[np.bool_]
               ) -> tuple[F64, NDArray[np.bool_], F64, F64]:
        """``(lam, whole, raw length, raw overlap)`` of ``rows`` at ``lams[which]``."""
        sw = self.sweep
        lam = np.broadcast_to(self.lams[which][:, None], (which.size, int(rows.sum())))
        whole = sw.refused[rows][None, :] | np.isposinf(lam)
        if self.pos is not None and self.end is not None and self.row_of is not None:
            idx = sw.by_value
            assert idx is not None
            # The subset's clips in the whole index's order, and each whole-index position
            # as a count of the subset's clips before it.
            keep = rows[self.row_of]
            before = np.concatenate([[0], np.cumsum(keep)])
            pos, end = before[self.pos[which][:, rows]], before[self.end[which][:, rows]]
            cl, ci = cumulative(tuple(w[keep] for w in idx.sorted_weights))
            return lam, whole, cl[end] - cl[pos], ci[end] - ci[pos]
        assert self.length is not None and self.inter is not None
        return lam, whole, self.length[which][:, rows], self.inter[which][:, rows]

    def take(self, which: NDArray[np.intp], rows: NDArray[np.bool_]) -> SweepMetrics:
        """Metrics of the table's ``rows`` at thresholds ``lams[which]`` (``(R, n_rows)``),
        the same bits as the sweep of ``rows`` alone."""
        sw = self.sweep
        lam, whole, length, inter = self._parts(which, rows)
        covered = sw.scores[rows][None, :] <= lam
        return finish_metrics(covered, whole, sw.duration[rows], sw.truth_start[rows],
                              sw.truth_end[rows], length, inter, self.comps[which][:, rows])

    def coverage_length(self, which: NDArray[np.intp], rows: NDArray[np.bool_]
                        ) -> tuple[F64, F64]:
        """``(coverage, mean length)`` per threshold over ``rows``: what :meth:`take`'s
        ``coverage()`` and ``mean("length")`` give, without the other metrics."""
        sw = self.sweep
        lam, whole, length, _ = self._parts(which, rows)
        covered = sw.scores[rows][None, :] <= lam
        length = certified_length(whole, sw.duration[rows], length)
        if not covered.shape[1]:
            nan = np.full(covered.shape[0], np.nan)
            return nan, nan
        return covered.mean(axis=1), length.mean(axis=1)
