"""Ties among calibration scores: counts per resample from one sort, and when the
split-conformal upper bound applies."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.ties import Ties, distinct_counts, mass_at, upper_bound_applies


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.integers(0, 2**31), st.integers(1, 60))
def test_counts_equal_the_plain_ones_per_resample(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    s = np.round(rng.normal(size=n), 1)  # rounding makes ties
    s[rng.random(n) < 0.1] = np.inf
    masks = rng.random((6, n)) < 0.6
    th = np.array([s[m].max() if m.any() else 0.0 for m in masks])
    got_d, got_at = distinct_counts(s, masks), mass_at(s, th, masks)
    for r, m in enumerate(masks):
        assert got_d[r] == np.unique(s[m]).size
        assert got_at[r] == np.count_nonzero(s[m] == th[r])
    assert distinct_counts(s)[0] == np.unique(s).size


def test_upper_bound_needs_at_most_one_score_at_the_threshold() -> None:
    assert upper_bound_applies(np.array([0, 1, 2])).tolist() == [True, True, False]
    tied = Ties.of([1.0, 2.0, 2.0, 2.0, 3.0], 2.0)
    assert (tied.n, tied.distinct, tied.at_threshold) == (5, 3, 3)
    assert not tied.upper_bound_applies
    assert tied.describe(0.1) == (
        "calibration scores: 3 distinct values in 5 rows; 3 at the threshold (ties at the "
        "threshold: the upper bound 1 - alpha + 1/(n+1), which assumes distinct scores, "
        "does not apply)")
    free = Ties.of([1.0, 2.0, 3.0, 4.0], 3.0)
    assert free.describe(0.3).endswith("(no ties there: coverage is at most 1 - alpha + "
                                       "1/(n+1) = 0.9000)")
    assert free.describe(split=False) == ("calibration scores: 4 distinct values in 4 rows; "
                                          "1 at the threshold")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([0.0, -0.0, 1.5, 2.0, float("inf"), -float("inf"),
                                 float("nan"), 7.25]), min_size=1, max_size=40))
def test_all_rows_count_the_runs_as_one_resample_of_every_row_does(values: list[float]) -> None:
    """Without masks the distinct values are counted from the sorted scores alone: the
    count of one all-true resample (-0.0 equals 0.0; each NaN is its own value)."""
    s = np.array(values)
    every = np.ones((1, s.size), dtype=bool)
    assert distinct_counts(s).tolist() == distinct_counts(s, every).tolist()
