"""``cover calibrate --rule mondrian|buckets|weighted``: each runs with its defaults,
the saved JSON holds the groups, certify uses them; bad flag combinations are errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cover.cli import main


def _files(tmp_path: Path, n: int = 150) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    preds, gts = [], []
    for i in range(n):
        dur = float(rng.choice([60.0, 150.0]))
        s = float(rng.uniform(0, dur / 2))
        e = s + float(rng.uniform(2, dur / 3))
        ts = max(0.0, s + float(rng.normal(0, 3)))
        te = min(dur, max(ts + 1, e + float(rng.normal(0, 3))))
        preds.append({"qid": i, "vid": f"v{i}_0.0_{dur}", "site": "ab"[i % 2],
                      "pred_relevant_windows": [[s, e, 0.9]]})
        gts.append({"qid": i, "vid": f"v{i}_0.0_{dur}", "duration": dur,
                    "relevant_windows": [[ts, te]]})
    p, g = tmp_path / "preds.jsonl", tmp_path / "gt.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in preds))
    g.write_text("".join(json.dumps(r) + "\n" for r in gts))
    return p, g


@pytest.mark.parametrize(("rule", "extra", "groups"), [
    ("mondrian", [], {"short", "medium", "long"}),
    ("buckets", [], {"[0, 150)", "[150, inf)"}),
    ("buckets", ["--edges", "100"], {"[0, 100)", "[100, inf)"}),
    ("mondrian", ["--groups", "key", "--group-key", "site", "--fallback", "inf"], {"a", "b"}),
    ("weighted", ["--shift-to", "GT"], None),
])
def test_each_rule_runs_with_its_defaults(tmp_path, capsys, rule, extra, groups):
    preds, gt = _files(tmp_path)
    extra = [str(gt) if x == "GT" else x for x in extra]
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--rule", rule,
                 "-o", str(out), *extra]) == 0
    doc = json.loads(out.read_text())
    assert doc["rule"] == rule
    if groups is not None:
        assert set(doc["thresholds"]) == groups
    else:
        assert doc["groups"]["kind"] == "covariate_cells" and doc["params"]["ratio"]
        assert "effective sample size" in capsys.readouterr().out
    regions = tmp_path / "r.jsonl"
    assert main(["certify", "--calibrator", str(out), "--preds", str(preds), "--videos",
                 str(gt), "-o", str(regions)]) == 0
    assert len(regions.read_text().splitlines()) == 150


@pytest.mark.parametrize(("flags", "message"), [
    (["--rule", "mondrian", "--groups", "key"], "--groups key needs --group-key"),
    (["--rule", "mondrian", "--edges", "60"], "--edges applies to --groups duration"),
    (["--rule", "buckets", "--fallback", "inf"], "--fallback applies to --rule mondrian"),
    (["--rule", "split", "--min-group-rows", "3"], "--min-group-rows applies"),
    (["--rule", "mondrian", "--shift-to", "x"], "--shift-to applies to --rule weighted"),
    (["--rule", "weighted", "--groups", "duration"], "use --groups covariate_cells"),
])
def test_flag_errors(tmp_path, capsys, flags, message):
    preds, gt = _files(tmp_path, n=30)
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "-o",
                 str(tmp_path / "c.json"), *flags]) == 2
    assert message in capsys.readouterr().err


def test_weighted_positivity_report_names_target_rows(tmp_path, capsys):
    preds, gt = _files(tmp_path)
    target = tmp_path / "target.jsonl"
    rows = [{"vid": f"far{i}", "duration": 600.0} for i in range(3)] + \
        [{"vid": f"near{i}", "duration": 150.0} for i in range(30)]
    target.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--rule", "weighted",
                 "--shift-to", str(target), "-o", str(tmp_path / "w.json")]) == 0
    out = capsys.readouterr().out
    assert "3 of 33 test rows outside the calibration covariate range: vid far0, far1, far2" \
        in out


def test_weighted_shift_to_reads_durations_as_videos_does(tmp_path, capsys):
    """--shift-to durations are read as --videos reads them: a JSON object vid ->
    {duration} (charades.json's shape) gives the same report as the JSON lines."""
    preds, gt = _files(tmp_path)
    durs = {**{f"far{i}": 600.0 for i in range(3)}, **{f"near{i}": 150.0 for i in range(30)}}
    target = tmp_path / "target.json"
    target.write_text(json.dumps({v: {"duration": d, "subject": "x"} for v, d in durs.items()}))
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--rule", "weighted",
                 "--shift-to", str(target), "-o", str(tmp_path / "w.json")]) == 0
    assert "3 of 33 test rows outside the calibration covariate range: vid far0, far1, far2" \
        in capsys.readouterr().out
