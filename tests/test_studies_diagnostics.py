"""Worst-slab coverage and coverage gap (cover.studies.diagnostics), in `cover evaluate
--diagnostics` and the conditional study's rule table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cli_files import synthetic
from cover.cli import main
from cover.studies.diagnostics import _min_window, coverage_gap, diagnostics, worst_slab


def test_min_window_is_the_least_mean_run() -> None:
    c = np.array([[1, 1, 0, 1, 0, 0, 1, 1, 1, 1]], dtype=np.float64)
    means, i, j = _min_window(c, 3)
    assert means[0] == pytest.approx(1 / 4) and (i[0], j[0]) == (2, 6)  # 0, 1, 0, 0
    # brute force over every run of >= 3 on random rows
    rng = np.random.default_rng(0)
    c = (rng.random((5, 40)) < 0.8).astype(np.float64)
    means, _, _ = _min_window(c, 6)
    for r in range(5):
        brute = min(c[r, a:b].mean() for a in range(40) for b in range(a + 6, 41))
        assert means[r] == pytest.approx(brute, abs=1e-9)


def test_worst_slab_finds_an_uncovered_corner() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2000, 2))
    covered = x[:, 0] < np.quantile(x[:, 0], 0.85)  # the top 15% along x0 all missed
    held, inside, rows = worst_slab(covered, x, delta=0.1, n_directions=100)
    assert held < 0.25 and inside < 0.1 and rows > 50
    assert worst_slab(np.ones(2000, bool), x)[0] == 1.0
    assert np.isnan(worst_slab(np.ones(10, bool), x[:10])[0])  # too few rows for delta


def test_coverage_gap_is_the_worst_bin() -> None:
    x = np.arange(100, dtype=np.float64)[:, None]
    covered = np.ones(100, bool)
    covered[:10] = False  # bin [0, 20): coverage 0.5
    gmax, gmean, where = coverage_gap(covered, x, ("duration",), 0.9)
    assert gmax == pytest.approx(0.4) and where == "duration in [-inf, 20)"
    assert gmean == pytest.approx(0.2 * 0.4 + 0.8 * 0.1)
    d = diagnostics(covered, np.column_stack([x[:, 0], np.full(100, np.nan)]),
                    ("duration", "query_words"), 0.9)
    assert d.rows == 0 and np.isnan(d.coverage)  # rows without every covariate left out


def test_evaluate_diagnostics(tmp_path: Path, capsys) -> None:
    preds, gt = synthetic(tmp_path, 120, 0, saliency=False)
    cal, regions, out = tmp_path / "c.json", tmp_path / "r.jsonl", tmp_path / "m.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "-o", str(cal)]) == 0
    assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--videos",
                 str(gt), "-o", str(regions)]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--regions", str(regions), "--gt", str(gt), "--diagnostics",
                 "duration,pred_length", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "conditional diagnostics over duration, pred_length (120 rows with them): " \
           "worst-slab coverage" in text
    d = json.loads(out.read_text())["diagnostics"]
    assert d["covariates"] == ["duration", "pred_length"] and 0 <= d["gap_max"] <= 1
    assert main(["evaluate", "--regions", str(regions), "--gt", str(gt), "--diagnostics",
                 "duration,windows"]) != 0
    assert "--diagnostics: unknown covariate 'windows'" in capsys.readouterr().err


def test_exact_least_means_pick_the_direction_and_run_of_the_bisection() -> None:
    """The worst direction comes from the exact least run means (runs of m..2m-1 entries):
    the same means, bit for bit, as bisecting every direction, and the same run."""
    from cover.studies.diagnostics import _min_means

    for seed in range(40):
        rng = np.random.default_rng(seed)
        d, n = int(rng.integers(1, 20)), int(rng.integers(10, 200))
        c = (rng.random((d, n)) < rng.uniform(0.5, 0.98)).astype(float)
        m = int(np.ceil(rng.uniform(0.05, 0.5) * n))
        means, i, j = _min_window(c, m)
        np.testing.assert_array_equal(_min_means(c, m), means)
        b = int(np.argmin(means))
        one = _min_window(c[b:b + 1], m)
        assert (one[0][0], one[1][0], one[2][0]) == (means[b], i[b], j[b])
