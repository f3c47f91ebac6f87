"""``cover certify`` of a whole file (``cover.jobs.certify``): every input row comes out,
certified or rejected with its own reason, also where a document puts many rows on one
line (TGN's proposals file is one line of JSON)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from cover.cli import main

TGN = "charades_sta/tgn/TGN_predict_proposals_test_nms_0.55.json"
GT = "charades_sta/annotations/charades_sta_test.txt"
VIDEOS = "charades_sta/annotations/charades.json"


@pytest.fixture(scope="module")
def tgn_calibrator(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SLS on the relevance built from TGN's proposals, fitted on all of Charades-STA
    test (the rows' fates, not coverage, are checked here)."""
    out = tmp_path_factory.mktemp("tgn") / "cal.json"
    assert main(["calibrate", "--preds", str(data_dir / TGN), "--gt", str(data_dir / GT),
                 "--score", "sls", "--alpha", "0.3", "--relevance-from", "proposals",
                 "-o", str(out)]) == 0
    return out


def _first_rows(data_dir: Path, tmp_path: Path, n: int) -> Path:
    """TGN's file cut to its first ``n`` queries, still one line of JSON (the first three
    are video JVLAZ's)."""
    doc = json.loads((data_dir / TGN).read_text())
    keys = list(doc["results"])[:n]
    out = tmp_path / "tgn.json"
    out.write_text(json.dumps({"results": {k: doc["results"][k] for k in keys}}))
    return out


def _videos(data_dir: Path, tmp_path: Path, vid: str, duration: float | None) -> Path:
    """Charades' durations with ``vid``'s changed (None: left out)."""
    doc = json.loads((data_dir / VIDEOS).read_text())
    if duration is None:
        del doc[vid]
    else:
        doc[vid]["duration"] = duration
    out = tmp_path / "videos.json"
    out.write_text(json.dumps(doc))
    return out


@pytest.mark.parametrize(("duration", "why"), [
    (None, "no duration known for video 'JVLAZ'"),
    (1e9, "a relevance signal from proposals over its duration of 1e+09 s would need more "
          "than 4,194,304 clips of 2 s"),
])
def test_rows_of_one_line_rejected_by_the_stage_are_each_written(
        data_dir: Path, tmp_path: Path, tgn_calibrator: Path, capsys, duration, why):
    """The three queries of video JVLAZ, on the file's one line, rejected by the stage
    (no duration known; a duration whose signal from proposals would be too long): each
    row is written with its own record and reason, and the summary counts every input
    row. (One of the three was written and two were lost; a too-long signal stopped the
    whole run under --on-error reject.)"""
    videos = _videos(data_dir, tmp_path, "JVLAZ", duration)
    src, out = _first_rows(data_dir, tmp_path, 200), tmp_path / "r.jsonl"
    capsys.readouterr()
    assert main(["certify", "--calibrator", str(tgn_calibrator), "--preds", str(src),
                 "--videos", str(videos), "--on-error", "reject", "-o", str(out)]) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 200  # every query of the file
    mine = {r["qid"]: r for r in rows if r["vid"] == "JVLAZ"}
    assert sorted(mine) == ["JVLAZ-0", "JVLAZ-1", "JVLAZ-2"]
    for qid, r in mine.items():
        assert r["cover"]["status"] == "rejected" and why in r["cover"]["reason"], qid
        assert r["value"], qid  # its own record: its proposals echoed
    assert len({json.dumps(r["value"]) for r in mine.values()}) == 3
    assert Counter(r["cover"]["status"] for r in rows)["rejected"] >= 3
    assert "of 200 input rows (read whole)" in capsys.readouterr().out


def test_rows_of_one_line_rejected_by_the_reader_are_each_written(
        data_dir: Path, tmp_path: Path, tgn_calibrator: Path, capsys):
    """Two rows of a one-line document the reader sets aside (a timestamp that is no
    number, one that is null): each is written with its own reason and its own record,
    as a kept row is (it was its qid alone: the reader kept one record a line)."""
    src, out = _first_rows(data_dir, tmp_path, 5), tmp_path / "r.jsonl"
    sub = json.loads(src.read_text())
    keys = list(sub["results"])
    sub["results"][keys[1]][0]["timestamp"] = [9.0, "x"]
    sub["results"][keys[3]][0]["timestamp"] = [None, 3]
    src.write_text(json.dumps(sub))
    assert main(["certify", "--calibrator", str(tgn_calibrator), "--preds", str(src),
                 "--videos", str(data_dir / VIDEOS), "--on-error", "reject",
                 "-o", str(out)]) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert sorted(r["qid"] for r in rows) == sorted(keys)
    why = {r["qid"]: r["cover"].get("reason") for r in rows
           if r["cover"]["status"] == "rejected"}
    assert why == {keys[1]: "windows and scores do not pair up (one score per window)",
                   keys[3]: "a predicted window's start or end is no finite number (empty, "
                            "null, NaN or inf)"}
    assert "rejected 2 of 5 input rows" in capsys.readouterr().out
    assert {tuple(sorted(k for k in r if k != "cover")) for r in rows} == {
        ("qid", "value", "vid")}
    for r in rows:
        assert r["vid"] == r["qid"].rsplit("-", 1)[0] and r["value"] == sub["results"][r["qid"]]


def test_a_too_long_signal_gets_one_fate_read_whole_or_streamed(data_dir: Path, tmp_path: Path,
                                                                capsys):
    """QD-DETR's ranked windows with their durations, one of them 1e9 s, certified by a
    calibrator reading relevance from proposals: as JSON lines (streamed) and as a JSON
    array (read whole) the row is rejected with the same reason and every other row has
    the same region (the whole read stopped the run, even under --on-error reject)."""
    qvh = data_dir / "qvhighlights"
    gt = qvh / "annotations/highlight_val_release.jsonl"
    truth = [json.loads(x) for x in gt.read_text().splitlines()[:120]]
    duration = {r["vid"]: r["duration"] for r in truth}
    rows = [json.loads(x) for x in
            (qvh / "qd_detr/video_checkpoint_best_hl_val_preds.jsonl").read_text().splitlines()
            if json.loads(x)["vid"] in duration]
    for r in rows:
        r["duration"] = duration[r["vid"]]
    cal, lines, array = tmp_path / "cal.json", tmp_path / "p.jsonl", tmp_path / "p.json"
    lines.write_text("".join(json.dumps(r) + "\n" for r in rows))
    small_gt = tmp_path / "gt.jsonl"
    small_gt.write_text("".join(json.dumps(r) + "\n" for r in truth))
    assert main(["calibrate", "--preds", str(lines), "--gt", str(small_gt), "--score", "sls",
                 "--relevance-from", "proposals", "-o", str(cal)]) == 0
    rows[5]["duration"] = 1e9
    lines.write_text("".join(json.dumps(r) + "\n" for r in rows))
    array.write_text(json.dumps(rows))
    fates = []
    for src in (lines, array):
        out = tmp_path / f"{src.suffix[1:]}.out.jsonl"
        assert main(["certify", "--calibrator", str(cal), "--preds", str(src),
                     "--on-error", "reject", "-o", str(out)]) == 0, src
        fates.append([(r["qid"], r["cover"]["status"], r["cover"].get("region"),
                       r["cover"].get("reason"))
                      for r in map(json.loads, out.read_text().splitlines())])
        assert main(["certify", "--calibrator", str(cal), "--preds", str(src),
                     "-o", str(tmp_path / "x.jsonl")]) == 2
        assert f"1 bad row(s) in {src}:\n  {src}:6 (qid={rows[5]['qid']}): a relevance " \
            "signal from proposals over its duration of 1e+09 s" in capsys.readouterr().err
    assert fates[0] == fates[1] and len(fates[0]) == len(rows)
    assert [f[1] for f in fates[0]].count("rejected") == 1


def test_uag_answers_take_each_clips_duration_from_the_ground_truth_as_videos(
        data_dir: Path, tmp_path: Path, capsys) -> None:
    """Video-LLaMA2's parsed UAG-OOPS answers name the source video of each clip, and
    the clips of one video differ in length: the ground truth given as --videos (no
    durations file) gives each row its query's, by qid, and the regions are those of the
    same rows carrying the clip length themselves, streamed or read whole. It was an
    error (not a durations file)."""
    answers = data_dir / ("oops_uag/hasnat79_uag/"
                          "video_llama2_pred_uag_oops_dataset_v1_null_fixed.json")
    gt = data_dir / "oops_uag/annotations/uag_oops_dataset_v1_start_time_fixed.json"
    bare, timed = tmp_path / "bare.jsonl", tmp_path / "timed.jsonl"
    assert main(["parse-answers", str(answers), "-o", str(bare)]) == 0
    length = {q: a["end_time"] for q, a in json.loads(gt.read_text()).items()}  # the clip's
    rows = [json.loads(x) for x in bare.read_text().splitlines()]
    timed.write_text("".join(json.dumps({**r, "duration": length[r["qid"]]}) + "\n"
                             for r in rows))
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(timed), "--gt", str(gt), "--on-error",
                 "reject", "-o", str(cal)]) == 0
    capsys.readouterr()
    fates = {}
    for name, preds, flags in [("timed", timed, []),
                               ("bare", bare, ["--videos", str(gt)]),
                               ("bare whole", bare, ["--videos", str(gt), "--in-memory"])]:
        out = tmp_path / f"{name.replace(' ', '_')}.out.jsonl"
        assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), *flags,
                     "--on-error", "reject", "-o", str(out)]) == 0, name
        said = capsys.readouterr()
        if flags:
            assert (f"{bare}: --videos is a ground truth whose clips of one video differ in "
                    f"length; each row's duration is its query's in {gt} (uag-oops, by "
                    "qid)") in said.err
        got = [json.loads(x) for x in out.read_text().splitlines()]
        fates[name] = [(r["qid"], r["cover"]["status"], r["cover"].get("region"),
                        r["cover"].get("duration"), r["cover"].get("reason")) for r in got]
    assert fates["bare"] == fates["timed"] == fates["bare whole"]
    counts = Counter(f[1] for f in fates["bare"])
    assert sum(counts.values()) == 1589 and counts["certified"] > 1000, counts
    # parse-answers reads --videos as certify does: the clip's length, as its own field
    by_gt, by_field = tmp_path / "by_gt.jsonl", tmp_path / "by_field.jsonl"
    assert main(["parse-answers", str(answers), "--videos", str(gt), "-o", str(by_gt)]) == 0
    assert main(["parse-answers", str(answers), "--duration-field", "end_time", "-o",
                 str(by_field)]) == 0
    assert by_gt.read_bytes() == by_field.read_bytes()
    assert "each row's duration is its query's in" in capsys.readouterr().err
    # the clips of one source video keep their own lengths
    by_vid = Counter(r["vid"] for r in rows)
    assert max(by_vid.values()) > 1
    assert len({f[3] for f in fates["bare"]}) > len(by_vid)


def test_a_ground_truth_whose_videos_have_one_length_gives_durations_by_video(
        data_dir: Path, tmp_path: Path, capsys) -> None:
    """Charades-STA's text ground truth (its durations from charades.json beside it) as
    --videos: each of its videos has one length, so rows look theirs up by vid, as in
    charades.json itself (LA-DETR's qids are not the text file's). It was an error (not
    a durations file)."""
    preds = data_dir / "charades_sta/la_detr/hl_test_submission.jsonl"
    text = data_dir / GT
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(text), "-o", str(cal)]) == 0
    outs = []
    for videos in (text, data_dir / VIDEOS):
        out = tmp_path / f"{videos.stem}.out.jsonl"
        assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--videos",
                     str(videos), "-o", str(out)]) == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    assert (f"{preds}: each row's duration is its video's in the ground truth {text} "
            "(charades-sta, by vid)") in capsys.readouterr().err
