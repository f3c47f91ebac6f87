"""Online ACI: the replay equals the stream API step by step, the deterministic long-run
miss-rate bound of Gibbs & Candès holds on any stream, and the miss rate returns to
alpha after a shift while split conformal stays off."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.calibrate.online import OnlineCalibrator, aci_replay, rolling_mean
from cover.calibrate.split import split_conformal
from cover.data.table import GroundingTable

ALPHAS = st.sampled_from(["0.05", "0.1", "0.2", "0.5", "1/3"])
GAMMAS = st.sampled_from(["0.005", "0.01", "0.05", "0.1", "0.3", "1/7"])
SCORE = st.one_of(st.floats(-5, 5), st.just(-np.inf), st.sampled_from([0.0, 1.0, 2.0]))


@settings(max_examples=60)
@given(st.lists(SCORE, max_size=30), st.lists(SCORE, max_size=80), ALPHAS, GAMMAS)
def test_replay_equals_the_stream_api(cal, stream, alpha, gamma):
    rec = aci_replay(cal, stream, alpha=alpha, gamma=gamma)
    online = OnlineCalibrator(cal, alpha=alpha, gamma=gamma)
    for i, s in enumerate(stream):
        assert online.threshold == rec.threshold[i]
        assert min(max(online.k, 0), len(cal) + 1) == rec.k[i]  # the replay clips k
        assert online.alpha_t == pytest.approx(rec.alpha_t[i], abs=1e-12)
        assert online.observe(s) == (not rec.miss[i])
    assert online.misses == int(rec.miss.sum())


@settings(max_examples=100)
@given(st.lists(st.floats(-5, 5), max_size=40), st.lists(st.floats(-5, 5), min_size=1,
                                                         max_size=400), ALPHAS, GAMMAS)
def test_long_run_miss_rate_bound_holds_on_any_stream(cal, stream, alpha, gamma):
    """|mean err - alpha| <= (max(alpha, 1 - alpha) + gamma) / (gamma T), deterministic."""
    rec = aci_replay(cal, stream, alpha=alpha, gamma=gamma)
    assert abs(rec.miss_rate - float(rec.alpha)) <= rec.bound() + 1e-12


def test_matches_a_float_recursion_where_floats_are_exact():
    """alpha = 1/4, gamma = 1/16: every alpha_t is a dyadic rational, so the textbook
    float recursion is exact and must agree step by step (independent implementation)."""
    rng = np.random.default_rng(1)
    cal, stream = rng.standard_normal(63), rng.standard_normal(3000) * np.linspace(0.5, 3, 3000)
    rec = aci_replay(cal, stream, alpha=0.25, gamma=0.0625)
    srt = np.sort(cal)
    a_t, miss = 0.25, []
    for s in stream:
        k = math.ceil(64 * (1 - a_t))
        q = -np.inf if k <= 0 else (np.inf if k > 63 else srt[k - 1])
        err = bool(s > q)
        miss.append(err)
        a_t += 0.0625 * (0.25 - err)
    assert rec.miss.tolist() == miss


def test_miss_rate_returns_to_alpha_after_a_shift():
    """Exchangeable for 2000 steps, then every score doubles: split conformal calibrated
    before the shift misses far more than alpha afterwards; ACI's rolling miss rate
    returns to alpha, and over many draws its long-run miss rate is alpha."""
    alpha, T = 0.1, 4000
    rates, late_aci, late_split = [], [], []
    for seed in range(20):
        rng = np.random.default_rng(seed)
        cal = rng.standard_normal(500)
        stream = np.abs(rng.standard_normal(T)) * np.where(np.arange(T) < T // 2, 1.0, 2.0)
        cal = np.abs(cal)
        rec = aci_replay(cal, stream, alpha=alpha, gamma=0.01)
        rates.append(rec.miss_rate)
        late_aci.append(rec.miss[-1000:].mean())
        late_split.append((stream[-1000:] > split_conformal(cal, alpha=alpha).value).mean())
    assert abs(np.mean(rates) - alpha) < 0.01
    assert abs(np.mean(late_aci) - alpha) < 0.015
    assert np.mean(late_split) > 0.3


def test_rolling_mean_is_the_trailing_window_mean():
    x = np.array([1, 0, 0, 1, 1, 1, 0], dtype=float)
    want = [np.mean(x[max(0, t - 3):t]) for t in range(1, 8)]
    np.testing.assert_allclose(rolling_mean(x, 3), want)
    with pytest.raises(ValueError, match="window"):
        rolling_mean(x, 0)


def test_certify_uses_the_current_threshold_and_update_checks_its_input():
    cal = np.arange(1.0, 20.0) / 10  # SEC scores 0.1 .. 1.9 s
    oc = OnlineCalibrator(cal, alpha=0.1, gamma=0.05, score="sec")
    row = GroundingTable.from_arrays(qid=[1], duration=100.0, pred_start=[40.0],
                                     pred_end=[50.0])
    assert oc.threshold == 1.8  # k = ceil(20 * 0.9) = 18
    assert oc.certify(row).row(0) == [[38.2, 51.8]]
    oc.update(False)  # alpha_2 = 0.1 + 0.05 (0.1 - 1) = 0.055: k = ceil(20 * 0.945) = 19
    assert oc.alpha_t == pytest.approx(0.055) and oc.threshold == 1.9
    with pytest.raises(TypeError, match="True or False"):
        oc.update(1)  # type: ignore[arg-type]
    assert "misses=1" in repr(oc)


def test_bad_inputs_are_clear_errors():
    with pytest.raises(ValueError, match="gamma must be"):
        aci_replay([1.0], [1.0], alpha=0.1, gamma=0)
    with pytest.raises(ValueError, match="gamma must be"):
        OnlineCalibrator([1.0], alpha=0.1, gamma="1.5")
    with pytest.raises(ValueError, match="step 2 is NaN"):
        aci_replay([1.0], [1.0, np.nan], alpha=0.1)
    with pytest.raises(ValueError, match="calibration scores contain NaN"):
        aci_replay([np.nan], [1.0], alpha=0.1)
