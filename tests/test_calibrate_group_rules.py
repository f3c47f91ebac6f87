"""The group rules inside the Calibrator: mondrian, buckets and weighted reached through
the rule/grouping registry, certified per group, saved and loaded as JSON."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

import cover
from cover.calibrate.mondrian import mondrian_conformal
from cover.calibrate.weighted import weighted_conformal
from cover.calibrate.weighted_rule import cell_bounds, covariate_of, weighted_setup
from cover.errors import CalibratorFileError
from cover.scores import compute_scores


def _table(n: int, seed: int = 0, shift: float = 0.0, refusals: int = 0) -> cover.GroundingTable:
    """Predicted length 5-60 s; the end error grows for short predictions; durations
    20-300 s (log-uniform, shifted by ``shift`` in log space)."""
    rng = np.random.default_rng(seed)
    dur = np.exp(rng.uniform(np.log(20), np.log(300), n) + shift).clip(20, 600)
    length = rng.uniform(5, 60, n)
    s = rng.uniform(0, 1, n) * (dur - length).clip(0)
    e = np.minimum(s + length, dur)  # inside the video (a short one cuts the length)
    err = np.abs(rng.standard_normal(n)) * (40 / length) * (dur / 100)
    ts, te = s + 1, np.minimum(e + err, dur)
    ps = np.where(np.arange(n) < refusals, np.nan, s)
    return cover.GroundingTable.from_arrays(qid=np.arange(n), duration=dur, pred_start=ps,
                                            pred_end=e, truth=(ts, te))


def test_mondrian_calibrator_matches_the_pure_rule_and_round_trips(tmp_path):
    cal = _table(300)
    c = cover.Calibrator(score="norm", rule="mondrian", groups="pred_length").fit(cal)
    lengths = cal.pred_end - cal.pred_start
    from cover.calibrate.groups import length_terciles

    g = length_terciles(lengths)
    pure = mondrian_conformal(compute_scores(cal, "norm").values, g.assign(lengths), g,
                              alpha=0.1, warn=False)
    for i, label in enumerate(g.labels[:3]):
        assert c.thresholds_[label].sides["both"].value == pure.values[i]
        assert c.thresholds_[label].n == pure.n[i]
    c.save(tmp_path / "m.json")
    back = cover.Calibrator.load(tmp_path / "m.json")
    test = _table(200, seed=1)
    np.testing.assert_array_equal(back.certify(test).threshold, c.certify(test).threshold)
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["groups"]["kind"] == "pred_length" and len(doc["groups"]["edges"]) == 2
    assert set(doc["thresholds"]) == {"short", "medium", "long"}


def test_small_group_uses_the_pooled_threshold_at_certify_and_says_so(tmp_path):
    cal = _table(60)
    recs = np.array([{"site": "big"}] * 56 + [{"site": "tiny"}] * 4, dtype=object)
    cal = replace(cal, records=recs)
    c = cover.Calibrator(rule="mondrian", groups="key", group_params={"field": "site"}).fit(cal)
    assert [f.group for f in c.fallback_] == ["tiny"] and c.fallback_[0].used == "pooled"
    assert "4 calibration rows, needs >= 9" in c.fallback_[0].reason
    pooled = cover.Calibrator(rule="split").fit(cal).threshold_
    lam = c.certify(cal).threshold
    assert (lam[56:] == pooled).all() and (lam[:56] == c.thresholds_["big"].sides["both"].value
                                          ).all()
    c.save(tmp_path / "k.json")
    assert (cover.Calibrator.load(tmp_path / "k.json").certify(cal).threshold == lam).all()
    inf = cover.Calibrator(rule="mondrian", groups="key", group_params={"field": "site"},
                           params={"fallback": "inf"}).fit(cal)
    assert np.isposinf(inf.certify(cal).threshold[56:]).all()
    unseen = replace(cal, records=np.array([{"site": "new"}] * 60, dtype=object))
    with pytest.raises(ValueError, match=r"group new .* was not seen at calibration"):
        c.certify(unseen)


def test_refusals_form_their_own_group_or_borrow_one():
    cal = _table(200, refusals=20)
    c = cover.Calibrator(rule="mondrian", groups="pred_length").fit(cal)
    assert c.thresholds_["refused"].n == 20
    assert np.isposinf(c.thresholds_["refused"].sides["both"].value)
    no_ref = cover.Calibrator(rule="mondrian", groups="pred_length").fit(_table(200))
    regions = no_ref.certify(_table(50, seed=3, refusals=5))  # no error: whole video
    assert regions.refused[:5].all()


def test_buckets_calibrator_pools_a_sparse_bucket():
    cal = _table(400)
    c = cover.Calibrator(rule="buckets", groups="duration", alpha=0.05,
                         group_params={"edges": [280.0]}).fit(cal)  # 15 rows < 19 needed
    sparse = [f.group for f in c.fallback_]
    assert sparse == ["[280, inf)"], c.describe()
    lam = c.certify(cal).threshold
    pooled = cover.Calibrator(alpha=0.05).fit(cal).threshold_
    assert (lam[cal.duration >= 280] == pooled).all()
    default = cover.Calibrator(rule="buckets", groups="duration").fit(cal)
    assert len(default.thresholds_) == 2
    assert "one group: this is split conformal" in cover.Calibrator(rule="buckets").fit(
        cal).report_["note"]
    with pytest.raises(ValueError, match="takes min_rows"):
        cover.Calibrator(rule="buckets", params={"fallback": "inf"})


def test_weighted_cells_are_conservative_and_round_trip(tmp_path):
    cal, test = _table(400, seed=4), _table(300, seed=5, shift=0.6)
    scores = compute_scores(cal, "norm").values
    ws = weighted_setup(cal, test.duration, scores=scores, max_cells=8)
    c = cover.Calibrator(rule="weighted", groups="covariate_cells",
                         group_params=ws.group_params, params=ws.params).fit(cal,
                                                                             weights=ws.weights)
    assert ws.report is not None and ws.report.outside is not None
    lam = c.certify(test).threshold
    lo, hi = ws.group_params and c.group_params_["range"]
    assert ws.ratio is not None
    exact = weighted_conformal(scores, ws.weights, ws.ratio(np.clip(test.duration, lo, hi)),
                               alpha=0.1).values
    assert (lam >= exact).all()  # a cell's threshold is its largest exact one
    assert (lam > exact).mean() < 0.9  # ... and not vacuous
    c.save(tmp_path / "w.json")
    back = cover.Calibrator.load(tmp_path / "w.json")
    np.testing.assert_array_equal(back.certify(test).threshold, lam)
    for label in c.thresholds_:
        a, b = cell_bounds(label)
        assert lo <= a <= b <= hi
    one = weighted_setup(cal)
    flat = cover.Calibrator(rule="weighted", groups="covariate_cells",
                            group_params=one.group_params, params=one.params
                            ).fit(cal, weights=one.weights)
    split = cover.Calibrator().fit(cal).threshold_
    assert all(r.sides["both"].value == split for r in flat.thresholds_.values())


def test_weighted_bad_weights_and_tampered_ratio(tmp_path):
    cal = _table(100)
    ws = weighted_setup(cal, _table(100, seed=2, shift=0.3).duration)
    kw = {"rule": "weighted", "groups": "covariate_cells", "group_params": ws.group_params,
          "params": ws.params}
    with pytest.raises(ValueError, match="needs weights"):
        cover.Calibrator(**kw).fit(cal)
    for bad, msg in ((-1.0, "negative"), (np.nan, "NaN")):
        w = ws.weights.copy()
        w[3] = bad
        with pytest.raises(ValueError, match=f"row 4 is {msg}"):
            cover.Calibrator(**kw).fit(cal, weights=w)
    with pytest.raises(ValueError, match="all zero"):
        cover.Calibrator(**kw).fit(cal, weights=np.zeros(100))
    c = cover.Calibrator(**kw).fit(cal, weights=ws.weights)
    doc = c.to_dict()
    doc["params"]["ratio"]["coef"] = [0.0, 1.0, 2.0]
    from cover.calibrate.calibrator_file import _digest

    doc["sha256"] = _digest({k: v for k, v in doc.items() if k != "sha256"})
    with pytest.raises(CalibratorFileError, match="field params: ratio must be a finite "
                                                  "degree-1"):
        cover.Calibrator.from_dict(doc)
    assert covariate_of(cal, "pred_length").shape == (100,)
    with pytest.raises(ValueError, match="unknown covariate"):
        covariate_of(cal, "fps")


def test_real_qd_detr_mondrian_closes_the_short_prediction_gap(qdetr_table, qvh_gt, qdetr_preds):
    """QD-DETR (video), NORM, alpha 0.1, the 40/60 video split: one marginal threshold
    undercovers the shortest predicted-length tercile; Mondrian brings every tercile
    near the target (docs/calibration-rules.md, Mondrian vs the marginal rule)."""
    from cover.calibrate.registry import get_grouping

    table = qdetr_table
    split = cover.split_by_unit(table.units, cal_frac=0.4, seed=42)
    cal, test = table.take(split.calibration), table.take(split.test)
    mon = cover.Calibrator(rule="mondrian", groups="pred_length").fit(cal)
    marg = cover.Calibrator().fit(cal)
    labels = get_grouping("pred_length").assign(test, mon.group_params_)
    s = compute_scores(test, "norm").values
    cov = {name: np.array([(s <= c.row_lams(test)[0])[labels == g].mean()
                           for g in ("short", "medium", "long")]) for name, c in
           (("marginal", marg), ("mondrian", mon))}
    assert cov["marginal"][0] < 0.85 and cov["marginal"][2] > 0.99
    assert np.abs(cov["mondrian"] - 0.9).max() < 0.05
    assert (0.9 - cov["mondrian"]).max() < (0.9 - cov["marginal"]).max() / 2
