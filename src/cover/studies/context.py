"""One (grounder, dataset) pair prepared for the studies: the frozen unit-level split,
the resample matrix, and the per-family sweeps, computed once and shared by every study;
values of the table that no split changes (:class:`TableFacts`) are shared by the pairs
of every split seed."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from numpy.typing import NDArray

from cover.data.splits import UnitSplit, seeded_splits, unit_codes
from cover.data.table import GroundingTable
from cover.grounding_rows import GroundingRows
from cover.scores import DEFAULT_MIN_SCALE, FAMILIES
from cover.studies.protocol import Protocol
from cover.studies.sweep import ResampleThresholds, Sweep, resample_thresholds


@dataclass
class TableFacts:
    """What the studies need of a table whatever its split: its units as integer codes
    (:func:`cover.data.splits.unit_codes`), the per-row values behind the field's
    metrics and the SLS sweep of all rows, worked out on first use."""

    table: GroundingTable
    #: Keep the whole-table sweeps between pairs (pairs of several seeds); a single pair
    #: takes its pool and test sweeps and lets the whole-table one go.
    keep_sweeps: bool = True
    _field_rows: GroundingRows | None = field(default=None, init=False, repr=False)
    _field_done: NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool),
                                           init=False, repr=False)
    _codes: NDArray[np.intp] | None = field(default=None, init=False, repr=False)
    _sweeps: dict[tuple[str, float, str], Sweep] = field(default_factory=dict, init=False,
                                                         repr=False)

    def sweep(self, family: str, min_scale: float, target: str) -> Sweep:
        """:meth:`Sweep.of` the whole table (cached when :attr:`keep_sweeps`): a pair's SLS
        sweeps are taken from it (their clips sorted once per table, not once per split)."""
        key = (family, min_scale, target)
        if key in self._sweeps:
            return self._sweeps[key]
        whole = Sweep.of(self.table, family, min_scale=min_scale, target=target)
        if self.keep_sweeps:
            self._sweeps[key] = whole
        return whole

    @property
    def unit_codes(self) -> NDArray[np.intp]:
        """Each row's unit as ``0 .. U - 1`` in sorted order of the unit names."""
        if self._codes is None:
            self._codes = unit_codes(self.table.units)
        return self._codes

    def field_rows(self, rows: NDArray[np.int64]) -> GroundingRows:
        """:class:`GroundingRows` of the table with at least ``rows`` worked out: rows are
        worked out once, when first asked for (one run needs its test rows only)."""
        if self._field_rows is None:
            self._field_rows = GroundingRows.empty(len(self.table))
            self._field_done = np.zeros(len(self.table), dtype=bool)
        missing = rows[~self._field_done[rows]]
        if missing.size:
            self._field_rows.put(missing, GroundingRows.of(self.table.take(missing)))
            self._field_done[missing] = True
        return self._field_rows


@dataclass
class Pair:
    """A labelled table of one grounder on one dataset, split by the protocol.

    ``masks`` is the ``(R, n_pool)`` matrix of calibration resamples (R = 1 and the
    whole pool when ``protocol.n_resamples == 0``). Families without any usable
    prediction (SLS on a grounder with no relevance signal) are not applicable.
    ``facts`` (default: new) may come from a pair of the same table under another seed
    (:meth:`reseeded`).
    """

    name: str
    dataset: str
    table: GroundingTable
    protocol: Protocol
    min_scale: float = DEFAULT_MIN_SCALE
    target: str = "envelope"
    facts: TableFacts | None = field(default=None, repr=False)
    split: UnitSplit = field(init=False)
    pool: GroundingTable = field(init=False)
    test: GroundingTable = field(init=False)
    masks: NDArray[np.bool_] = field(init=False)
    _sweeps: dict[tuple[str, str], Sweep] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.facts is None:
            self.facts = TableFacts(self.table, keep_sweeps=False)
        elif self.facts.table is not self.table:
            raise ValueError("facts belong to another table")
        p = self.protocol
        # Bit for bit split_by_unit and resample_units, from the units' integer codes.
        (self.split, self.masks), = seeded_splits(
            self.facts.unit_codes, [p.seed], cal_frac=p.cal_frac, n_resamples=p.n_resamples,
            frac=p.resample_frac)
        self.pool = self.table.take(self.split.calibration)
        self.test = self.table.take(self.split.test)

    def reseeded(self, seed: int) -> Pair:
        """The same pair under split seed ``seed`` (sharing :attr:`facts`, which now keep
        their whole-table sweeps)."""
        assert self.facts is not None
        self.facts.keep_sweeps = True
        return Pair(self.name, self.dataset, self.table, replace(self.protocol, seed=seed),
                    self.min_scale, self.target, self.facts)

    @property
    def field_rows(self) -> GroundingRows:
        """Per-row values of the field's metrics (at least the test rows worked out),
        shared across seeds."""
        assert self.facts is not None
        return self.facts.field_rows(np.flatnonzero(self.split.test))

    @property
    def pool_codes(self) -> NDArray[np.intp]:
        """:attr:`TableFacts.unit_codes` of the pool rows (the same groups, in the same
        order, as their unit names)."""
        assert self.facts is not None
        return self.facts.unit_codes[self.split.calibration]

    @property
    def test_codes(self) -> NDArray[np.intp]:
        """:attr:`TableFacts.unit_codes` of the test rows."""
        assert self.facts is not None
        return self.facts.unit_codes[self.split.test]

    @property
    def label(self) -> str:
        return f"{self.name} on {self.dataset}"

    @property
    def families(self) -> tuple[str, ...]:
        """Score families with at least one usable prediction."""
        fams = []
        for f in FAMILIES:
            usable = self.table.has_relevance if f == "sls" else self.table.has_interval
            if usable.any():
                fams.append(f)
        return tuple(fams)

    def sweep(self, part: str, family: str) -> Sweep:
        """The :class:`Sweep` of ``family`` on ``part`` (``"pool"`` or ``"test"``), cached."""
        key = (part, family)
        if key not in self._sweeps:
            if family == "sls":  # sorting the clips is the cost: take the table's, once
                assert self.facts is not None
                whole = self.facts.sweep(family, self.min_scale, self.target)
                self._sweeps["pool", family] = whole.take(self.split.calibration)
                self._sweeps["test", family] = whole.take(self.split.test)
            else:
                tab = self.pool if part == "pool" else self.test
                self._sweeps[key] = Sweep.of(tab, family, min_scale=self.min_scale,
                                             target=self.target)
        return self._sweeps[key]

    def thresholds(self, family: str, alphas: tuple[float, ...]) -> ResampleThresholds:
        """Split-conformal thresholds of every pool resample at ``alphas``."""
        return resample_thresholds(self.sweep("pool", family).scores, self.masks, alphas)

    @property
    def mean_duration(self) -> float:
        return float(np.mean(self.table.duration))
