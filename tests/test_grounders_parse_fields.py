"""Which field holds the answer text, and each row's vid (cover.grounders.parse.fields)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cover.errors import InputError
from cover.grounders.parse.fields import answer_like, text_fields_per_file
from cover.grounders.parse.files import parse_answer_file

UAG = "oops_uag/hasnat79_uag/"


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(("value", "like"), [
    ("The moment happens from 0:05 to 0:09.", True),
    ("I'm sorry, but I cannot help with that.", True),  # a refusal is an answer too
    ("a person opens a door.", False),  # a query: no time in it
    ("00:00:04", False),  # an already-parsed time, not free text
    ("/data/videos/clip 12.mp4", False),  # a path
    (None, False), (12, False),
])
def test_answer_like(value: object, like: bool) -> None:
    assert answer_like(value) is like


def test_the_answer_field_is_detected_from_the_text_fields(tmp_path: Path) -> None:
    rows = [{"qid": i, "vid": f"v{i}", "duration": 30, "query": f"a man jumps {i} times",
             "video": f"/d/v{i}.mp4", "pred_start": "00:00:01",
             "timechat_generation": f"The event happens at {i} - {i + 3} seconds."}
            for i in range(4)]
    rows[0]["query"] = "person opens a door"
    pf = parse_answer_file(_write(tmp_path / "a.jsonl", rows))
    assert pf.text_field == "timechat_generation"
    assert pf.text_how.startswith("detected: 100% of rows read like answers")
    assert pf.rows[2]["pred_relevant_windows"] == [[2.0, 5.0, 1.0]]
    # timestamped captions read like answers too: the usual answer name wins the tie
    for r in rows:
        r["captions"] = "0.0s: a man walks.\n1.0s: he falls."
    assert parse_answer_file(_write(tmp_path / "b.jsonl", rows)).text_field == \
        "timechat_generation"
    # given: used as is, and said
    pf = parse_answer_file(tmp_path / "b.jsonl", text_field="captions")
    assert (pf.text_field, pf.text_how) == ("captions", "given by --text-field")


def test_no_text_field_is_an_error_naming_the_flag(tmp_path: Path) -> None:
    src = _write(tmp_path / "a.jsonl", [{"qid": 1, "vid": "DOYQE.mp4", "timestamp": []}])
    with pytest.raises(InputError, match="cannot tell which field holds the answer text "
                       r"\(fields: qid, timestamp, vid\); pass --text-field"):
        parse_answer_file(src)


def test_text_fields_per_file() -> None:
    files = ["d/a.json", "d/b.json", "c.json"]
    assert text_fields_per_file([], files) == [None, None, None]
    assert text_fields_per_file(["x"], files) == ["x", "x", "x"]
    assert text_fields_per_file(["x", "y", "z"], files) == ["x", "y", "z"]
    assert text_fields_per_file(["b.json=y", "x"], files) == ["x", "y", "x"]
    assert text_fields_per_file(["d/a.json=y"], files) == ["y", None, None]
    with pytest.raises(InputError, match="--text-field is given 2 times for 3 answer files"):
        text_fields_per_file(["x", "y"], files)
    with pytest.raises(InputError, match=r"--text-field e\.json=y: e\.json is not one of "
                       "the answer files"):
        text_fields_per_file(["e.json=y"], files)


def test_vid_rules(tmp_path: Path) -> None:
    rows = [{"qid": f"vidA_{i}", "answer": f"from {i} to {i + 1} s", "video": "A"}
            for i in range(3)]
    src = _write(tmp_path / "a.jsonl", rows)
    pf = parse_answer_file(src)  # no vid anywhere: the qid, counted
    assert [r["vid"] for r in pf.rows] == ["vidA_0", "vidA_1", "vidA_2"]
    assert pf.vid_missing == 3 and pf.vid_rule == "the qid (no row has a vid field)"
    pf = parse_answer_file(src, vid_field="video")
    assert {r["vid"] for r in pf.rows} == {"A"} and pf.vid_missing == 0
    pf = parse_answer_file(src, vid_pattern=r"^(?P<vid>.+)_\d+$")
    assert {r["vid"] for r in pf.rows} == {"vidA"} and pf.vid_missing == 0
    with pytest.raises(InputError, match="matches no qid"):
        parse_answer_file(src, vid_pattern=r"^zzz")
    with pytest.raises(InputError, match="no row has the field 'clip' given by --vid-field"):
        parse_answer_file(src, vid_field="clip")


def test_uag_layout_without_video_path_takes_the_source_compilation(
        data_dir: Path, tmp_path: Path) -> None:
    path = data_dir / UAG / "videochat2_pred_uag_oops_dataset_v1_null_fixed.json"
    if not path.is_file():
        pytest.skip("UAG-OOPS answers not staged")
    doc = json.loads(path.read_text())
    for entry in doc.values():
        del entry["video_path"]
    (tmp_path / "no_path.json").write_text(json.dumps(doc))
    with_path = parse_answer_file(path, duration_field="end_time")
    without = parse_answer_file(tmp_path / "no_path.json", duration_field="end_time")
    # the vid was the clip name (every later join rejected all rows); now the compilation
    assert [r["vid"] for r in without.rows] == [r["vid"] for r in with_path.rows]
    assert without.rows[0]["vid"] == "34 Funny Kid Nominees - FailArmy Hall Of Fame (May 2017)"
    assert without.vid_missing == 0 and "UAG-OOPS layout" in without.vid_rule
    assert np.unique([r["vid"] for r in without.rows]).size == 93


def test_a_keyed_file_keeps_its_own_vid(tmp_path: Path) -> None:
    src = tmp_path / "keyed.json"
    src.write_text(json.dumps({"3187": {"vid": "DOYQE.mp4", "query": "person drinks",
                                        "answer": "It happens at 2 - 5 seconds."}}))
    pf = parse_answer_file(src)
    assert (pf.rows[0]["qid"], pf.rows[0]["vid"], pf.vid_missing) == ("3187", "DOYQE.mp4", 0)
