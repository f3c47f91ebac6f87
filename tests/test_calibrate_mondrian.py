"""Mondrian calibration: exact per-group ranks, per-group coverage, reported fallbacks.

Per-group coverage (paper Prop. A.3): within group g, with i.i.d. continuous scores,
the mean realised coverage is ``k_g / (n_g + 1)`` in ``[1 - alpha, 1 - alpha + 1/(n_g+1)]``.
Monte-Carlo checks allow 4 standard errors with a fixed seed.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.calibrate.groups import key_groups, length_terciles
from cover.calibrate.mondrian import mondrian_conformal
from cover.calibrate.quantile import conformal_rank, conformal_ranks
from cover.calibrate.split import split_conformal
from cover.errors import CoverWarning

ALPHAS = st.sampled_from(["0.05", "0.1", "0.2", "0.3", "0.7", "1/3", "0.123456789"])


@settings(max_examples=100)
@given(st.lists(st.integers(0, 10**6), max_size=30), ALPHAS)
def test_vectorised_ranks_match_the_exact_rank(ns, alpha):
    assert conformal_ranks(ns, alpha).tolist() == [conformal_rank(n, alpha) for n in ns]


def test_ranks_with_huge_denominators_stay_exact():
    alpha = Fraction(1, 3 * 10**17)
    assert conformal_ranks([5, 10**6], alpha).tolist() == [conformal_rank(5, alpha),
                                                          conformal_rank(10**6, alpha)]


@settings(max_examples=100)
@given(st.lists(st.tuples(st.integers(0, 4), st.floats(-50, 50)), max_size=120), ALPHAS)
def test_each_group_gets_its_own_split_conformal_threshold(rows, alpha):
    codes = np.array([c for c, _ in rows], dtype=np.int64)
    scores = np.array([s for _, s in rows], dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverWarning)
        th = mondrian_conformal(scores, codes, 5, alpha=alpha, fallback="inf")
    for g in range(5):
        ref = split_conformal(scores[codes == g], alpha=alpha, warn=False)
        assert th.own[g] == ref.value and th.k[g] == ref.k and th.n[g] == ref.n
        assert th.fallback[g] == (not ref.finite)
        assert th.values[g] == (np.inf if th.fallback[g] else ref.value)
    assert th.pooled.value == split_conformal(scores, alpha=alpha, warn=False).value


@pytest.mark.parametrize(("sizes", "alpha"), [((19, 40, 9), 0.1), ((30, 60, 120), 0.2)])
def test_per_group_coverage_over_calibration_draws(sizes, alpha):
    """Groups with very different score spreads: Mondrian covers each group at 1 - alpha
    on average over calibration draws, while one marginal threshold undercovers the
    widest group (so the check can fail)."""
    rng = np.random.default_rng([7, *sizes])
    R, M = 1500, 60
    spread = np.array([0.5, 1.0, 4.0])
    codes = np.repeat(np.arange(3), sizes)
    cov = np.zeros((R, 3))
    cov_marginal = np.zeros((R, 3))
    for r in range(R):
        cal = rng.standard_normal(codes.size) * spread[codes]
        th = mondrian_conformal(cal, codes, 3, alpha=alpha, warn=False)
        test = rng.standard_normal((3, M)) * spread[:, None]
        cov[r] = (test <= th.values[:, None]).mean(axis=1)
        cov_marginal[r] = (test <= th.pooled.value).mean(axis=1)
    mean, se = cov.mean(0), cov.std(0, ddof=1) / math.sqrt(R)
    k = conformal_ranks(np.array(sizes), alpha)
    expected = k / (np.array(sizes) + 1)
    assert (np.abs(mean - expected) <= 4 * se).all(), (mean, expected, se)
    assert (mean >= 1 - alpha - 4 * se).all()
    assert cov_marginal.mean(0)[2] < 1 - alpha - 0.05  # the marginal rule misses group 2


def test_small_group_falls_back_and_says_so():
    scores = np.r_[np.arange(1.0, 20.0), [500.0, 600.0]]
    codes = np.r_[np.zeros(19, int), [1, 1]]
    g = key_groups(["big", "tiny"], "source")
    with pytest.warns(CoverWarning, match=r"group 'tiny' \(key:source\): 2 calibration rows, "
                                          r"needs >= 9 for alpha=0.1; uses the pooled"):
        th = mondrian_conformal(scores, codes, g, alpha=0.1)
    assert th.fallback.tolist() == [False, True]
    assert th.values[1] == th.pooled.value == split_conformal(scores, alpha=0.1).value
    th_inf = mondrian_conformal(scores, codes, g, alpha=0.1, fallback="inf", warn=False)
    assert th_inf.values[1] == np.inf and th_inf.fallback_lines()[0].endswith("(whole video)")
    th_min = mondrian_conformal(scores, codes, g, alpha=0.1, min_rows=50, warn=False)
    assert th_min.fallback.all() and "needs >= 50" in th_min.fallback_lines()[0]
    with pytest.raises(ValueError, match="unknown fallback"):
        mondrian_conformal(scores, codes, g, alpha=0.1, fallback="zero")


def test_refusals_never_fall_back_and_unseen_groups_are_errors():
    lengths = np.r_[np.linspace(5, 50, 30)]
    g = length_terciles(lengths)
    codes = g.assign(lengths)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoverWarning)  # no refusals at calibration: no warning
        th = mondrian_conformal(np.linspace(0, 1, 30), codes, g, alpha=0.2)
    assert not th.fallback.any() and th.n[3] == 0
    assert th.per_row(g.assign([np.nan])).tolist() == [np.inf]  # refusal: whole video
    k = key_groups(["a", "b"], "site")
    thk = mondrian_conformal([1.0, 2.0], [0, 1], k, alpha=0.5, warn=False)
    with pytest.raises(ValueError, match=r"row 2: group\(s\) c of key 'site' were not seen"):
        thk.per_row(k.assign(["a", "c"]), ["a", "c"])


def test_bad_inputs_are_clear_errors():
    with pytest.raises(ValueError, match=r"outside 0\.\.1"):
        mondrian_conformal([1.0, 2.0], [0, 2], 2, alpha=0.1)
    with pytest.raises(ValueError, match="2 scores but 1 group codes"):
        mondrian_conformal([1.0, 2.0], [0], 2, alpha=0.1)
    with pytest.raises(ValueError, match="NaN"):
        mondrian_conformal([np.nan], [0], 1, alpha=0.1)
    with pytest.raises(ValueError, match="alpha must be in"):
        mondrian_conformal([1.0], [0], 1, alpha=1.5)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.one_of(st.integers(-3, 3).map(float),
                                                      st.just(-math.inf),
                                                      st.floats(-1e6, 1e6))),
                max_size=120),
       st.lists(st.integers(-1, 130), min_size=6, max_size=6))
def test_group_order_statistics_select_and_sort_agree(rows, ranks):
    """Per-group selection (few, large groups) and the (group, score) sort give each
    group's exact k-th smallest, +inf past its size; equal to sorting that group alone."""
    from cover.calibrate import mondrian

    codes = np.array([g for g, _ in rows], dtype=np.int64)
    scores = np.array([s for _, s in rows], dtype=np.float64)
    k = np.array(ranks, dtype=np.int64)
    got = {}
    for per_group in (0, 10**12):  # 0: always select per group; huge: always sort
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(mondrian, "_ROWS_PER_SELECT", per_group)
            got[per_group] = mondrian.group_order_statistics(scores, codes, 6, k)
    for g in range(6):
        mine = np.sort(scores[codes == g])
        want = mine[k[g] - 1] if 1 <= k[g] <= mine.size else math.inf
        assert got[0][0][g] == want and got[10**12][0][g] == want
    assert np.array_equal(got[0][1], np.bincount(codes, minlength=6))
