"""Selective grounding by Learn-then-Test (cover.calibrate.ltt): the violation rate over
calibration draws, abstention in the certified output, the calibrator file."""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import replace

import numpy as np
import pytest

from cover.calibrate import Calibrator
from cover.calibrate.ltt import check_params, ltt_select
from cover.data.table import GroundingTable
from cover.errors import CalibratorFileError, CoverWarning
from cover.io.jsonl import RawRows
from cover.io.regions_jsonl import certified_rows, regions_from_rows
from cover.metrics import evaluate
from cover.ragged import Ragged

ALPHA, B, DELTA, SHARE = 0.25, 0.4, 0.1, 0.5


def population(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    """Rows of hardness ``h``: the score grows with ``h``, the grounder's score falls with
    it, and the region's share grows as ``w0(h) + lam / 20`` (budget crossing
    ``x = (SHARE - w0) * 20``); 2% refusals."""
    h = rng.uniform(size=n)
    conf = np.clip(1 - h + rng.normal(0, 0.2, n), 0, 1)
    s = rng.exponential(size=n) * (0.5 + 3 * h)
    w0 = 0.05 + 0.4 * h
    return {"s": s, "x": (SHARE - w0) * 20, "conf": conf,
            "refused": rng.uniform(size=n) < 0.02}


def risks(pop: dict[str, np.ndarray], lam: float, cutoff: float | None) -> tuple[float, float]:
    """Population answered-miss rate and abstention rate of one configuration."""
    c = -math.inf if cutoff is None else cutoff
    answered = ~pop["refused"] & (pop["conf"] >= c) & (pop["x"] >= lam)
    miss = (pop["s"] > lam) & answered
    return float(miss.sum() / max(answered.sum(), 1)), float(1 - answered.mean())


def plug_in(d: dict[str, np.ndarray]) -> float | None:
    """The smallest lam whose calibration answered-miss and abstention rates are within
    the targets, no bound (what the test shows LTT is needed for)."""
    lam = np.quantile(d["s"], np.linspace(0.3, 0.99, 200))
    answered = ~d["refused"][None, :] & (d["x"][None, :] >= lam[:, None])
    miss = ((d["s"][None, :] > lam[:, None]) & answered).sum(1) / np.maximum(answered.sum(1), 1)
    ok = np.flatnonzero((miss <= ALPHA) & (1 - answered.mean(1) <= B))
    return float(lam[ok[0]]) if ok.size else None


def test_violation_rate_at_most_delta_over_calibration_draws() -> None:
    """P(answered-miss > alpha or abstention > budget) <= delta over 300 draws of n = 1000
    (binomial margin 3 sd), while a configuration is found in most draws; the plug-in
    choice (no bound) violates far more often."""
    rng = np.random.default_rng(0)
    pop = population(rng, 50_000)
    draws, n, bad, found, plug_bad = 300, 1000, 0, 0, 0
    for _ in range(draws):
        idx = rng.integers(0, pop["s"].size, size=n)
        d = {k: v[idx] for k, v in pop.items()}
        sel = ltt_select(d["s"], d["x"], d["conf"], d["refused"], ALPHA, delta=DELTA,
                         max_abstain=B, cutoffs=[0.2, 0.4])
        found += sel.found
        if sel.found:
            miss, abst = risks(pop, sel.lam, sel.cutoff)
            bad += miss > ALPHA or abst > B
        lam = plug_in(d)
        if lam is not None:
            miss, abst = risks(pop, lam, None)
            plug_bad += miss > ALPHA or abst > B
    margin = 3 * math.sqrt(DELTA * (1 - DELTA) / draws)
    assert bad / draws <= DELTA + margin
    assert found / draws > 0.9
    assert plug_bad / draws > 2 * DELTA


def test_no_configuration_abstains_everywhere_with_the_reason() -> None:
    """Too few rows for the tests: found is false, every row abstains (whole video) and
    says why; nothing is dropped."""
    t = table(20)
    with pytest.warns(CoverWarning, match="no .threshold, score cutoff. configuration"):
        cal = Calibrator(score="sec", alpha=0.1, rule="ltt").fit(t)
    assert cal.params_["found"] is False and cal.threshold_ == math.inf
    reg = cal.certify(t)
    assert reg.abstained.all()
    rows = certified_rows(t, reg, {"rule": "ltt"}, [])
    assert len(rows) == 20
    assert {r["cover"]["status"] for r in rows} == {"abstained"}
    assert rows[0]["cover"]["region"] == [[0.0, 100.0]]
    assert "passed the risk tests" in rows[0]["cover"]["reason"]


def table(n: int, seed: int = 1) -> GroundingTable:
    rng = np.random.default_rng(seed)
    start = rng.uniform(0, 80, n)
    length = rng.uniform(2, 20, n)
    err = rng.exponential(3.0, n)
    return GroundingTable.from_arrays(
        qid=np.arange(n), duration=100.0, pred_start=start, pred_end=start + length,
        truth=(np.clip(start - err, 0, 100), np.clip(start + length + err / 2, 0, 100)))


def test_fit_certify_save_load_evaluate(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A found configuration: rows wider than the budget abstain with the reason, the
    file round-trips (learned cutoff and found), written rows read back abstained, and
    evaluate reports the abstention rate and the answered-miss rate."""
    t = table(600)
    cal = Calibrator(score="sec", alpha=0.2, rule="ltt",
                     params={"max_share": 0.3, "max_abstain": 0.3}).fit(t)
    assert cal.params_["found"] is True and cal.params_["score_cutoff"] is None
    reg = cal.certify(t)
    share = reg.length / reg.duration
    assert (share[reg.abstained] == 1.0).all() and (share[~reg.abstained] <= 0.3).all()
    assert 0 < reg.abstained.mean() <= 0.3 + 0.1
    path = tmp_path / "cal.json"
    cal.save(path)
    back = Calibrator.load(path)
    assert back.params_ == cal.params_
    again = back.certify(t)
    assert (again.abstained == reg.abstained).all()
    rows = certified_rows(t, reg, {"score": "sec", "rule": "ltt", "alpha": 0.2}, [])
    i = int(np.flatnonzero(reg.abstained)[0])
    assert rows[i]["cover"]["status"] == "abstained"
    assert "above the width budget max_share 0.3" in rows[i]["cover"]["reason"]
    raw = RawRows(path="r.jsonl", records=rows, lines=np.arange(1, len(rows) + 1))
    loaded = regions_from_rows(raw)
    assert (loaded.regions.abstained == reg.abstained).all()
    ev = evaluate(loaded.regions, t).to_dict()
    sel = ev["selective"]
    assert sel["abstained"] == int(reg.abstained.sum())
    assert sel["abstention_rate"] == pytest.approx(reg.abstained.mean())
    covered = reg.intervals.contains(t.truth)
    assert sel["answered"]["miss_rate"] == pytest.approx(1 - covered[~reg.abstained].mean())


def test_score_cutoff_learned_and_applied() -> None:
    """With grounder scores that predict the miss, a cutoff is chosen and the rows below
    it abstain, naming the score and the cutoff."""
    rng = np.random.default_rng(3)
    n = 800
    conf = rng.uniform(size=n)
    start = rng.uniform(10, 70, n)
    err = np.where(conf < 0.3, rng.uniform(0, 30, n), rng.exponential(1.0, n))
    t = replace(GroundingTable.from_arrays(
        qid=np.arange(n), duration=100.0, pred_start=start, pred_end=start + 10,
        truth=(np.maximum(start - err, 0), start + 10)),
        pred_windows=Ragged(np.c_[start, start + 10, conf], np.arange(n + 1, dtype=np.int64)))
    cal = Calibrator(score="sec", alpha=0.1, rule="ltt",
                     params={"max_share": 1.0, "max_abstain": 0.4,
                             "score_cutoffs": [0.1, 0.3, 0.5]}).fit(t)
    assert cal.params_["found"] and cal.params_["score_cutoff"] in (0.3, 0.5)
    reg = cal.certify(t)
    low = conf < cal.params_["score_cutoff"]
    assert (reg.abstained == low).all()
    reason = str(reg.abstain_reason[int(np.flatnonzero(low)[0])])
    assert "below the calibrated cutoff" in reason


def test_params_checked_and_file_fields_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="max_share must be a number in"):
        check_params({"delta": 0.1, "bound": "binomial", "max_share": 1.5, "max_abstain": 0.2,
                      "score_cutoffs": []})
    with pytest.raises(ValueError, match="score_cutoff and found are learned together"):
        check_params({"delta": 0.1, "bound": "binomial", "max_share": 0.5, "max_abstain": 0.2,
                      "score_cutoffs": [], "found": True})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverWarning)
        cal = Calibrator(score="sec", alpha=0.2, rule="ltt").fit(table(200))
    doc = cal.to_dict()
    doc["params"]["found"] = "yes"
    from cover.calibrate.calibrator_file import _digest

    doc["sha256"] = _digest({k: v for k, v in doc.items() if k != "sha256"})
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(CalibratorFileError, match="field params: found must be true or false"):
        Calibrator.load(path)
