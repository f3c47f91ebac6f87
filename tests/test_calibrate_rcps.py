"""RCPS: the miss rate exceeds alpha with probability <= delta, for every bound."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from cover.calibrate import Calibrator
from cover.calibrate.rcps import BOUNDS, max_misses, rcps, rcps_rank
from cover.calibrate.split import split_conformal
from test_calibrator_file import make_table


@given(n=st.integers(1, 400), alpha=st.sampled_from([0.05, 0.1, 0.2, 0.3]),
       delta=st.sampled_from([0.01, 0.05, 0.1, 0.2]))
@settings(max_examples=60, deadline=None)
def test_violation_probability_is_at_most_delta_exactly(n: int, alpha: float,
                                                        delta: float) -> None:
    """Continuous scores: lam_hat = k-th smallest, and R(lam_hat) > alpha iff at least k
    of the n scores lie below the (1-alpha)-quantile: P = P(Bin(n, 1 - alpha) >= k)."""
    for bound in BOUNDS:
        k = rcps_rank(n, alpha, delta, bound)
        violation = float(stats.binom.sf(k - 1, n, 1 - alpha)) if k <= n else 0.0
        assert violation <= delta + 1e-12, (bound, n, k)


@given(n=st.integers(1, 2000), alpha=st.sampled_from([0.05, 0.1, 0.2]),
       delta=st.sampled_from([0.01, 0.1, 0.3]))
@settings(max_examples=60, deadline=None)
def test_binomial_is_tightest_and_hoeffding_loosest(n: int, alpha: float, delta: float) -> None:
    m = {b: max_misses(n, alpha, delta, b) for b in BOUNDS}
    assert m["binomial"] >= m["hoeffding_bentkus"] >= m["hoeffding"] >= -1
    # every admissible count is below alpha * n: RCPS is never looser than the empirical rule
    assert m["binomial"] < alpha * n
    # Hoeffding's closed form
    want = math.floor(n * (alpha - math.sqrt(math.log(1 / delta) / (2 * n))) + 1e-9)
    assert m["hoeffding"] == max(want, -1)


def test_violation_frequency_over_calibration_draws() -> None:
    """Simulation over 4000 calibration draws (uniform scores: R(lam) = 1 - lam)."""
    rng = np.random.default_rng(3)
    n, alpha, delta = 200, 0.1, 0.1
    draws = np.sort(rng.uniform(size=(4000, n)), axis=1)
    for bound in BOUNDS:
        k = rcps_rank(n, alpha, delta, bound)
        lam = draws[:, k - 1]
        freq = float(np.mean(1 - lam > alpha))
        assert freq <= delta + 3 * math.sqrt(delta * (1 - delta) / 4000), bound
    # split conformal controls the mean miss rate, not its tail: it violates about half
    k_split = split_conformal(draws[0], alpha=alpha).k
    assert float(np.mean(1 - draws[:, k_split - 1] > alpha)) > 0.3


def test_tighter_bounds_give_smaller_thresholds() -> None:
    s = np.random.default_rng(0).normal(size=600)
    lam = {b: rcps(s, 0.1, 0.1, b)[0] for b in BOUNDS}
    assert lam["binomial"] <= lam["hoeffding_bentkus"] < lam["hoeffding"]


def test_too_few_rows_give_inf() -> None:
    lam, k, n = rcps(np.arange(10.0), 0.1, 0.1, "binomial")
    assert (lam, k, n) == (math.inf, 11, 10)


@pytest.mark.parametrize("delta", [0, 1, -0.1, 1.5, float("nan"), "0.1", True])
def test_delta_outside_unit_interval_is_an_error(delta: object) -> None:
    with pytest.raises(ValueError, match="delta"):
        Calibrator(rule="rcps", params={"delta": delta})


def test_unknown_bound_and_parameter() -> None:
    with pytest.raises(ValueError, match="bound"):
        Calibrator(rule="rcps", params={"bound": "chernoff"})
    with pytest.raises(ValueError, match="unknown parameter"):
        Calibrator(rule="rcps", params={"gamma": 0.1})


def test_calibrator_round_trip_and_report(tmp_path) -> None:
    table = make_table(300, seed=1)
    cal = Calibrator(score="norm", alpha=0.1, rule="rcps",
                     params={"bound": "hoeffding_bentkus", "delta": 0.05}).fit(table)
    assert "hoeffding_bentkus" in cal.report_["lam_hat from bound"]
    assert cal.k_ == rcps_rank(300, 0.1, 0.05, "hoeffding_bentkus")
    cal.save(tmp_path / "c.json")
    loaded = Calibrator.load(tmp_path / "c.json")
    assert loaded.params_ == {"delta": 0.05, "bound": "hoeffding_bentkus"}
    assert loaded.threshold_ == cal.threshold_
    # delta edited (checksum recomputed): k no longer matches the rule
    from cover.calibrate.calibrator_file import _digest
    from cover.errors import CalibratorFileError

    doc = cal.to_dict()
    doc["params"]["delta"] = 0.2
    body = {k: v for k, v in doc.items() if k != "sha256"}
    with pytest.raises(CalibratorFileError, match=r"field thresholds\.all\.k"):
        Calibrator.from_dict({**body, "sha256": _digest(body)})


def test_binomial_bound_without_scipy_stats_gives_the_same_ranks() -> None:
    """The binomial bound reads scipy.special's bdtr (scipy.stats is a second-long
    import): the admissible miss counts are scipy.stats.binom's, n by n."""
    from scipy.stats import binom

    from cover.calibrate.rcps import max_misses

    for n in (*range(1, 300), 1000, 5000):
        m = np.arange(n + 1)
        for alpha in (0.05, 0.1, 0.2):
            for delta in (0.05, 0.1):
                want = int(np.count_nonzero(binom.cdf(m, n, alpha) <= delta)) - 1
                assert max_misses(n, alpha, delta, "binomial") == want
