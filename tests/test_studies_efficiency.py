"""Efficiency study: the test-row interval (clustered by source video) and the resample
spread are both reported, each under its own label, and the test-row one reproduces the
paper's half-widths on QD-DETR / QVHighlights."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cover.bands import clustered_half_width, cr1_factor, t_quantile
from cover.metrics import cluster_sd
from cover.studies.common import ci95
from cover.studies.efficiency import SPREAD, TEST_CI, efficiency
from study_pairs import real_pair, synthetic_pair


def test_clustered_half_width_is_t_times_cr1_cluster_sd() -> None:
    rng = np.random.default_rng(3)
    units = np.repeat(np.arange(12), 5).astype(str)
    y = rng.normal(size=(3, units.size)) + np.repeat(rng.normal(size=12), 5)
    got = clustered_half_width(y, units)
    want = [t_quantile(0.95, 11) * cr1_factor(12) * cluster_sd(row, units) for row in y]
    assert np.allclose(got, want, rtol=1e-12)
    # Clustered rows move together: wider than the iid interval.
    assert got[0] > 1.96 * y[0].std(ddof=1) / np.sqrt(y.shape[1])


def test_both_intervals_reported_and_labelled() -> None:
    pair = synthetic_pair()
    res = efficiency(pair)
    table = res.tables[0]
    assert table.header.count(TEST_CI) == table.header.count(SPREAD) == 6
    assert TEST_CI == "test-row 95% CI (clustered by source video)"
    assert SPREAD == "resample spread (calibration resamples, 2.5–97.5 percentiles)"
    assert "95% CI" not in table.header  # the old label, which named neither quantity
    assert res.data["intervals"] == {"length_test_ci": TEST_CI, "length_spread": SPREAD}
    th = pair.thresholds("norm", (0.2,))
    m = pair.sweep("test", "norm").at(th.values[0])
    c = next(c for c in res.data["cells"] if c["family"] == "norm" and c["target"] == 0.8)
    half = np.mean([t_quantile(0.95, np.unique(pair.test.units).size - 1)
                    * cr1_factor(np.unique(pair.test.units).size)
                    * cluster_sd(row, pair.test.units) for row in m.length])
    assert abs(c["length_test_ci_half"] - half) < 1e-9
    assert abs(c["length_test_ci_hi"] - c["length_mean"] - half) < 1e-9
    assert (c["length_spread_lo"], c["length_spread_hi"]) == ci95(m.mean("length"))


def test_test_row_interval_reproduces_the_paper(data_dir: Path) -> None:
    """QD-DETR on QVHighlights at 0.80: half-widths 2.48 / 1.59 / 3.52 s (the paper's
    Table 2: 2.6 / 1.8 / 3.8); the resample spread is several times wider."""
    res = efficiency(real_pair(data_dir))
    cells = {c["family"]: c for c in res.data["cells"] if c["target"] == 0.8}
    got = [cells[f]["length_test_ci_half"] for f in ("norm", "sec", "sls")]
    assert np.allclose(got, [2.48, 1.587, 3.52], atol=0.006)
    assert np.allclose(got, [2.6, 1.8, 3.8], atol=0.3)
    for c in cells.values():
        spread = (c["length_spread_hi"] - c["length_spread_lo"]) / 2
        assert spread > 2 * c["length_test_ci_half"]
