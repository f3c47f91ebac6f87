"""The paired difference of two grounders: exact symmetries, clipping, and the cluster sd
being the project's own (``cover.metrics.cluster_sd``)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.metrics import cluster_sd
from cover.studies.paired import paired_differences, verdict

BOUNDS = {"lower": [-1.0, -150.0], "upper": [1.0, 150.0]}


def _data(seed: int, n: int, n_units: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    units = rng.integers(0, n_units, n).astype(str)
    a = np.column_stack([rng.random(n) < 0.9, rng.uniform(0, 150, n)]).astype(float)
    b = np.column_stack([rng.random(n) < 0.8, rng.uniform(0, 150, n)]).astype(float)
    return a, b, units


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 60), n_units=st.integers(1, 12))
def test_identical_inputs_give_zero_with_zero_width_and_swapping_negates(
        seed: int, n: int, n_units: int) -> None:
    a, b, units = _data(seed, n, n_units)
    same = paired_differences(a, a, units, **BOUNDS)
    assert (same.diff == 0).all() and (same.sd == 0).all()
    assert (same.lo == 0).all() and (same.hi == 0).all()
    assert not same.excludes_zero.any()
    ab = paired_differences(a, b, units, **BOUNDS)
    ba = paired_differences(b, a, units, **BOUNDS)
    assert np.array_equal(ab.diff, -ba.diff) and np.array_equal(ab.sd, ba.sd)
    assert np.array_equal(ab.lo, -ba.hi) and np.array_equal(ab.hi, -ba.lo)
    assert np.array_equal(ab.mean_a, ba.mean_b)
    assert (ab.lo >= np.array(BOUNDS["lower"])).all()
    assert (ab.hi <= np.array(BOUNDS["upper"])).all()


def test_sd_is_the_cluster_sd_of_the_per_query_differences() -> None:
    a, b, units = _data(3, 200, 25)
    p = paired_differences(a, b, units, **BOUNDS)
    for j in range(2):
        assert np.isclose(p.sd[j], cluster_sd(a[:, j] - b[:, j], units), rtol=1e-12)
    assert p.n == 200 and p.n_units == np.unique(units).size
    # Row order does not matter.
    perm = np.random.default_rng(0).permutation(200)
    q = paired_differences(a[perm], b[perm], units[perm], **BOUNDS)
    assert np.allclose(q.diff, p.diff) and np.allclose(q.sd, p.sd)


def test_interval_is_clipped_to_what_the_difference_can_be() -> None:
    # One video, every query covered by A and missed by B: the difference is +1 exactly,
    # and a noisy example near the edge keeps its upper end at 1.
    units = np.array(["v0", "v0", "v1", "v2"])
    a = np.array([[1.0], [1.0], [1.0], [1.0]])
    b = np.array([[0.0], [0.0], [0.0], [1.0]])
    p = paired_differences(a, b, units, lower=-1.0, upper=1.0)
    assert p.diff[0] == 0.75 and p.hi[0] == 1.0 and p.lo[0] < 0.75


def test_verdict_words() -> None:
    names = ("A", "B")
    assert verdict(0.1, 0.05, 0.2, higher_is_better=True, names=names) == "A better"
    assert verdict(-3.0, -5.0, -1.0, higher_is_better=False, names=names) == "A better"
    assert verdict(-0.02, -0.04, -0.01, higher_is_better=None, names=names) == "B higher"
    assert verdict(0.1, -0.05, 0.2, higher_is_better=True, names=names) == \
        "no clear difference"
