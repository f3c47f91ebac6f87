"""Grounders that report boundary uncertainty: the naive Gaussian region and the sigma score."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from cover.calibrate import Calibrator
from cover.calibrate.uncertainty import gaussian_regions, nominal_z
from cover.data.table import GroundingTable
from cover.errors import InputError
from cover.grounders.ensemble import gaussian_region
from cover.intervals import Intervals
from cover.scores import compute_scores
from test_calibrator_file import make_table


def with_std(table: GroundingTable, seed: int, scale: float = 1.0) -> GroundingTable:
    """Std columns that understate the real error by ``scale``."""
    rng = np.random.default_rng(seed)
    n = len(table)
    return replace(table, start_std=scale * rng.uniform(1, 6, n),
                   end_std=scale * rng.uniform(1, 6, n))


def test_gaussian_regions_match_the_ensemble_definition() -> None:
    t = with_std(make_table(200, seed=1, refuse_every=9), 1)
    ours = gaussian_regions(t, 0.1)
    theirs = gaussian_region(t, 0.1)
    assert np.allclose(ours.intervals.starts, theirs.starts)
    assert np.allclose(ours.intervals.ends, theirs.ends)
    assert nominal_z(0.05) == pytest.approx(1.959964, abs=1e-6)  # Phi^-1(0.975)


def test_sigma_score_is_the_std_normalised_overshoot() -> None:
    t = with_std(make_table(50, seed=3), 3)
    s = compute_scores(t, "sigma")
    ts, te = t.truth_envelope()
    assert t.start_std is not None and t.end_std is not None
    want = np.maximum((t.pred_start - ts) / np.maximum(t.start_std, 1.0),
                      (te - t.pred_end) / np.maximum(t.end_std, 1.0))
    assert np.allclose(s.values, want)


def test_sigma_calibration_restores_coverage_where_the_claim_fails() -> None:
    cal_t = with_std(make_table(800, seed=1), 1, scale=0.2)  # std far too small
    test = with_std(make_table(2000, seed=2), 2, scale=0.2)
    truth = Intervals.single(*test.truth_envelope())
    naive = gaussian_regions(test, 0.1).intervals.contains(truth).mean()
    cal = Calibrator(score="sigma", alpha=0.1).fit(cal_t)
    cov = cal.certify(test).intervals.contains(truth).mean()
    assert naive < 0.8 and cov >= 0.88
    claim = Calibrator(score="sigma", alpha=0.1, rule="gaussian").fit(cal_t)
    assert claim.threshold_ == pytest.approx(nominal_z(0.1))
    assert float(claim.report_["calibration rows inside the claimed region"]) < 0.8


def test_sigma_without_std_columns_is_a_clear_error() -> None:
    t = make_table(20, seed=1)
    with pytest.raises(InputError, match="start_std and end_std"):
        Calibrator(score="sigma").fit(t)
    with pytest.raises(InputError, match="start_std"):
        gaussian_regions(t, 0.1)
    fitted = Calibrator(score="sigma").fit(with_std(make_table(40, seed=2), 2))
    with pytest.raises(InputError, match="start_std"):
        fitted.certify(t)


def test_missing_std_on_a_row_is_a_refusal() -> None:
    t = with_std(make_table(40, seed=2), 2)
    assert t.start_std is not None
    ss = t.start_std.copy()
    ss[3] = np.nan
    s = compute_scores(replace(t, start_std=ss), "sigma")
    assert s.refused[3] and s.values[3] == -np.inf and s.refused.sum() == 1
