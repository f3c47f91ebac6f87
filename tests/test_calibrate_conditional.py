"""Rule ``conditional`` (Gibbs, Cherian & Candès): the cutoff LP, coverage inside and
outside the function class, the calibrator file and the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import norm

from cli_files import synthetic
from cover.calibrate import Calibrator
from cover.calibrate.calibrator_file import _digest
from cover.calibrate.conditional_lp import (
    cutoff,
    cutoff_by_search,
    cutoffs,
    design_matrix,
    standardiser,
)
from cover.cli import main
from cover.data.table import GroundingTable
from cover.errors import CalibratorFileError

ALPHA = 0.1


def test_intercept_only_is_split_conformal() -> None:
    s = np.random.default_rng(0).normal(size=99)
    k = math.ceil(100 * (1 - ALPHA))
    assert cutoff(np.ones((99, 1)), s, np.ones(1), 1 - ALPHA) == pytest.approx(np.sort(s)[k - 1])


def test_too_few_rows_give_an_infinite_cutoff() -> None:
    s = np.arange(5.0)  # (n + 1) alpha < 1: split conformal's k > n
    assert cutoff(np.ones((5, 1)), s, np.ones(1), 1 - ALPHA) == math.inf


def test_cutoff_is_the_definition_by_search() -> None:
    """The closed form (test score imputed at +inf) agrees with bisection over the
    imputed score of the augmented fit (the paper's definition), with +inf scores in."""
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 3, size=(60, 2))
    s = rng.normal(size=60) * (1 + x[:, 0])
    s[3] = np.inf
    center, scale = standardiser(x)
    phi = design_matrix(x, center, scale)
    for xt in ([0.5, 1.0], [2.9, 0.1]):
        p = design_matrix(np.array(xt), center, scale)[0]
        assert cutoff(phi, s, p, 0.9) == pytest.approx(cutoff_by_search(phi, s, p, 0.9),
                                                       abs=1e-6)


def _coverage(sigma_cal, sigma_test, x_cal, x_test, draws, n, seed):
    """Mean over calibration draws of the exact test coverage P(|Z| sigma(x) <= lam(x))
    at each test covariate value (scores ``S = sigma(x)|Z|``)."""
    rng = np.random.default_rng(seed)
    cov = np.zeros(len(x_test))
    for _ in range(draws):
        xc = rng.choice(x_cal, size=n)
        s = sigma_cal(xc) * np.abs(rng.normal(size=n))
        center, scale = standardiser(xc[:, None])
        lam = cutoffs(design_matrix(xc[:, None], center, scale), s,
                      design_matrix(np.asarray(x_test)[:, None], center, scale), ALPHA)
        cov += 2 * norm.cdf(lam / sigma_test(np.asarray(x_test))) - 1
    return cov / draws


def test_group_conditional_coverage_inside_the_class() -> None:
    """Groups 0/1 (an indicator in the class): coverage >= 1 - alpha in each group,
    although group 1's scores are four times larger; one pooled threshold misses it."""
    def sigma(g):
        return np.where(g == 1, 4.0, 1.0)

    cov = _coverage(sigma, sigma, np.array([0.0, 0.0, 1.0]), [0.0, 1.0], 60, 90, 2)
    assert (cov >= 1 - ALPHA - 0.02).all() and (cov <= 1 - ALPHA + 0.05).all()
    rng = np.random.default_rng(3)
    pooled = []
    for _ in range(60):
        g = rng.choice([0.0, 0.0, 1.0], size=90)
        s = sigma(g) * np.abs(rng.normal(size=90))
        pooled.append(2 * norm.cdf(np.sort(s)[math.ceil(91 * 0.9) - 1] / 4.0) - 1)
    assert np.mean(pooled) < 1 - ALPHA - 0.05  # the marginal rule undercovers group 1


def test_linear_shifts_inside_the_class_and_a_bump_outside_it() -> None:
    """x on a grid of [0, 1], class linear in x. Shifts f(x) = x and 1 - x are in the
    class: their weighted coverage holds; marginal coverage holds. The score scale has a
    bump at x = 0.5 no linear function follows: coverage there fails, as theory allows."""
    grid = np.linspace(0, 1, 5)

    def sigma(x):
        return 1.0 + x + 3.0 * (np.abs(x - 0.5) < 0.1)

    cov = _coverage(sigma, sigma, grid, grid, 50, 100, 4)
    assert cov.mean() >= 1 - ALPHA - 0.015  # marginal (x uniform on the grid)
    for f in (grid, 1 - grid):
        assert (f * cov).sum() / f.sum() >= 1 - ALPHA - 0.02
    assert cov[2] < 1 - ALPHA - 0.1  # the bump: outside the class


def _table(n: int, seed: int) -> GroundingTable:
    rng = np.random.default_rng(seed)
    t = rng.uniform(30, 150, n)
    ps, length = rng.uniform(0, t / 2), rng.uniform(2, t / 3)
    noise = 1 + length / 10
    ts = np.clip(ps + rng.normal(0, 1, n) * noise, 0, t)
    te = np.clip(np.maximum(ps + length + rng.normal(0, 1, n) * noise, ts + 0.5), 0, t)
    return GroundingTable.from_arrays(qid=np.arange(n), duration=t, pred_start=ps,
                                      pred_end=ps + length, truth=(ts, te))


def test_calibrator_saves_the_design_and_certifies_per_row(tmp_path: Path) -> None:
    table = _table(160, 5)
    cal = Calibrator(score="sec", alpha=ALPHA, rule="conditional",
                     params={"covariates": ["pred_length", "duration"]}).fit(table.take(
                         np.arange(80)))
    new = table.take(np.arange(80, 160))
    lam = cal.certify(new).threshold
    assert np.unique(lam).size > 10  # a threshold per row, not per group
    path = tmp_path / "cal.json"
    cal.save(path)
    loaded = Calibrator.load(path)
    assert np.array_equal(loaded.certify(new).threshold, lam)
    doc = json.loads(path.read_text())
    assert len(doc["params"]["design"]["x"]) == 80
    doc["params"]["design"]["scores"][0] = 1e6  # a changed design, resealed
    body = {k: v for k, v in doc.items() if k != "sha256"}
    doc["sha256"] = _digest(body)
    with pytest.raises(CalibratorFileError, match=r"field params: thresholds.all.value .* is "
                       "not the cutoff"):
        Calibrator.from_dict(doc, source="cal.json")


def test_a_row_without_a_covariate_is_named() -> None:
    table = _table(60, 6)
    cal = Calibrator(score="sec", alpha=0.2, rule="conditional",
                     params={"covariates": ["query_words"]})
    with pytest.raises(ValueError, match="covariate query_words is not known"):
        cal.fit(table)


def test_cli_calibrate_and_certify_carry_per_row_thresholds(tmp_path: Path, capsys) -> None:
    preds, gt = synthetic(tmp_path, 120, 0, saliency=False)
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--rule", "conditional",
                 "--covariates", "duration,pred_length", "--alpha", "0.2", "-o",
                 str(cal)]) == 0
    assert "covariates: duration, pred_length" in capsys.readouterr().out
    regions = tmp_path / "r.jsonl"
    assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--videos",
                 str(gt), "-o", str(regions)]) == 0
    blocks = [json.loads(line)["cover"] for line in regions.read_text().splitlines()]
    assert {b["rule"] for b in blocks} == {"conditional"}
    assert len({b["threshold"] for b in blocks}) > 10


@pytest.mark.parametrize(("args", "message"), [
    (["--rule", "split", "--covariates", "duration"], "--covariates does not apply to "
     "--rule split"),
    (["--rule", "conditional", "--covariates", "duration,truth_windows"],
     "--covariates: unknown covariate 'truth_windows'"),
])
def test_cli_covariate_errors(args: list[str], message: str, tmp_path: Path, capsys) -> None:
    preds, gt = synthetic(tmp_path, 30, 0, saliency=False)
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), *args, "-o",
                 str(tmp_path / "c.json")]) != 0
    assert message in capsys.readouterr().err
    assert not (tmp_path / "c.json").exists()


def test_cutoffs_reusing_a_basis_equal_one_lp_per_row() -> None:
    """cutoffs() solves one LP per optimal basis and reads the others off it: the
    cutoffs of one LP per row, to the last few bits."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(300, 2))
    s = x @ np.array([0.5, -0.3]) + rng.normal(size=300)
    center, scale = standardiser(x)
    phi = design_matrix(x, center, scale)
    test = design_matrix(rng.normal(size=(80, 2)), center, scale)
    got = cutoffs(phi, s, test, ALPHA)
    want = np.array([cutoff(phi, s, p, 1 - ALPHA) for p in test])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
