"""`cover calibrate --rule NAME`: every rule runs alone; impossible requests are clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cli_files import synthetic
from cover.calibrate import Calibrator
from cover.cli import main


def _synthetic(tmp_path: Path, n: int = 60, seed: int = 0) -> tuple[Path, Path]:
    return synthetic(tmp_path, n, seed, saliency=False)


@pytest.mark.parametrize("rule", ["split", "bonferroni", "asymmetric", "rcps", "crc"])
def test_each_rule_runs_alone_and_certifies(rule: str, tmp_path: Path, capsys) -> None:
    preds, gt = _synthetic(tmp_path, n=120)
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--rule", rule,
                 "--alpha", "0.2", "-o", str(cal)]) == 0
    out = capsys.readouterr().out
    assert rule in out or rule == "split"
    doc = json.loads(cal.read_text())
    assert doc["rule"] == rule and Calibrator.load(cal).rule == rule
    if rule == "rcps":
        assert doc["params"] == {"delta": 0.1, "bound": "binomial"} and "binomial" in out
    if rule in ("bonferroni", "asymmetric"):
        assert "start/end widening ratio" in out
    regions = tmp_path / "r.jsonl"
    assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--videos",
                 str(gt), "-o", str(regions)]) == 0
    block = json.loads(regions.read_text().splitlines()[0])["cover"]
    assert block["rule"] == rule
    assert ("threshold_end" in block) == (rule in ("bonferroni", "asymmetric"))


def test_rcps_options_reach_the_file(tmp_path: Path) -> None:
    preds, gt = _synthetic(tmp_path, n=120)
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--rule", "rcps",
                 "--alpha", "0.2", "--delta", "0.05", "--bound", "hoeffding", "-o",
                 str(cal)]) == 0
    assert json.loads(cal.read_text())["params"] == {"delta": 0.05, "bound": "hoeffding"}


def test_side_weights_are_used(tmp_path: Path) -> None:
    preds, gt = _synthetic(tmp_path, n=120)
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--rule", "asymmetric",
                 "--side-weights", "3,1", "-o", str(cal)]) == 0
    loaded = Calibrator.load(cal)
    assert loaded.params_["weights"] == {"start": 3.0, "end": 1.0}
    assert loaded.side_ratio_ == pytest.approx(3.0)


@pytest.mark.parametrize(("extra", "message"), [
    (["--rule", "split", "--bound", "binomial"], "--bound does not apply to --rule split"),
    (["--rule", "crc", "--delta", "0.1"], "--delta does not apply to --rule crc"),
    (["--rule", "asymmetric", "--side-weights", "1"], "--side-weights must be two numbers"),
    (["--rule", "asymmetric", "--side-weights", "0,1"], "weights must be"),
    (["--score", "sigma"], "needs the boundary uncertainty columns start_std"),
    (["--score", "sls", "--rule", "bonferroni"], "needs an interval score"),
])
def test_impossible_requests_are_clear_errors(extra: list[str], message: str, tmp_path: Path,
                                              capsys) -> None:
    preds, gt = _synthetic(tmp_path, n=60)
    before = preds.read_bytes(), gt.read_bytes()
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), *extra, "-o",
                 str(cal)]) == 2
    assert message in capsys.readouterr().err
    assert not cal.exists() and (preds.read_bytes(), gt.read_bytes()) == before


@pytest.mark.parametrize(("flags", "line"), [
    ([], "RCPS bound: binomial (the default); the paper and the main table of `cover study "
         "rcps` use hoeffding, a looser bound: --bound hoeffding reproduces them"),
    (["--bound", "hoeffding"],
     "RCPS bound: hoeffding (given by --bound; the paper's, as in `cover study rcps`)"),
])
def test_rcps_says_which_bound(flags: list[str], line: str, tmp_path: Path, capsys) -> None:
    preds, gt = _synthetic(tmp_path, n=120)
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--rule", "rcps",
                 "--alpha", "0.2", *flags, "-o", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    assert f"  {line}\n" in out
    assert "calibration scores: " in out and " at the threshold" in out


def test_calibrate_reports_ties_at_the_threshold(tmp_path: Path, capsys) -> None:
    preds, gt = _synthetic(tmp_path, n=120)
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--score", "sec",
                 "--no-band", "-o", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    from cover.io.labelled import load_labelled
    from cover.scores import compute_scores

    table, _ = load_labelled(preds, gt)
    s = compute_scores(table, "sec").values
    lam = Calibrator.load(tmp_path / "c.json").threshold_
    at, distinct = int((s == lam).sum()), np.unique(s).size
    want = f"calibration scores: {distinct} distinct values in {s.size} rows; {at} at the " \
           "threshold"
    assert want in out
    if at > 1:
        assert "ties at the threshold: the upper bound 1 - alpha + 1/(n+1)" in out
    else:
        assert "coverage is at most 1 - alpha + 1/(n+1) = " in out


@pytest.mark.parametrize(("score", "said"), [
    ("norm", "refused rows 0, NORM scale floored "),
    ("sec", "refused rows 0\n"),
    ("sls", "refused rows 0, truth beyond signal "),
])
def test_the_rows_set_apart_are_named_for_the_family_alone(score: str, said: str,
                                                           tmp_path: Path, capsys) -> None:
    """Each family names only the rows it treats apart: SEC has no scale to floor and no
    signal, NORM no signal, SLS no scale. Every family's line named all three."""
    preds, gt = synthetic(tmp_path, 60, 0, saliency=True)
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--score", score,
                 "-o", str(tmp_path / "cal.json")]) == 0
    out = capsys.readouterr().out
    assert said in out
    line = next(x for x in out.splitlines() if x.startswith("refused rows"))
    assert ("scale floored" in line) == (score == "norm")
    assert ("beyond signal" in line) == (score == "sls")
