"""The paper's duration-bucketed rule: per-bucket thresholds with a reported pooled fallback."""

from __future__ import annotations

import numpy as np
import pytest

from cover.calibrate.buckets import duration_bucketed
from cover.calibrate.split import split_conformal
from cover.errors import CoverWarning


def test_each_bucket_is_split_conformal_on_its_rows():
    rng = np.random.default_rng(0)
    dur = rng.uniform(5, 200, 400)
    s = rng.standard_normal(400) * np.where(dur < 60, 1.0, 3.0)
    th = duration_bucketed(s, dur, alpha=0.1, edges=[60.0, 120.0])
    for b, (lo, hi) in enumerate([(0, 60), (60, 120), (120, np.inf)]):
        sel = (dur >= lo) & (dur < hi)
        assert th.values[b] == split_conformal(s[sel], alpha=0.1).value
    default = duration_bucketed(s, dur, alpha=0.1)  # two equal-count buckets
    assert default.n.tolist() == [200, 200]


def test_sparse_bucket_falls_back_to_the_pool_with_a_warning():
    """The paper's C->A case: a high-duration bucket with 2 calibration rows."""
    dur = np.r_[np.full(1498, 30.0), [160.0, 170.0]]
    s = np.linspace(0, 1, 1500)
    with pytest.warns(CoverWarning, match=r"group '\[100, inf\)' \(duration\): 2 calibration"):
        th = duration_bucketed(s, dur, alpha=0.2, edges=[100.0])
    assert th.fallback.tolist() == [False, True]
    assert th.values[1] == th.pooled.value
    th2 = duration_bucketed(s, dur, alpha=0.2, edges=[100.0], min_rows=2000, warn=False)
    assert th2.fallback.all()


def test_unknown_durations_are_an_error():
    with pytest.raises(ValueError, match=r"calibration row 2: video duration nan"):
        duration_bucketed([1.0, 2.0], [10.0, np.nan], alpha=0.1)
