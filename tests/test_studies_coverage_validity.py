"""Study 1 (coverage validity) on synthetic exchangeable data and on real files."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import cover
from cover.data.splits import resample_units
from cover.metrics import cluster_sd
from cover.report.tables import validity_summary, validity_table
from cover.studies import Protocol, coverage_validity


def _exchangeable_table(n: int, seed: int, rows_per_unit: int = 1) -> cover.GroundingTable:
    """Predictions with i.i.d. boundary errors: every family's scores are exchangeable."""
    rng = np.random.default_rng(seed)
    s = rng.uniform(10, 90, n)
    e = s + rng.uniform(5, 40, n)
    ts = np.clip(s + rng.normal(0, 4, n), 0, None)
    te = np.minimum(np.maximum(ts + 1, e + rng.normal(0, 4, n)), 150)
    units = np.arange(n) // rows_per_unit
    return cover.GroundingTable.from_arrays(
        qid=np.arange(n), vid=[f"u{u}" for u in units], duration=150.0, pred_start=s,
        pred_end=e, truth=(ts, te))


def test_cells_shape_and_split_bookkeeping():
    table = _exchangeable_table(400, 0, rows_per_unit=2)
    proto = Protocol(n_resamples=4, alphas=(0.1, 0.3))
    res = coverage_validity(table, families=("norm", "sec"), protocol=proto)
    assert len(res.cells) == 4
    assert res.n_pool + res.n_test == 400
    assert res.n_units_pool + res.n_units_test == 200
    assert res.n_units_pool == 80  # 40% of 200 units
    assert {c.family for c in res.cells} == {"norm", "sec"}
    doc = res.to_dict()
    assert doc["rows"]["total"] == 400 and len(doc["cells"]) == 4


def test_coverage_tracks_target_on_exchangeable_data():
    devs = []
    for seed in range(6):
        res = coverage_validity(_exchangeable_table(1000, seed), families=("norm", "sec"),
                                protocol=Protocol(n_resamples=10, seed=seed))
        devs += [c.coverage_mean - c.expected for c in res.cells]
        # Nearly every cell inside its 95% band (a few may fall out by chance).
        assert sum(c.within_band for c in res.cells) >= len(res.cells) - 2
    # Averaged over splits and cells, realised coverage matches k/(n+1).
    assert abs(np.mean(devs)) < 0.01


def test_no_resampling_uses_the_whole_pool():
    res = coverage_validity(_exchangeable_table(300, 1), families=("norm",),
                            protocol=Protocol(n_resamples=0, alphas=(0.2,)))
    c = res.cells[0]
    assert c.coverage_mean == c.pool_coverage
    assert c.threshold_mean == c.pool_threshold
    assert c.coverage_sd == 0.0
    assert c.n_calibration == res.n_pool


def test_band_flags_a_miscalibrated_cell():
    table = _exchangeable_table(800, 2)
    # Make the test split systematically harder than the pool: shift its truth right.
    split = cover.split_by_unit(table.units, cal_frac=0.4, seed=42)
    ts, te = table.truth_envelope()
    shift = np.where(split.test, 15.0, 0.0)
    moved = replace(table, truth=cover.Intervals.single(np.minimum(ts + shift, 149),
                                                        np.minimum(te + shift, 150)))
    res = coverage_validity(moved, families=("sec",), protocol=Protocol(n_resamples=5))
    assert not all(c.within_band for c in res.cells)
    assert "*" in validity_table(res)
    assert "outside their 95% test band" in validity_summary(res).split(". ")[0]


def test_cluster_sd_reduces_to_binomial_with_one_row_per_unit():
    y = np.random.default_rng(0).integers(0, 2, 500).astype(float)
    units = np.arange(500).astype(str)
    p = y.mean()
    assert cluster_sd(y, units) == pytest.approx(np.sqrt(p * (1 - p) / 500))
    # Perfectly correlated pairs double the variance.
    pairs = np.repeat(np.arange(250), 2).astype(str)
    y2 = np.repeat(y[:250], 2)
    p2 = y2.mean()
    assert cluster_sd(y2, pairs) == pytest.approx(np.sqrt(2 * p2 * (1 - p2) / 500))


def test_real_qdetr_tracks_target(qvh_gt, qdetr_preds):
    table, _ = cover.attach_truth(cover.read_predictions(qdetr_preds).table,
                                  cover.read_ground_truth(qvh_gt).table)
    res = coverage_validity(table, name="QD-DETR", protocol=Protocol(n_resamples=10))
    assert res.n_pool == 623 and res.n_units_pool == 190
    for c in res.cells:
        assert abs(c.coverage_mean - c.target) < 0.06, (c.family, c.alpha, c.coverage_mean)
    # SLS regions are shorter than interval widening at the 0.9 target on this grounder.
    assert res.cell("sls", 0.1).length_mean < res.cell("norm", 0.1).length_mean
    assert res.cell("sls", 0.1).components_mean > 1.0


def _tied_table(n: int, seed: int) -> cover.GroundingTable:
    """Boundaries on a 2 s grid: SEC scores take few distinct values (heavy ties)."""
    rng = np.random.default_rng(seed)
    s = np.round(rng.uniform(10, 90, n) / 2) * 2
    e = s + np.round(rng.uniform(6, 40, n) / 2) * 2
    ts = np.clip(s + np.round(rng.normal(0, 4, n) / 2) * 2, 0, None)
    te = np.minimum(np.maximum(ts + 2, e + np.round(rng.normal(0, 4, n) / 2) * 2), 150)
    return cover.GroundingTable.from_arrays(
        qid=np.arange(n), vid=[f"u{u}" for u in np.arange(n) // 2], duration=150.0,
        pred_start=s, pred_end=e, truth=(ts, te))


def test_ties_are_counted_per_cell_and_marked():
    table = _tied_table(600, 0)
    proto = Protocol(n_resamples=8, alphas=(0.1, 0.3))
    res = coverage_validity(table, families=("sec",), protocol=proto)
    pool = table.take(cover.split_by_unit(table.units, cal_frac=0.4, seed=42).calibration)
    scores = cover.compute_scores(pool, "sec").values
    masks = resample_units(pool.units, n_resamples=8, frac=0.5, seed=42)
    for c in res.cells:
        # The vectorised counts are the plain ones, resample by resample.
        k = [cover.split_conformal(scores[m], alpha=c.alpha, warn=False).value for m in masks]
        at = [int(np.count_nonzero(scores[m] == lam)) for m, lam in zip(masks, k, strict=True)]
        assert c.ties_at_threshold == np.median(at)
        assert c.tied_share == np.mean(np.array(at) > 1)
        assert c.distinct_scores == int(np.median([np.unique(scores[m]).size for m in masks]))
        assert c.pool_distinct_scores == np.unique(scores).size
        assert c.pool_ties_at_threshold == np.count_nonzero(scores == c.pool_threshold)
        assert c.upper_bound_applies == (c.tied_share < 0.5)
    assert not any(c.upper_bound_applies for c in res.cells)  # 2 s grid: always tied
    assert all("†" in line for line in validity_table(res).splitlines()[2:])
    assert ("2 of 2 cells are marked †, calibration scores tied at the threshold"
            in validity_summary(res))
    assert res.to_dict()["cells"][0]["upper_bound_applies"] is False


def test_continuous_scores_are_not_marked():
    res = coverage_validity(_exchangeable_table(400, 3), families=("norm",),
                            protocol=Protocol(n_resamples=4, alphas=(0.1,)))
    c = res.cells[0]
    assert c.upper_bound_applies and c.ties_at_threshold == 1 and c.tied_share == 0
    assert "†" not in validity_table(res) + validity_summary(res)


def test_real_qdetr_sec_scores_are_heavily_tied(qvh_gt, qdetr_preds):
    """QD-DETR on QVHighlights: 74 distinct SEC scores among the pool's 623 rows."""
    table, _ = cover.attach_truth(cover.read_predictions(qdetr_preds).table,
                                  cover.read_ground_truth(qvh_gt).table)
    res = coverage_validity(table, families=("sec",), protocol=Protocol(n_resamples=10))
    c = res.cell("sec", 0.1)
    assert (c.pool_distinct_scores, res.n_pool) == (74, 623)
    assert c.pool_ties_at_threshold == 5 and not c.upper_bound_applies


def test_study_table_marks_tied_cells_with_its_legend():
    from cover.studies.coverage import coverage
    from cover.studies.result import TIES_LEGEND
    from study_pairs import synthetic_pair

    res, validity = coverage(synthetic_pair(n_resamples=4))
    table = res.tables[0]
    assert TIES_LEGEND in table.caption
    sec = table.header.index("SEC cov.")
    tied = [not validity.cell("sec", a).upper_bound_applies for a in validity.protocol.alphas]
    assert any(tied)  # boundaries on a 2 s grid
    assert [("†" in row[sec]) for row in table.rows] == tied
