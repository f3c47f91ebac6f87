"""Groupings for Mondrian calibration: cut points, assignment, refusals, unseen groups."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.calibrate.groups import (
    Grouping,
    duration_buckets,
    equal_count_edges,
    key_groups,
    key_values,
    length_terciles,
    require_known,
)
from cover.data.table import GroundingTable


@settings(max_examples=100)
@given(st.lists(st.floats(0.1, 1e4), min_size=1, max_size=200, unique=True),
       st.integers(1, 6))
def test_equal_count_bins_hold_their_share(values, n_bins):
    edges = equal_count_edges(values, n_bins, drop_empty=False)
    g = Grouping("duration", tuple(f"b{i}" for i in range(n_bins)), edges)
    counts = np.bincount(g.assign(values), minlength=n_bins)
    m = len(values)
    expected = np.diff((np.arange(n_bins + 1) * m) // n_bins)
    assert counts.tolist() == expected.tolist()


def test_tied_cuts_move_to_the_nearer_count_and_never_leave_a_bin_empty():
    v = [60.0] * 76 + [150.0] * 74          # the median is 60, but cutting at 150 balances
    assert equal_count_edges(v, 2) == (150.0,)
    assert equal_count_edges([150.0] * 10 + [120.0], 2) == (150.0,)
    assert equal_count_edges([150.0] * 10, 3) == ()   # one value: one bin
    assert equal_count_edges([150.0] * 10, 3, drop_empty=False) == (150.0, 150.0)


def test_terciles_put_refusals_in_their_own_group():
    g = length_terciles([float(x) for x in range(1, 10)] + [np.nan, np.nan])
    assert g.labels == ("short", "medium", "long", "refused")
    codes = g.assign([1, 3, 4, 6, 7, 9, np.nan])
    assert codes.tolist() == [0, 0, 1, 1, 2, 2, 3]
    # the cut points are calibration order statistics: 3 rows per tercile here
    assert np.bincount(g.assign(np.arange(1.0, 10.0))).tolist() == [3, 3, 3]


def test_duration_buckets_lower_inclusive_and_unknown_durations():
    g = duration_buckets(edges=[60.0, 120.0])
    assert g.labels == ("[0, 60)", "[60, 120)", "[120, inf)")
    assert g.assign([10, 60, 119.9, 120, 500, np.nan, 0]).tolist() == [0, 1, 1, 2, 2, -1, -1]
    # default: an equal-count cut of the calibration durations (median -> 2 buckets)
    g2 = duration_buckets([30.0, 40.0, 150.0, 150.0])
    assert g2.edges == (150.0,)
    with pytest.raises(ValueError, match="> 0 seconds"):
        duration_buckets(edges=[-1.0])
    with pytest.raises(ValueError, match="non-decreasing"):
        Grouping("duration", ("a", "b", "c"), (5.0, 1.0))


def test_key_groups_and_unseen_values_are_a_clear_error():
    g = key_groups(["b", "a", "b", "c"], field="source")
    assert g.labels == ("a", "b", "c")
    codes = g.assign(["c", "a", "zzz", "b"])
    assert codes.tolist() == [2, 0, -1, 1]
    with pytest.raises(ValueError, match=r"group\(s\) zzz of key 'source' were not seen"):
        require_known(codes, g, ["c", "a", "zzz", "b"])
    assert key_groups([], field="x").assign(["a"]).tolist() == [-1]


def test_key_values_from_columns_and_input_rows():
    t = GroundingTable.from_arrays(qid=[1, 2], duration=100.0, pred_start=[1.0, 2.0],
                                   pred_end=[5.0, 9.0], vid=["yt1_0_150", "yt2_0_150"])
    assert key_values(t, "vid").tolist() == ["yt1_0_150", "yt2_0_150"]
    with pytest.raises(ValueError, match="keeps no input rows"):
        key_values(t, "source")
    from dataclasses import replace
    t2 = replace(t, records=np.array([{"source": "cam"}, {"other": 1}], dtype=object))
    with pytest.raises(ValueError, match="no field 'source'"):
        key_values(t2, "source")


def test_grouping_json_round_trip():
    for g in (length_terciles([1.0, 2.0, 3.0]), duration_buckets(edges=[60.0]),
              key_groups(["x", "y"], "k")):
        assert Grouping.from_dict(g.to_dict()) == g
