"""Coverage of split conformal on exchangeable synthetic data (SPEC §4-5).

With i.i.d. continuous scores the realised coverage given the calibration set is
``F(q) ~ Beta(k, n + 1 - k)``, whose mean ``k / (n + 1)`` lies in
``[1 - alpha, 1 - alpha + 1 / (n + 1)]``. Every check below allows 4 Monte-Carlo
standard errors and uses a fixed seed.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from cover.calibrate import Calibrator
from cover.calibrate.split import beta_band, beta_sd, split_conformal
from cover.data.table import GroundingTable
from cover.errors import CoverWarning
from cover.metrics import evaluate
from cover.scores import compute_scores

SEED = 20240611
R = 2000  # calibration draws per configuration
M = 100  # test points per calibration draw
CONFIGS = [(19, 0.1), (19, 0.05), (29, 0.1), (29, 0.2), (50, 0.1), (50, 0.3), (200, 0.1),
           (200, 0.05)]


def exact_k(n: int, alpha: float) -> int:
    """Independent of the library: ceil((n + 1)(1 - alpha)) in integer arithmetic,
    with alpha given to 2 decimals."""
    num = round(alpha * 100)
    return -((-(n + 1) * (100 - num)) // 100)


def thresholds(cal: np.ndarray, alpha: float) -> np.ndarray:
    return np.array([split_conformal(row, alpha=alpha).value for row in cal])


@pytest.mark.parametrize(("n", "alpha"), CONFIGS)
def test_average_coverage_within_conformal_bounds(n, alpha):
    rng = np.random.default_rng([SEED, n, round(100 * alpha)])
    cal = rng.standard_normal((R, n))
    test = rng.standard_normal((R, M))
    q = thresholds(cal, alpha)
    covered = (test <= q[:, None]).mean(axis=1)  # realised coverage of each draw
    mean = covered.mean()
    se = covered.std(ddof=1) / math.sqrt(R)
    k = exact_k(n, alpha)
    assert 1 - alpha <= k / (n + 1) <= 1 - alpha + 1 / (n + 1)
    assert 1 - alpha - 4 * se <= mean <= 1 - alpha + 1 / (n + 1) + 4 * se, (mean, se)
    # Sharper: the mean is k / (n + 1) (an off-by-one rank moves it by 1/(n+1) >> 4 SE).
    assert abs(mean - k / (n + 1)) <= 4 * se, (mean, k / (n + 1), se)
    assert 4 * se < 1 / (n + 1)  # the check above can tell neighbouring ranks apart


@pytest.mark.parametrize(("n", "alpha"), [(19, 0.1), (29, 0.2), (50, 0.1), (200, 0.05)])
def test_conditional_coverage_is_beta(n, alpha):
    """F(q) for Exp(1) scores against Beta(k, n + 1 - k): KS, mean, sd, 95% band."""
    rng = np.random.default_rng([SEED, 7, n])
    cal = rng.exponential(size=(R, n))
    q = thresholds(cal, alpha)
    cond = 1.0 - np.exp(-q)  # the exact coverage of each calibration draw
    k = exact_k(n, alpha)
    law = stats.beta(k, n + 1 - k)
    assert stats.kstest(cond, law.cdf).pvalue > 1e-3
    # The neighbouring ranks are rejected: the KS check has power against off-by-one.
    assert stats.kstest(cond, stats.beta(k + 1, n - k).cdf).pvalue < 1e-3
    assert stats.kstest(cond, stats.beta(k - 1, n + 2 - k).cdf).pvalue < 1e-3
    sd = beta_sd(n, k)
    assert sd == pytest.approx(law.std(), rel=1e-12)
    assert abs(cond.mean() - k / (n + 1)) <= 4 * sd / math.sqrt(R)
    assert cond.std(ddof=1) == pytest.approx(sd, rel=0.1)
    lo, hi = beta_band(n, k, 0.95)
    inside = ((cond >= lo) & (cond <= hi)).mean()
    assert abs(inside - 0.95) <= 4 * math.sqrt(0.95 * 0.05 / R)


def test_too_small_calibration_set_always_covers():
    rng = np.random.default_rng(3)
    cal = rng.standard_normal((50, 8))  # alpha = 0.1 needs 9 rows
    with pytest.warns(CoverWarning):
        th = split_conformal(cal[0], alpha=0.1)
    assert th.value == math.inf and th.k == 9 and th.n == 8
    assert th.beta_band() == (1.0, 1.0) and beta_sd(8, 9) == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverWarning)
        q = thresholds(cal, 0.1)
    assert np.all(q == math.inf)


def test_ties_keep_the_lower_bound():
    """Discrete scores (many ties): coverage is still >= 1 - alpha (no upper bound)."""
    rng = np.random.default_rng(11)
    n, alpha = 29, 0.2
    cal = rng.integers(0, 4, size=(R, n)).astype(float)
    test = rng.integers(0, 4, size=(R, M)).astype(float)
    covered = (test <= thresholds(cal, alpha)[:, None]).mean(axis=1)
    se = covered.std(ddof=1) / math.sqrt(R)
    assert covered.mean() >= 1 - alpha - 4 * se


# ---- end to end: Calibrator.fit / certify and metrics.evaluate -----------------------------
def synthetic_rows(rng: np.random.Generator, n: int, refusal_rate: float = 0.0) -> dict:
    """Exchangeable (i.i.d.) rows of a noisy grounder; truth and predictions in [0, T]."""
    t = rng.uniform(30.0, 300.0, n)
    length = rng.uniform(2.0, 0.3 * t)
    center = rng.uniform(0.2 * t, 0.8 * t)
    ts = np.clip(center - length / 2, 0.0, t)
    te = np.clip(center + length / 2, 0.0, t)
    noise = 2.0 + 0.2 * length
    ps = ts + noise * rng.standard_normal(n)
    pe = te + noise * rng.standard_normal(n)
    ps, pe = np.clip(np.minimum(ps, pe), 0.0, t), np.clip(np.maximum(ps, pe), 0.0, t)
    refused = rng.uniform(size=n) < refusal_rate
    ps[refused] = np.nan
    pe[refused] = np.nan
    clip = 2.0
    n_clips = np.ceil(t / clip).astype(int)
    relevance = []
    for i in range(n):
        mid = (np.arange(n_clips[i]) + 0.5) * clip
        f = -np.abs(mid - center[i]) / length[i] + 0.3 * rng.standard_normal(n_clips[i])
        relevance.append(f.tolist())
    return dict(duration=t, pred_start=ps, pred_end=pe, relevance=relevance,
                truth=(ts, te), clip=clip)


def table_of(rows: dict, sl: slice) -> GroundingTable:
    n = len(rows["duration"][sl])
    return GroundingTable.from_arrays(
        qid=np.arange(n), duration=rows["duration"][sl], pred_start=rows["pred_start"][sl],
        pred_end=rows["pred_end"][sl], relevance=rows["relevance"][sl],
        truth=(rows["truth"][0][sl], rows["truth"][1][sl]), clip=rows["clip"])


@pytest.mark.parametrize(("family", "n", "alpha", "refusal_rate"),
                         [("norm", 49, 0.1, 0.0), ("sec", 29, 0.2, 0.0), ("sls", 39, 0.1, 0.0),
                          ("norm", 39, 0.1, 0.15), ("sec", 19, 0.1, 0.15)])
def test_calibrator_end_to_end_coverage(family, n, alpha, refusal_rate):
    reps, m = 150, 100
    rng = np.random.default_rng([SEED, ["norm", "sec", "sls"].index(family), n])
    k = exact_k(n, alpha)
    coverage = np.empty(reps)
    for r in range(reps):
        rows = synthetic_rows(rng, n + m, refusal_rate)
        cal_t, test_t = table_of(rows, slice(0, n)), table_of(rows, slice(n, n + m))
        cal = Calibrator(score=family, alpha=alpha).fit(cal_t)
        assert (cal.k_, cal.n_) == (k, n)
        cal_scores = compute_scores(cal_t, family).values
        assert cal.threshold_ == np.sort(cal_scores)[k - 1]
        regions = cal.certify(test_t)
        ev = evaluate(regions, test_t, calibration=(n, k))
        # Coverage reported by evaluate is exactly "test score <= threshold" (nestedness).
        test_scores = compute_scores(test_t, family).values
        assert np.array_equal(ev.covered, test_scores <= cal.threshold_)
        assert ev.counts["covered"] == int(ev.covered.sum())
        assert ev.refusal_rate == pytest.approx(np.mean(regions.refused))
        assert ev.reference is not None and ev.reference["expected"] == k / (n + 1)
        coverage[r] = ev.marginal.coverage
    mean = coverage.mean()
    se = coverage.std(ddof=1) / math.sqrt(reps)
    assert mean >= 1 - alpha - 4 * se, (mean, se)
    if refusal_rate == 0.0:
        # Continuous scores, no ties: the mean is k/(n+1) <= 1 - alpha + 1/(n+1).
        assert mean <= 1 - alpha + 1 / (n + 1) + 4 * se, (mean, se)
        assert abs(mean - k / (n + 1)) <= 4 * se, (mean, k / (n + 1), se)


@pytest.mark.parametrize("n", [19, 99, 623, 1000, 10**6])
@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.5])
def test_beta_band_is_the_beta_law_quantiles(n, alpha):
    """scipy.special's inverse incomplete beta gives exactly scipy.stats.beta.ppf."""
    k = math.ceil((n + 1) * (1 - alpha))
    for level in (0.9, 0.95):
        want = stats.beta.ppf([(1 - level) / 2, (1 + level) / 2], k, n + 1 - k)
        assert beta_band(n, k, level) == (float(want[0]), float(want[1]))
