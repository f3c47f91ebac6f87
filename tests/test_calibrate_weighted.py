"""Weighted split conformal: exact reduction to split conformal, coverage under a known
covariate shift over many calibration draws, the positivity report, clear errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.calibrate.ratio import fit_logistic_ratio
from cover.calibrate.split import split_conformal
from cover.calibrate.weighted import (
    check_weights,
    weighted_conformal,
    weighted_from_covariate,
)

ALPHAS = st.sampled_from(["0.05", "0.1", "0.2", "0.3", "0.7", "1/3"])


@settings(max_examples=100)
@given(st.lists(st.floats(-100, 100), min_size=1, max_size=80), ALPHAS, st.integers(1, 7))
def test_equal_integer_weights_are_split_conformal(scores, alpha, c):
    th = weighted_conformal(scores, np.full(len(scores), float(c)), [float(c)], alpha=alpha)
    assert th.values[0] == split_conformal(scores, alpha=alpha, warn=False).value
    assert th.report.unsupported[0] == (not np.isfinite(th.values[0]))


@settings(max_examples=100)
@given(st.lists(st.tuples(st.floats(-10, 10), st.floats(0, 5)), min_size=1, max_size=60),
       st.lists(st.floats(0, 5), min_size=1, max_size=10), ALPHAS)
def test_matches_the_weighted_quantile_definition(rows, test_w, alpha):
    """Brute force: q(x) = min{ s_j : sum_{S_i <= s_j} w_i >= (1-alpha)(W + w(x)) }."""
    s = np.array([r[0] for r in rows])
    w = np.array([r[1] for r in rows])
    if not (w > 0).any():
        w[0] = 1.0
    th = weighted_conformal(s, w, test_w, alpha=alpha)
    a = float(eval(alpha)) if "/" in alpha else float(alpha)
    for j, wt in enumerate(test_w):
        mass = np.array([w[s <= v].sum() for v in s])
        need = (1 - a) * (w.sum() + wt)
        ok = s[mass >= need - 1e-9 * (1 + need)]
        slack = s[mass >= need + 1e-9 * (1 + need)]
        lo = ok.min() if ok.size else np.inf
        hi = slack.min() if slack.size else np.inf
        assert lo <= th.values[j] <= hi  # equal up to float ties at the boundary


def _shifted(rng, n, m, shift):
    """X ~ N(0,1) at calibration, N(shift,1) at test; S = |eps| (0.5 + |X|): the score
    law depends on X, so the shift moves it. True ratio w(x) = exp(shift x - shift^2/2)."""
    xc, xt = rng.standard_normal(n), rng.standard_normal(m) + shift
    sc = np.abs(rng.standard_normal(n)) * (0.5 + np.abs(xc))
    st_ = np.abs(rng.standard_normal(m)) * (0.5 + np.abs(xt))
    return xc, sc, xt, st_


@pytest.mark.parametrize(("n", "alpha"), [(100, 0.1), (200, 0.2)])
def test_weighted_coverage_under_a_known_covariate_shift(n, alpha):
    rng = np.random.default_rng([11, n])
    R, M, shift = 800, 40, 1.0

    def ratio(x):
        return np.exp(shift * x - shift**2 / 2)

    cov_w, cov_u = np.empty(R), np.empty(R)
    for r in range(R):
        xc, sc, xt, st_ = _shifted(rng, n, M, shift)
        th = weighted_conformal(sc, ratio(xc), ratio(xt), alpha=alpha)
        cov_w[r] = (st_ <= th.values).mean()
        cov_u[r] = (st_ <= split_conformal(sc, alpha=alpha).value).mean()
    se = cov_w.std(ddof=1) / math.sqrt(R)
    assert cov_w.mean() >= 1 - alpha - 4 * se, (cov_w.mean(), se)
    assert cov_w.mean() <= 1 - alpha + 0.03  # valid without being trivially conservative
    assert cov_u.mean() < 1 - alpha - 0.03  # unweighted undercovers: the check can fail


def test_estimated_ratio_restores_coverage():
    rng = np.random.default_rng(5)
    R, n, M, alpha = 150, 300, 100, 0.1
    cov_w, cov_u = np.empty(R), np.empty(R)
    for r in range(R):
        xc, sc, xt, st_ = _shifted(rng, n, M, 1.0)
        th, _ = weighted_from_covariate(sc, xc, xt, alpha=alpha)
        cov_w[r] = (st_ <= th.values).mean()
        cov_u[r] = (st_ <= split_conformal(sc, alpha=alpha).value).mean()
    assert abs(cov_w.mean() - (1 - alpha)) < 0.02, cov_w.mean()
    assert cov_u.mean() < 1 - alpha - 0.03


def test_logistic_ratio_recovers_a_known_ratio():
    rng = np.random.default_rng(3)
    r = fit_logistic_ratio(rng.normal(0, 1, 20000), rng.normal(0.5, 1, 10000))
    x = np.array([-1.0, 0.0, 1.0, 2.0])
    np.testing.assert_allclose(r(x), np.exp(0.5 * x - 0.125), rtol=0.1)
    rl = fit_logistic_ratio(rng.lognormal(3, 0.3, 5000), rng.lognormal(3.3, 0.3, 5000),
                            log=True)
    assert rl(np.array([10.0]))[0] < 1 < rl(np.array([60.0]))[0]
    assert r.outside([-100.0, 0.0]).tolist() == [True, False]
    with pytest.raises(ValueError, match="must be > 0"):
        fit_logistic_ratio([1.0, -2.0], [3.0], log=True)
    with pytest.raises(ValueError, match="not a finite number"):
        fit_logistic_ratio([1.0, np.nan], [3.0])


def test_positivity_report_names_the_unsupported_rows():
    rng = np.random.default_rng(2)
    cal_x = rng.uniform(10, 40, 300)          # calibration videos: 10-40 s
    test_x = np.array([20.0, 35.0, 90.0, 150.0])  # two test videos far outside
    th, _ = weighted_from_covariate(rng.standard_normal(300), cal_x, test_x,
                                        alpha=0.1, log=True)
    rep = th.report
    assert rep.outside is not None and rep.outside.tolist() == [False, False, True, True]
    assert rep.unsupported[-1] and not rep.unsupported[0]
    assert np.isposinf(th.values[rep.unsupported]).all()
    text = "\n".join(rep.lines(["q20", "q35", "q90", "q150"]))
    assert "outside the calibration covariate range: qid q90, q150" in text
    assert "unsupported (positivity fails" in text and "q150" in text
    assert rep.to_dict(["a", "b", "c", "d"])["outside_range"] == ["c", "d"]
    assert 0 < rep.ess <= 300


@pytest.mark.parametrize(("weights", "match"), [
    ([1.0, -0.5], "row 2 is negative"), ([np.nan, 1.0], "row 1 is NaN"),
    ([1.0, np.inf], "row 2 is infinite"), ([0.0, 0.0], "all zero"), ([], "no calibration")])
def test_bad_weights_are_clear_errors(weights, match):
    with pytest.raises(ValueError, match=match):
        check_weights(weights, what="calibration")
    if weights:
        with pytest.raises(ValueError, match=match):
            weighted_conformal(np.zeros(len(weights)), weights, [1.0], alpha=0.1)


def test_bad_test_weights_and_shapes():
    with pytest.raises(ValueError, match="test weights: row 1 is negative"):
        weighted_conformal([1.0, 2.0], [1.0, 1.0], [-1.0], alpha=0.1)
    with pytest.raises(ValueError, match="2 calibration scores but 1"):
        weighted_conformal([1.0, 2.0], [1.0], [1.0], alpha=0.1)
    th = weighted_conformal([1.0, 2.0], [1.0, 1.0], [0.0], alpha=0.5)  # zero test weight is fine
    assert th.values.tolist() == [1.0] and th.report.n_eff.tolist() == [np.inf]
