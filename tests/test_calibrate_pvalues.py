"""Per-query conformal p-values (cover.calibrate.pvalues): super-uniform on exchangeable
data, the smallest alpha at which a row's region is narrower than the video, the sketch
conservative within its stated error, the calibrator file field checked."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cover.calibrate import Calibrator, pvalues
from cover.calibrate.calibrator_file import _digest
from cover.calibrate.pvalues import candidate_p, score_sketch
from cover.data.table import GroundingTable
from cover.errors import CalibratorFileError
from cover.io.regions_jsonl import certified_rows


def test_p_values_super_uniform_on_exchangeable_scores() -> None:
    """4000 draws of n + 1 i.i.d. scores: P(p(truth) <= t) <= t within a 3-sd binomial
    margin at every t of a grid, and above t - 1/(n + 1) - margin (nearly uniform)."""
    rng = np.random.default_rng(0)
    n, draws = 49, 4000
    cal = np.sort(rng.normal(size=(draws, n)), axis=1)
    test = rng.normal(size=draws)
    p = (1 + (cal >= test[:, None]).sum(1)) / (n + 1)
    one = candidate_p(score_sketch(cal[0], np.full(n, "all"))["all"], test[:1])
    assert one[0] == p[0]
    for t in np.linspace(0.05, 0.95, 19):
        margin = 3 * np.sqrt(t * (1 - t) / draws)
        assert (p <= t).mean() <= t + margin
        assert (p <= t).mean() >= t - 1 / (n + 1) - margin


def test_sketch_is_conservative_within_its_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pvalues, "KEEP_MAX", 50)
    rng = np.random.default_rng(1)
    s = rng.exponential(size=1000)
    exact = {"n": 1000, "values": np.sort(s).tolist(), "ranks": None}
    sk = score_sketch(s, np.full(s.size, "all"))["all"]
    assert len(sk["values"]) == 50 and sk["ranks"][0] == 1 and sk["ranks"][-1] == 1000
    q = rng.exponential(size=500)
    pe, ps = candidate_p(exact, q), candidate_p(sk, q)
    gap = int(np.diff(sk["ranks"]).max())
    assert (ps >= pe).all() and (ps - pe <= (gap - 1) / 1001 + 1e-12).all()
    assert (gap - 1) / 1001 < 1 / (50 - 1)


def table(n: int, seed: int) -> GroundingTable:
    rng = np.random.default_rng(seed)
    start = rng.uniform(0, 60, n)
    length = rng.uniform(1, 40, n)
    err = rng.exponential(4.0, n)
    return GroundingTable.from_arrays(
        qid=np.arange(n), duration=100.0, pred_start=start, pred_end=start + length,
        truth=(np.clip(start - err, 0, 100), np.clip(start + length + err, 0, 100)))


@pytest.mark.parametrize("score", ["norm", "sec"])
def test_row_p_value_is_the_smallest_alpha_with_an_informative_region(score: str) -> None:
    """p(row) <= alpha iff the split-conformal region at alpha is narrower than the video."""
    cal_t, test = table(199, 2), table(300, 3)
    cal = Calibrator(score=score, alpha=0.1, keep_scores=True).fit(cal_t)
    p = cal.certify(test).p_value
    assert p is not None and ((p > 0) & (p <= 1)).all()
    for alpha in (0.02, 0.05, 0.1, 0.2, 0.3, 0.5):
        reg = Calibrator(score=score, alpha=alpha).fit(cal_t).certify(test)
        whole = reg.length >= reg.duration - 1e-9
        assert ((p <= alpha) == ~whole).all()


def test_p_value_written_and_file_round_trip(tmp_path) -> None:  # type: ignore[no-untyped-def]
    t = table(120, 4)
    cal = Calibrator(score="sec", alpha=0.1, keep_scores=True).fit(t)
    reg = cal.certify(t)
    rows = certified_rows(t, reg, {"rule": "split"}, [])
    assert rows[0]["cover"]["p_value"] == reg.p_value[0]
    path = tmp_path / "cal.json"
    cal.save(path)
    doc = json.loads(path.read_text())
    assert doc["calibration_scores"]["all"]["n"] == 120
    assert np.array_equal(Calibrator.load(path).certify(t).p_value, reg.p_value)
    doc["calibration_scores"]["all"]["values"][:2] = [5.0, 1.0]
    doc["sha256"] = _digest({k: v for k, v in doc.items() if k != "sha256"})
    path.write_text(json.dumps(doc))
    with pytest.raises(CalibratorFileError,
                       match=r"field calibration_scores\.all\.values: is not a sorted list"):
        Calibrator.load(path)
    plain = Calibrator(score="sec", alpha=0.1).fit(t)
    assert "calibration_scores" not in plain.to_dict() and plain.certify(t).p_value is None
    with pytest.raises(ValueError, match="p-values are defined for one-parameter rules"):
        Calibrator(score="sec", rule="bonferroni", keep_scores=True)
