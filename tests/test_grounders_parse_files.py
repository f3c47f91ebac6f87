"""Answer files -> prediction files: the four real UAG-OOPS files, golden, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cover.cli import main
from cover.grounders.parse.files import parse_answer_file
from cover.io import read_predictions
from cover.io.uag_oops import read_uag_answers

UAG = "oops_uag/hasnat79_uag/"
# file -> class counts (ok, refusal, failure, start_only, zero_length, out_of_range),
# rows where our top-1 equals the authors' own parse exactly
GOLDEN = {
    "videochat2_pred_uag_oops_dataset_v1_null_fixed.json": ((1109, 67, 57, 0, 354, 2), 1463),
    "video_llama2_pred_uag_oops_dataset_v1_null_fixed.json": ((1232, 14, 0, 2, 0, 341), 871),
    "finetuned_videollama_pred_x_uag_oops_dataset_v1_null_fixed.json":
        ((1141, 0, 0, 0, 0, 448), 1141),
    "llama3_pred_x_blip2_text_rep_x_uag_oops_dataset_v1_null_fixed.json":
        ((1362, 6, 1, 1, 216, 3), 1558),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_uag_answer_files_golden(data_dir: Path, name: str) -> None:
    path = data_dir / UAG / name
    if not path.is_file():
        pytest.skip("UAG-OOPS answers not staged")
    pf = parse_answer_file(path, duration_field="end_time")
    counts, agree = GOLDEN[name]
    c = pf.parsed.counts()
    assert (c["ok"], c["refusal"], c["failure"], c["start_only"], c["zero_length"],
            c["out_of_range"]) == counts
    assert c["echo"] == 0 and sum(c.values()) == len(pf.rows) == 1589
    a = read_uag_answers(path)
    ps, pe = pf.parsed.top1()
    same = (np.abs(ps - a.authors_start) < 1e-9) & (np.abs(pe - a.authors_end) < 1e-9)
    assert int(same.sum()) == agree
    # every answer we read, the authors read too (we never invent a time they missed)
    assert not (np.isfinite(ps) & ~np.isfinite(a.authors_start)).any()
    # refusals are whole-video rows, never dropped
    assert sum(not r["pred_relevant_windows"] for r in pf.rows) == 1589 - int(
        pf.parsed.answered.sum())


def test_cli_parse_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "answers.jsonl"
    rows = [{"qid": 1, "vid": "a", "duration": 30, "response": "It happens in 0 - 10 seconds."},
            {"qid": 2, "vid": "a", "duration": 30, "response": "I'm sorry, I cannot do that."},
            {"qid": 3, "vid": "b", "response": "from 20% to 40%"},
            {"qid": 4, "vid": "b", "duration": 30, "response": "Answer: 0:00 - 0:30"},
            {"qid": 5, "vid": "b", "duration": 30, "response": None}]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    videos = tmp_path / "videos.jsonl"
    videos.write_text('{"vid": "b", "duration": 50}\n')
    out = tmp_path / "preds.jsonl"
    summary = tmp_path / "summary.json"
    assert main(["parse-answers", str(src), "-o", str(out), "--videos", str(videos),
                 "--summary", str(summary), "--prompt-example", "Answer: 0:00 - 0:30"]) == 0
    printed = capsys.readouterr().out
    assert "5 answers (response)" in printed and "echo 1" in printed
    preds = read_predictions(out).table
    assert preds.qid.tolist() == ["1", "2", "3", "4", "5"]
    assert np.allclose(preds.pred_start[[0, 2]], [0, 10]) and np.isnan(preds.pred_start[1])
    doc = json.loads(summary.read_text())["files"][0]
    assert doc["counts"] == {"ok": 2, "refusal": 1, "echo": 1, "failure": 1, "start_only": 0,
                             "zero_length": 0, "out_of_range": 0}
    assert set(doc["samples"]) == {"ok", "refusal", "echo", "failure"}
    # the output may not overwrite an input
    assert main(["parse-answers", str(src), "-o", str(src)]) != 0


def test_coverage_on_parsed_answers_tracks_target(data_dir: Path) -> None:
    """docs/llm-answers.md: calibrating on the parsed answers, refusals as whole clips."""
    from dataclasses import replace

    from cover.data.join import index_of
    from cover.grounders.parse import parse_answers
    from cover.io.uag_oops import read_uag_ground_truth
    from cover.studies.coverage_validity import coverage_validity
    from cover.studies.protocol import Protocol

    path = data_dir / UAG / "video_llama2_pred_uag_oops_dataset_v1_null_fixed.json"
    if not path.is_file():
        pytest.skip("UAG-OOPS answers not staged")
    gt = read_uag_ground_truth(data_dir / "oops_uag/annotations/"
                               "uag_oops_dataset_v1_start_time_fixed.json").table
    ans = read_uag_answers(path)
    j, found = index_of(gt.qid, ans.clip)
    assert found.all()
    ps, pe = parse_answers(list(ans.text), gt.duration[j]).top1()
    table = replace(gt.take(j), pred_start=ps, pred_end=pe)
    assert round(float(np.mean(~table.has_interval)), 3) == 0.225
    res = coverage_validity(table, families=("norm", "sec"),
                            protocol=Protocol(alphas=(0.1,), n_resamples=20))
    for cell in res.cells:
        assert cell.within_band, cell
        assert cell.nonrefused_coverage_mean < cell.coverage_mean  # refusals always cover


def test_uag_answers_through_the_command_line(data_dir: Path, tmp_path: Path) -> None:
    """parse-answers output joins the UAG-OOPS ground truth on qid and vid (both the
    source compilation) and calibrates from the command line."""
    from cover.grounders.humans import truth_rows
    from cover.io import write_jsonl
    from cover.io.uag_oops import read_uag_ground_truth

    path = data_dir / UAG / "videochat2_pred_uag_oops_dataset_v1_null_fixed.json"
    if not path.is_file():
        pytest.skip("UAG-OOPS answers not staged")
    gt = read_uag_ground_truth(data_dir / "oops_uag/annotations/"
                               "uag_oops_dataset_v1_start_time_fixed.json").table
    write_jsonl(tmp_path / "gt.jsonl", truth_rows(gt))
    preds = tmp_path / "preds.jsonl"
    assert main(["parse-answers", str(path), "--duration-field", "end_time", "-o", str(preds),
                 "--samples", "0"]) == 0
    assert main(["calibrate", "--preds", str(preds), "--gt", str(tmp_path / "gt.jsonl"),
                 "--score", "norm", "--alpha", "0.1", "-o", str(tmp_path / "cal.json")]) == 0
    cal = json.loads((tmp_path / "cal.json").read_text())
    # every answer calibrated: 126 unreadable ones as refusals, none dropped
    assert cal["counts"]["rows"] == 1589 and cal["counts"]["refused"] == 126
