"""Metrics of certified regions against per-row oracles (SPEC §5)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import cover
from cover.intervals import Intervals
from cover.metrics import coverage_reference, evaluate, point_iou
from cover.regions import Regions


def _table(rows: list[tuple[float, float, list[tuple[float, float]]]], t: float = 100.0):
    ps = np.array([r[0] for r in rows], dtype=float)
    pe = np.array([r[1] for r in rows], dtype=float)
    truth = Intervals.from_lists([r[2] for r in rows])
    return cover.GroundingTable.from_arrays(qid=np.arange(len(rows)), duration=t,
                                            pred_start=ps, pred_end=pe, truth=truth)


def _regions(comps: list[list[tuple[float, float]]], refused: list[bool], t: float = 100.0):
    iv = Intervals.from_lists(comps)
    n = len(comps)
    return Regions(iv, np.full(n, t), np.array(refused), np.zeros(n), "sec", 0.1)


def test_metrics_by_hand():
    table = _table([
        (10, 20, [(12, 18)]),            # covered, region [5, 25]
        (40, 50, [(30, 45)]),            # missed, region [35, 55]
        (np.nan, np.nan, [(60, 70)]),    # refused -> whole video
        (80, 90, [(81, 83), (88, 95)]),  # two windows; region [78, 96] covers the envelope
    ])
    regions = _regions([[(5, 25)], [(35, 55)], [(0, 100)], [(78, 96)]],
                       [False, False, True, False])
    ev = evaluate(regions, table)
    assert ev.covered.tolist() == [True, False, True, True]
    assert ev.marginal.coverage == 0.75 and ev.marginal.miss_rate == 0.25
    assert ev.marginal.mean_length_s == pytest.approx((20 + 20 + 100 + 18) / 4)
    assert ev.marginal.mean_length_frac == pytest.approx((20 + 20 + 100 + 18) / 400)
    iou = [6 / 20, 10 / 25, 10 / 100, 14 / 18]
    assert ev.marginal.mean_iou == pytest.approx(np.mean(iou))
    assert ev.non_refused.n == 3
    assert ev.non_refused.coverage == pytest.approx(2 / 3)
    assert ev.refusal_rate == 0.25
    assert ev.counts == {"rows": 4, "refused": 1, "covered": 3, "missed": 1}
    # Point-IoU: top-1 vs truth, max over windows; refusals score 0.
    assert point_iou(table).tolist() == pytest.approx([6 / 10, 5 / 20, 0.0, 2 / 10])
    # Every-window target: the second window of row 3 lies inside [78, 96] as well.
    ev_w = evaluate(regions, table, target="windows")
    assert ev_w.covered.tolist() == [True, False, True, True]
    assert ev_w.marginal.mean_iou == pytest.approx(np.mean([6 / 20, 10 / 25, 10 / 100,
                                                            9 / 18]))


def test_refusal_policies_change_only_the_evaluation():
    table = _table([(10, 20, [(12, 18)]), (np.nan, np.nan, [(60, 70)])])
    regions = _regions([[(0, 30)], [(0, 100)]], [False, True])
    whole = evaluate(regions, table)
    miss = evaluate(regions, table, refusal_policy="miss")
    drop = evaluate(regions, table, refusal_policy="drop")
    assert whole.marginal.coverage == 1.0
    assert miss.marginal.coverage == 0.5
    assert drop.marginal.n == 1 and drop.marginal.coverage == 1.0
    assert whole.non_refused == miss.non_refused == drop.non_refused
    with pytest.raises(ValueError, match="refusal_policy"):
        evaluate(regions, table, refusal_policy="ignore")


def test_all_refused_gives_nan_conditional_metrics():
    table = _table([(np.nan, np.nan, [(1, 2)])])
    ev = evaluate(_regions([[(0, 100)]], [True]), table)
    assert ev.non_refused.n == 0 and np.isnan(ev.non_refused.coverage)
    assert ev.marginal.coverage == 1.0


def test_row_count_mismatch_is_an_error():
    table = _table([(10, 20, [(12, 18)])])
    with pytest.raises(ValueError, match="2 regions for 1 rows"):
        evaluate(_regions([[(0, 1)], [(0, 1)]], [False, False]), table)


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(n=st.integers(1, 3000), alpha=st.sampled_from([0.05, 0.1, 0.2, 0.3, 0.5]))
def test_reference_band_is_the_beta_law(n, alpha):
    k = cover.conformal_rank(n, alpha)
    ref = coverage_reference(n, k)
    if k > n:
        assert ref["band_lo"] == ref["band_hi"] == 1.0
        return
    assert ref["expected"] == pytest.approx(stats.beta.mean(k, n + 1 - k))
    assert ref["expected"] >= 1 - alpha
    assert ref["expected"] <= 1 - alpha + 1 / (n + 1) + 1e-12
    assert stats.beta.cdf(ref["band_lo"], k, n + 1 - k) == pytest.approx(0.025, abs=1e-9)
    assert stats.beta.cdf(ref["band_hi"], k, n + 1 - k) == pytest.approx(0.975, abs=1e-9)


def test_point_iou_matches_a_loop_on_random_rows():
    rng = np.random.default_rng(1)
    rows = []
    for _ in range(300):
        s = rng.uniform(0, 90)
        starts = rng.uniform(0, 90, rng.integers(1, 4))
        windows = sorted((a, a + rng.uniform(0, 10)) for a in starts)
        rows.append((s, s + rng.uniform(0, 10), windows))
    table = _table(rows)

    def iou(a, b):
        inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
        union = (a[1] - a[0]) + (b[1] - b[0]) - inter
        return inter / union if union > 0 else 0.0

    expected = [max(iou((s, e), w) for w in ws) for s, e, ws in rows]
    assert point_iou(table) == pytest.approx(expected)


def test_base_iou_can_be_skipped_without_changing_region_metrics():
    table = _table([(10, 20, [(12, 18)]), (40, 50, [(30, 45)])])
    regions = _regions([[(5, 25)], [(35, 55)]], [False, False])
    full = evaluate(regions, table)
    lean = evaluate(regions, table, base_iou=False)
    assert np.isnan(lean.point_iou) and full.point_iou == pytest.approx((0.6 + 0.25) / 2)
    assert lean.marginal == full.marginal and lean.non_refused == full.non_refused


def test_evaluate_of_no_regions_or_no_table_says_what_it_takes():
    """None, or the two arguments swapped: a TypeError naming what evaluate takes (an
    AttributeError "'Regions' object has no attribute 'require_truth'" from inside)."""
    n = 20
    table = cover.GroundingTable.from_arrays(
        qid=np.arange(n), duration=60.0, pred_start=np.full(n, 10.0),
        pred_end=np.full(n, 20.0), truth=(np.full(n, 11.0), np.linspace(15, 25, n)))
    regions = cover.Calibrator(score="norm", alpha=0.2).fit(table).certify(table)
    for args, got in (((None, table), "NoneType and GroundingTable"),
                      ((table, regions), "GroundingTable and Regions"),
                      ((regions, {"qid": [1]}), "Regions and dict")):
        with pytest.raises(TypeError, match=f"evaluate takes the Regions of Calibrator.certify "
                                            f"and the labelled GroundingTable they certify, got "
                                            f"{got}$"):
            cover.evaluate(*args)
    assert cover.evaluate(regions, table).counts["rows"] == n
