"""Conformal risk control: expected uncovered share of the truth <= alpha."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.calibrate import Calibrator
from cover.calibrate.crc import coverage_loss, crc_threshold
from test_calibrator_file import make_table


def _linear_loss(u: np.ndarray, w: np.ndarray):
    """Partial-overlap-like loss: 0 once lam >= u, 1 below u - w, linear between."""
    return lambda lam: np.clip((u - lam) / w, 0.0, 1.0)


def test_expected_loss_at_most_alpha_over_calibration_draws() -> None:
    rng = np.random.default_rng(5)
    alpha, n, draws = 0.1, 30, 2000
    test_u, test_w = rng.normal(size=20_000), rng.uniform(0.1, 2, 20_000)
    losses = np.empty(draws)
    for d in range(draws):
        u, w = rng.normal(size=n), rng.uniform(0.1, 2, n)
        lam = crc_threshold(_linear_loss(u, w), n, alpha, start=float(u.max()))
        losses[d] = _linear_loss(test_u, test_w)(lam).mean()
    se = losses.std() / math.sqrt(draws)
    assert losses.mean() <= alpha + 3 * se
    assert losses.mean() > alpha - 0.03  # and not far below: the rule is tight


@given(seed=st.integers(0, 1000), n=st.integers(1, 60),
       alpha=st.sampled_from([0.05, 0.1, 0.3]))
@settings(max_examples=80, deadline=None)
def test_threshold_is_the_infimum(seed: int, n: int, alpha: float) -> None:
    rng = np.random.default_rng(seed)
    u, w = rng.normal(size=n), rng.uniform(0.1, 2, n)
    loss = _linear_loss(u, w)
    lam = crc_threshold(loss, n, alpha, start=0.0)

    def value(x: float) -> float:
        return (float(loss(x).sum()) + 1) / (n + 1)

    if 1 / (n + 1) > alpha:
        assert lam == math.inf
        return
    assert value(lam) <= alpha
    assert value(lam - 1e-6 * max(1.0, abs(lam))) > alpha or value(lam - 1e-6) <= alpha + 1e-9


def test_partial_overlap_loss_of_the_interval_family() -> None:
    table = make_table(50, seed=1)
    loss = coverage_loss(table, "sec", "envelope", 1.0)
    assert np.all(loss(math.inf) == 0)
    assert np.all(loss(-1e6) == 1)
    a, b = loss(-2.0), loss(2.0)
    assert np.all((a >= b) & (a >= 0) & (a <= 1))


@pytest.mark.parametrize("score", ["norm", "sec", "sls"])
def test_crc_calibrator_controls_uncovered_share_on_fresh_rows(score: str, tmp_path) -> None:
    table, test = make_table(600, seed=1), make_table(3000, seed=2)
    cal = Calibrator(score=score, alpha=0.1, rule="crc").fit(table)
    rec = cal.thresholds_["all"].sides["both"]
    assert rec.k is None and math.isfinite(rec.value)
    share = coverage_loss(test, score, "envelope", 1.0)(rec.value).mean()
    assert share <= 0.1 + 0.02
    split = Calibrator(score=score, alpha=0.1).fit(table)
    assert rec.value < split.threshold_  # partial overlap accepted: shorter regions
    cal.save(tmp_path / "c.json")
    assert Calibrator.load(tmp_path / "c.json").thresholds_ == cal.thresholds_
