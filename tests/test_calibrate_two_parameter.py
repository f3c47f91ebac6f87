"""Per-boundary rules (bonferroni, asymmetric): joint coverage >= 1 - alpha, exact ranks,
per-side regions nested in their two parameters."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.calibrate import Calibrator
from cover.calibrate.asymmetric import asymmetric_rule, fold_weights
from cover.calibrate.bonferroni import bonferroni
from cover.calibrate.registry import RuleInput
from cover.data.table import GroundingTable
from cover.intervals import CONTAINMENT_ATOL, Intervals
from cover.regions import build_regions
from cover.scores import compute_scores
from test_calibrator_file import make_table


def _draw(rng: np.random.Generator, size: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Exchangeable per-side scores: the start side errs three times more, correlated."""
    z = rng.normal(size=(2, *size))
    return 3 * z[0] + 0.5, 0.8 * z[0] + 0.6 * z[1]


def test_bonferroni_joint_coverage_over_calibration_draws() -> None:
    rng = np.random.default_rng(11)
    alpha, n, draws, m = Fraction(1, 10), 60, 1500, 200
    cs, ce = _draw(rng, (draws, n))
    ts, te = _draw(rng, (draws, m))
    cov = np.empty(draws)
    for d in range(draws):
        th = bonferroni(cs[d], ce[d], alpha)
        qs, qe = th.sides["start"].value, th.sides["end"].value
        cov[d] = np.mean((ts[d] <= qs) & (te[d] <= qe))
    se = cov.std() / math.sqrt(draws)
    assert cov.mean() >= 1 - float(alpha) - 3 * se
    # each side alone is only at alpha/2, so the pair is not far above 1 - alpha
    assert cov.mean() < 1 - float(alpha) / 2 + 3 * se


def test_asymmetric_joint_coverage_over_calibration_draws() -> None:
    rng = np.random.default_rng(12)
    alpha, n, draws, m = Fraction(1, 10), 80, 1500, 200
    cs, ce = _draw(rng, (draws, n))
    ts, te = _draw(rng, (draws, m))
    groups = np.full(n, "all")
    params = {"fold": 0.25, "seed": 0, "weights": None}
    cov = np.empty(draws)
    for d in range(draws):
        fit = asymmetric_rule(RuleInput(np.maximum(cs[d], ce[d]), groups, cs[d], ce[d]),
                              alpha, {**params, "seed": d})
        w = fit.learned["weights"]
        q = fit.thresholds["all"].sides["both"].value
        cov[d] = np.mean((ts[d] <= q * w["start"]) & (te[d] <= q * w["end"]))
    se = cov.std() / math.sqrt(draws)
    assert cov.mean() >= 1 - float(alpha) - 3 * se
    # the fold learns that the start side errs more
    assert fit.learned["weights"]["start"] > 1.5 * fit.learned["weights"]["end"]


@pytest.mark.filterwarnings("ignore::cover.errors.CoverWarning")
@given(n=st.integers(1, 3000), p=st.integers(1, 99), q=st.sampled_from([100, 7, 300]))
@settings(max_examples=100, deadline=None)
def test_bonferroni_rank_is_exact(n: int, p: int, q: int) -> None:
    alpha = Fraction(p, q)
    if not 0 < alpha < 1:
        return
    th = bonferroni(np.arange(float(n)), np.arange(float(n)), alpha)
    k = math.ceil((n + 1) * (1 - alpha / 2))  # Fraction arithmetic: exact
    assert th.sides["start"].k == th.sides["end"].k == k


@given(seed=st.integers(0, 10_000), lam_s=st.floats(-0.4, 3), lam_e=st.floats(-0.4, 3),
       family=st.sampled_from(["norm", "sec", "sigma"]))
@settings(max_examples=150, deadline=None)
def test_per_side_regions_are_nested(seed: int, lam_s: float, lam_e: float,
                                     family: str) -> None:
    """truth inside [s - lam_s l_s, e + lam_e l_e] iff S_s <= lam_s and S_e <= lam_e."""
    table = with_std(make_table(30, seed=seed % 50), seed)
    sc = compute_scores(table, family)
    reg = build_regions(table, family, lam_s, lam_end=lam_e)
    assert sc.start is not None and sc.end is not None
    inside = reg.intervals.contains(Intervals.single(*table.truth_envelope()))
    # Containment allows CONTAINMENT_ATOL seconds; in score units that is atol / scale,
    # and the smallest scale here is 0.5 s (sigma). E.g. S_e = 0, lam_e = -1.2e-7 (SEC):
    # the region ends 0.12 microseconds short of the truth, which counts as inside.
    tol = CONTAINMENT_ATOL / 0.5 + 1e-9
    sure_in = (sc.start <= lam_s - tol) & (sc.end <= lam_e - tol)
    sure_out = (sc.start > lam_s + tol) | (sc.end > lam_e + tol)
    assert inside[sure_in].all() and not inside[sure_out & ~sc.refused].any()


def with_std(table: GroundingTable, seed: int) -> GroundingTable:
    rng = np.random.default_rng(seed)
    n = len(table)
    return replace(table, start_std=rng.uniform(0.5, 6, n), end_std=rng.uniform(0.5, 6, n))


@pytest.mark.parametrize("rule", ["bonferroni", "asymmetric"])
def test_calibrator_round_trip_and_ratio(rule: str, tmp_path) -> None:
    table, test = make_table(400, seed=1), make_table(200, seed=2)
    cal = Calibrator(score="norm", alpha=0.1, rule=rule).fit(table)
    assert cal.side_ratio_ is not None and cal.side_ratio_ > 0
    assert cal.threshold_ is None if rule == "bonferroni" else cal.threshold_ is not None
    cal.save(tmp_path / "c.json")
    loaded = Calibrator.load(tmp_path / "c.json")
    a, b = cal.certify(test), loaded.certify(test)
    assert np.array_equal(a.intervals.starts, b.intervals.starts)
    assert np.array_equal(a.intervals.ends, b.intervals.ends)
    assert a.threshold_end is not None
    assert loaded.side_ratio_ == pytest.approx(cal.side_ratio_)


def test_asymmetric_with_given_weights_uses_every_row() -> None:
    table = make_table(300, seed=1)
    cal = Calibrator(score="sec", rule="asymmetric",
                     params={"weights": {"start": 2.0, "end": 1.0}}).fit(table)
    assert cal.n_ == 300 and cal.params_["fold_rows"] == 0 and cal.side_ratio_ == 2.0


def test_asymmetric_fold_rows_are_held_out_and_recorded() -> None:
    cal = Calibrator(score="norm", rule="asymmetric").fit(make_table(200, seed=1))
    assert cal.params_["fold_rows"] == 50 and cal.n_ == 150
    assert cal.fitted_on_ is not None and cal.fitted_on_["count"] == 200


def test_fold_weights_floor_and_default() -> None:
    ws, we = fold_weights(np.full(20, -1.0), np.full(20, -2.0), Fraction(1, 10))
    assert (ws, we) == (1.0, 1.0)
    ws, we = fold_weights(np.full(20, 10.0), np.full(20, -2.0), Fraction(1, 10))
    assert we / ws == pytest.approx(0.1) and ws + we == pytest.approx(2.0)


@pytest.mark.parametrize("params", [{"weights": {"start": 0, "end": 1}},
                                    {"weights": {"start": 1}}, {"fold": 1.0}, {"seed": -1},
                                    {"what": 1}])
def test_bad_asymmetric_params(params: dict) -> None:
    with pytest.raises(ValueError):
        Calibrator(rule="asymmetric", params=params)


def test_per_boundary_rules_need_an_interval_score() -> None:
    with pytest.raises(ValueError, match="interval score"):
        Calibrator(score="sls", rule="bonferroni")


@pytest.mark.parametrize(("rule", "need"), [("bonferroni", "need at least 19"),
                                            ("rcps", "too few for the binomial bound"),
                                            ("crc", "need at least 9")])
def test_too_few_rows_warn_and_give_the_whole_video(rule: str, need: str) -> None:
    from cover.errors import CoverWarning

    table = make_table(8, seed=3)
    with pytest.warns(CoverWarning, match=need):
        cal = Calibrator(score="sec", alpha=0.1, rule=rule).fit(table)
    reg = cal.certify(table)
    assert np.allclose(reg.length, table.duration)
