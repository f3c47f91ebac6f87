"""A study pair: its split and resamples are split_by_unit's and resample_units', and the
table's seed-independent values are shared by the pairs of every split seed."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from cover.data.splits import resample_units, split_by_unit
from cover.studies.context import Pair, TableFacts
from cover.studies.coverage import coverage
from cover.studies.coverage_validity import coverage_validity
from cover.studies.protocol import Protocol
from test_studies_coverage_validity import _exchangeable_table


@pytest.mark.parametrize("n_resamples", [0, 4])
def test_split_and_resamples_are_the_unit_draws(n_resamples: int) -> None:
    table = _exchangeable_table(300, 1, rows_per_unit=3)  # u0, u1, ... u99: name order
    proto = Protocol(n_resamples=n_resamples, seed=11)
    pair = Pair("g", "d", table, proto)
    split = split_by_unit(table.units, cal_frac=proto.cal_frac, seed=proto.seed)
    np.testing.assert_array_equal(pair.split.calibration, split.calibration)
    assert (pair.split.n_units_calibration, pair.split.n_units_test) == (
        split.n_units_calibration, split.n_units_test)
    want = (np.stack(resample_units(table.units[split.calibration], n_resamples=n_resamples,
                                    frac=proto.resample_frac, seed=proto.seed))
            if n_resamples else np.ones((1, int(split.calibration.sum())), dtype=bool))
    np.testing.assert_array_equal(pair.masks, want)
    # Codes group the rows as the names do.
    names, codes = table.units[split.test], pair.test_codes
    assert np.unique(names).size == np.unique(codes).size
    np.testing.assert_array_equal(np.unique(names, return_inverse=True)[1].reshape(-1),
                                  np.unique(codes, return_inverse=True)[1].reshape(-1))


def test_reseeded_pairs_share_the_tables_values() -> None:
    table = _exchangeable_table(200, 2, rows_per_unit=2)
    pair = Pair("g", "d", table, Protocol(n_resamples=3))
    other = pair.reseeded(5)
    assert other.protocol == replace(pair.protocol, seed=5) and other.facts is pair.facts
    assert other.field_rows is pair.field_rows  # worked out once
    with pytest.raises(ValueError, match="another table"):
        Pair("g", "d", _exchangeable_table(200, 3), Protocol(), facts=TableFacts(table))


def test_the_coverage_study_of_a_pair_is_coverage_validity_of_its_table() -> None:
    table = _exchangeable_table(400, 4, rows_per_unit=2)
    proto = Protocol(n_resamples=5, alphas=(0.1, 0.3), seed=7)
    pair = Pair("g", "d", table, proto)
    assert pair.reseeded(1).field_rows.n == len(table)  # worked out under another seed
    _, res = coverage(pair)
    want = coverage_validity(table, name="g", families=pair.families, protocol=proto)
    assert repr(res.to_dict()) == repr(want.to_dict())


def test_a_single_pair_lets_the_whole_table_sweep_go() -> None:
    """A pair on its own keeps only its pool and test sweeps; pairs of several seeds keep
    the whole-table one (taken from, not rebuilt)."""
    from cover.studies.sweep import Sweep

    table = _exchangeable_table(200, 5, rows_per_unit=2)
    pair = Pair("g", "d", table, Protocol(n_resamples=2))
    assert pair.facts is not None and not pair.facts.keep_sweeps
    want = Sweep.of(pair.test, "norm")
    np.testing.assert_array_equal(pair.sweep("test", "norm").scores, want.scores)
    assert pair.facts._sweeps == {}
    other = pair.reseeded(3)
    assert pair.facts.keep_sweeps
    whole = other.facts.sweep("norm", other.min_scale, other.target)
    assert other.facts.sweep("norm", other.min_scale, other.target) is whole
