"""Permutation KS: the matrix form equals the two-sample KS, and the test has power."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ks_2samp

from cover.studies.common import ks_statistic
from cover.studies.exchangeability import ks_rows, permutation_ks


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.integers(0, 2**31), st.integers(2, 80))
def test_ks_rows_equals_two_sample_ks(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=n), 1)  # rounding makes ties
    x[rng.random(n) < 0.1] = -np.inf
    mask = rng.random((5, n)) < 0.5
    mask[:, 0], mask[:, 1] = True, False
    order = np.argsort(x, kind="stable")
    got = ks_rows(x[order], mask[:, order])
    for i in range(5):
        want = ks_statistic(x[mask[i]], x[~mask[i]])
        assert abs(got[i] - want) < 1e-12
        finite = np.isfinite(x)
        if finite[mask[i]].all() and finite[~mask[i]].all():
            assert abs(want - ks_2samp(x[mask[i]], x[~mask[i]]).statistic) < 1e-12


def test_permutation_p_is_large_under_exchangeability_and_small_under_shift() -> None:
    rng = np.random.default_rng(0)
    units = np.repeat(np.arange(120).astype(str), 3)
    in_pool = np.isin(units, np.arange(0, 120, 2).astype(str))
    same = rng.normal(size=units.size)
    _, p_same, perm = permutation_ks(same, units, in_pool, n_perm=400)
    assert perm.shape == (400,)
    assert 1 / 401 <= p_same <= 1
    assert p_same > 0.01
    shifted = same + np.where(in_pool, 0.8, 0.0)
    _, p_shift, _ = permutation_ks(shifted, units, in_pool, n_perm=400)
    assert p_shift == 1 / 401
