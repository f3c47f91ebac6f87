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


def _answer_lines(n: int = 20) -> list[str]:
    return [json.dumps({"qid": i, "vid": "a", "duration": 30,
                        "response": f"{i} - {i + 2} seconds"}) for i in range(n)]


def test_no_answer_line_is_dropped_without_a_word(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    lines = _answer_lines()
    lines[6] = '{"qid": 6, "vid": "a", "response": "0 - 1 s"'  # malformed (torn)
    lines[9] = "[1, 2]"
    lines[12] = "42"
    lines[14] = '{"qid": 14, "vid": "a", "duration": Infinity, "response": "1 - 2 s"}'
    src = tmp_path / "answers.jsonl"
    src.write_text("\n".join(lines) + "\n")
    before = src.read_bytes()
    out, summary = tmp_path / "preds.jsonl", tmp_path / "summary.json"
    assert main(["parse-answers", str(src), "-o", str(out), "--summary", str(summary),
                 "--samples", "0"]) == 0
    said = capsys.readouterr()
    assert src.read_bytes() == before
    assert "17 answers (response): ok 17 (100.0%); and 3 line(s) rejected, not answer rows " \
           "(of 20 lines)" in said.out
    assert f"cover: 3 row(s) rejected in {src}" in said.err
    assert f"{src}:7 (qid=6): malformed JSON (Expecting ',' delimiter at column 45)" in said.err
    assert f"{src}:10: expected a JSON object, got a list" in said.err
    assert f"{src}:13: expected a JSON object, got a number" in said.err
    assert f"{src}:15 (qid=14): duration Infinity is not a finite number > 0; set aside" \
        in said.err
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["qid"] for r in rows] == [str(i) for i in range(20) if i not in (6, 9, 12)]
    row14 = next(r for r in rows if r["qid"] == "14")
    assert "duration" not in row14 and row14["pred_relevant_windows"] == [[1.0, 2.0, 1.0]]
    doc = json.loads(summary.read_text())["files"][0]
    assert (doc["n"], doc["rejected"], doc["lines"]) == (17, 3, 20)  # counts add up
    assert [(p["line"], p["action"]) for p in doc["problems"]] == [
        (7, "rejected"), (10, "rejected"), (13, "rejected"), (15, "noted")]


def test_a_byte_that_is_not_utf8_is_a_rejected_line(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "answers.jsonl"
    src.write_bytes(b'{"qid": 1, "vid": "a", "duration": 10, "response": "0 - 2 s"}\n'
                    b'{"qid": 2, "vid": "a", "duration": 10, "response": "caf\xe9 0 - 1 s"}\n')
    out = tmp_path / "preds.jsonl"
    assert main(["parse-answers", str(src), "-o", str(out), "--samples", "0"]) == 0
    assert (f"{src}:2 (qid=2): not UTF-8 text (byte 0xe9 at column 56); save the file as "
            "UTF-8") in capsys.readouterr().err
    assert len(out.read_text().splitlines()) == 1
    # nothing readable at all: an error naming the file and line, nothing written
    src.write_bytes(b'{"qid": 2, "response": "caf\xe9"}\n[1]\n')
    assert main(["parse-answers", str(src), "-o", str(tmp_path / "none.jsonl")]) == 2
    err = capsys.readouterr().err
    assert f"{src}: no line is an answer row (a JSON object); first: {src}:1 (qid=2): not " \
           "UTF-8 text" in err and "codec" not in err
    assert not (tmp_path / "none.jsonl").exists()


def test_gzip_answer_files_are_recognised_by_their_bytes(tmp_path: Path) -> None:
    import gzip

    lines = "\n".join(_answer_lines(3)) + "\n"
    (tmp_path / "answers.jsonl").write_bytes(gzip.compress(lines.encode()))
    pf = parse_answer_file(tmp_path / "answers.jsonl")
    assert [r["qid"] for r in pf.rows] == ["0", "1", "2"] and not pf.problems
    keyed = {"clip1": {"video_path": "x", "start_time": 1, "end_time": 5,
                       "description": "d", "videochat2_pred": "0 - 3 s"}}
    (tmp_path / "keyed.json").write_bytes(gzip.compress(json.dumps(keyed).encode()))
    pf = parse_answer_file(tmp_path / "keyed.json")
    # one answer and no duration: written without one (was a NaN that failed the write)
    assert pf.rows[0]["qid"] == "clip1" and "duration" not in pf.rows[0]
    assert main(["parse-answers", str(tmp_path / "keyed.json"), "-o",
                 str(tmp_path / "k.preds.jsonl")]) == 0
    assert (tmp_path / "k.preds.jsonl").read_text().count("\n") == 1


@pytest.mark.parametrize(("value", "shown"), [
    ("Infinity", "Infinity"), ("-Infinity", "-Infinity"), ("NaN", "NaN"), ("0", "0"),
    ("-3", "-3"), ('"abc"', '"abc"'), ("1e400", "Infinity"), ("true", "true")])
def test_a_bad_duration_is_a_row_problem(tmp_path: Path, value: str, shown: str) -> None:
    src = tmp_path / "answers.jsonl"
    src.write_text('{"qid": 1, "vid": "v", "duration": ' + value +
                   ', "answer": "from 20% to 40%"}\n')
    pf = parse_answer_file(src, durations={"v": 50.0})
    assert [str(p) for p in pf.problems] == [
        f"{src}:1 (qid=1): duration {shown} is not a finite number > 0; set aside"]
    # the --videos duration stands in for it
    assert pf.rows[0]["duration"] == 50.0 and pf.rows[0]["pred_relevant_windows"] == [
        [10.0, 20.0, 1.0]]


def test_missing_vid_and_duration_are_warnings_with_counts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "answers.jsonl"
    src.write_text("".join(json.dumps({"qid": f"v{i % 2}_{i}", "duration": 30 if i else None,
                                       "response": f"It happens at {i} - {i + 2} s."}) + "\n"
                           for i in range(3)))
    out, summary = tmp_path / "preds.jsonl", tmp_path / "summary.json"
    assert main(["parse-answers", str(src), "-o", str(out), "--summary", str(summary),
                 "--samples", "0"]) == 0
    said = capsys.readouterr()
    assert "answer text: field 'response' (detected: 100% of rows read like answers); vid: " \
           "the qid (no row has a vid field)" in said.out
    assert (f"cover: warning: 3 of 3 answer(s) in {src} have no vid (rule: the qid (no row "
            "has a vid field)); their vid is set to the qid") in said.err
    assert "pass --vid-field NAME or --vid-pattern REGEX" in said.err
    assert (f"cover: warning: 1 of 3 answer(s) in {src} have no duration (field 'duration', "
            "or --videos): the out-of-range check was skipped for them") in said.err
    doc = json.loads(summary.read_text())["files"][0]
    assert (doc["vid_missing"], doc["no_duration"], doc["text_field"]) == (3, 1, "response")
    # the vid from the qid by a pattern: no warning left about it
    assert main(["parse-answers", str(src), "-o", str(out), "--samples", "0",
                 "--vid-pattern", r"^(v\d)_"]) == 0
    said = capsys.readouterr()
    assert "have no vid" not in said.err and "have no duration" in said.err
    assert [json.loads(x)["vid"] for x in out.read_text().splitlines()] == ["v0", "v1", "v0"]


def test_text_field_per_file_on_the_command_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(json.dumps({"qid": 1, "vid": "v", "duration": 9, "x": "from 1 to 2 s",
                             "y": "from 3 to 4 s"}) + "\n")
    b.write_text(json.dumps({"qid": 1, "vid": "v", "duration": 9, "x": "from 5 to 6 s",
                             "y": "from 7 to 8 s"}) + "\n")
    out = tmp_path / "out"
    assert main(["parse-answers", str(a), str(b), "--out-dir", str(out), "--samples", "0",
                 "--text-field", "x", "--text-field", "b.jsonl=y"]) == 0
    said = capsys.readouterr().out
    assert f"{a}: 1 answers (x)" in said and f"{b}: 1 answers (y)" in said
    assert "field 'y' (given by --text-field)" in said
    wins = [json.loads((out / f"{n}.preds.jsonl").read_text())["pred_relevant_windows"]
            for n in "ab"]
    assert wins == [[[1.0, 2.0, 1.0]], [[7.0, 8.0, 1.0]]]
    assert main(["parse-answers", str(a), str(b), "--out-dir", str(out),
                 "--text-field", "x", "--text-field", "y", "--text-field", "x"]) == 2
    assert "--text-field is given 3 times for 2 answer files" in capsys.readouterr().err


def test_cli_parse_answers_reads_videos_as_certify_does(tmp_path: Path) -> None:
    """--videos of parse-answers takes every shape certify's --videos takes: a JSON
    object vid -> {duration} (charades.json) as well as JSON lines."""
    src = tmp_path / "answers.jsonl"
    src.write_text(json.dumps({"qid": 1, "vid": "b", "response": "from 20% to 40%"}) + "\n")
    out = tmp_path / "preds.jsonl"
    videos = tmp_path / "charades.json"
    videos.write_text('{"b": {"duration": 50.0, "subject": "x"}}')
    assert main(["parse-answers", str(src), "-o", str(out), "--videos", str(videos)]) == 0
    preds = read_predictions(out).table
    assert np.allclose([preds.pred_start[0], preds.pred_end[0]], [10, 20])


def test_cli_parse_answers_reads_the_real_charades_json(data_dir: Path, tmp_path: Path) -> None:
    """--videos the real charades.json (what certify --videos takes for Charades-STA):
    answers in percent on Charades videos get their seconds from its durations."""
    cj = data_dir / "charades_sta" / "annotations" / "charades.json"
    if not cj.is_file():
        pytest.skip("charades.json not staged")
    durs = json.loads(cj.read_text())
    vids = [v for v in list(durs)[:3] if isinstance(durs[v].get("duration"), (int, float))]
    src = tmp_path / "answers.jsonl"
    src.write_text("".join(json.dumps({"qid": i, "vid": v, "response": "from 20% to 40%"}) + "\n"
                           for i, v in enumerate(vids)))
    out = tmp_path / "preds.jsonl"
    assert main(["parse-answers", str(src), "-o", str(out), "--videos", str(cj)]) == 0
    preds = read_predictions(out).table
    want = np.array([durs[v]["duration"] for v in vids], dtype=float)
    assert np.allclose(preds.pred_start, 0.2 * want) and np.allclose(preds.pred_end, 0.4 * want)
