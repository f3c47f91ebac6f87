"""Format detection: it names the format it chose, and a valid JSON file of another
shape is "unrecognised format" with the first row's keys, never "malformed JSON"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cover.cli import main
from cover.errors import InputError
from cover.io import formats, peek


def test_registry_names_are_unique_and_have_examples() -> None:
    names = [f.name for f in formats.FORMATS]
    assert len(names) == len(set(names))
    for f in formats.FORMATS:
        assert f.example and f.title
        if f.role == "ground_truth":
            assert f.unit, f.name


@pytest.mark.parametrize("content", [
    json.dumps({"results": {"r1": 0.5}, "config": {"model": "x"}}),
    "\n".join(json.dumps({"id": i, "answer": "3 - 5"}) for i in range(3)),
    json.dumps([{"video": "a", "span": [1, 2]}]),
])
def test_unrecognised_valid_json_shows_keys(tmp_path: Path, content: str) -> None:
    p = tmp_path / "x.json"
    p.write_text(content)
    with pytest.raises(InputError) as err:
        formats.detect(p, "predictions")
    msg = str(err.value)
    assert "unrecognised format: expected one of moment-detr, timechat-tvg" in msg
    assert "malformed" not in msg
    assert "keys" in msg


def test_truly_malformed_jsonl_still_names_the_line(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_text('{"qid": 1, "vid": "a", "pred_relevant_windows": [[1, 2, 0.5]]}\n{"qid": 2,\n')
    with pytest.raises(InputError, match=r"x.jsonl:2 \(qid=2\): malformed JSON"):
        formats.read(p, "predictions")


def test_ground_truth_given_as_predictions_is_named(tmp_path: Path) -> None:
    p = tmp_path / "gt.jsonl"
    p.write_text(json.dumps({"qid": 1, "vid": "a", "duration": 9, "relevant_windows": [[1, 2]]}))
    with pytest.raises(InputError, match=r"ground truth file \(moment-detr-gt\); give it as --gt"):
        formats.detect(p, "predictions")


def test_table_without_mapping_asks_for_columns(tmp_path: Path) -> None:
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="needs a column mapping"):
        formats.detect(p, "predictions")


def test_format_override_and_unknown_name(tmp_path: Path) -> None:
    p = tmp_path / "x.jsonl"
    p.write_text(json.dumps({"qid": 1, "vid": "a", "pred_relevant_windows": [[1, 2]]}))
    assert formats.read(p, "predictions", format="moment-detr").format == "moment-detr"
    with pytest.raises(InputError, match="unknown format 'nope'; expected one of"):
        formats.read(p, "predictions", format="nope")
    with pytest.raises(InputError, match="is a ground truth format"):
        formats.read(p, "predictions", format="tacos")


def test_cover_formats_lists_every_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["formats"]) == 0
    out = capsys.readouterr().out
    for f in formats.FORMATS:
        assert f.name in out and f.example in out
    assert "columns" in out and "split unit:" in out


def test_calibrate_names_formats_and_reads_charades_text(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "durs.json").write_text(json.dumps(
        {f"V{i}": {"duration": 30.0} for i in range(40)}))
    (tmp_path / "gt.txt").write_text("".join(f"V{i} {i % 10}.0 {i % 10 + 5}.0##query {i}.\n"
                                             for i in range(40)))
    preds = {str(i): {"timestamp": [[i % 10 + 0.5, i % 10 + 4.0]], "query": f"query {i}.",
                      "vid": f"V{i}.mp4"} for i in range(40)}
    (tmp_path / "p.json").write_text(json.dumps(preds))
    assert main(["calibrate", "--preds", str(tmp_path / "p.json"), "--gt",
                 str(tmp_path / "gt.txt"), "--gt-durations", str(tmp_path / "durs.json"),
                 "--alpha", "0.2", "-o", str(tmp_path / "cal.json")]) == 0
    err = capsys.readouterr().err
    assert "p.json: timechat-tvg (40 rows)" in err and "gt.txt: charades-sta (40 rows)" in err


def test_first_row_longer_than_the_sniffed_head(tmp_path: Path) -> None:
    def sample(i: int, caption: str) -> dict:
        return {"doc_id": i, "doc": {"video": "A.mp4", "caption": caption},
                "filtered_resps": ["1 - 2"]}

    p = tmp_path / "samples.jsonl"
    p.write_text(json.dumps(sample(0, "x" * (peek.HEAD_BYTES + 10))) + "\n"
                 + json.dumps(sample(1, "y")) + "\n")
    assert formats.detect(p, "predictions")[0].name == "lmms-eval-samples"


def test_cover_formats_names_the_format_of_files(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    pred = tmp_path / "p.jsonl"
    pred.write_text(json.dumps({"qid": 1, "vid": "a", "pred_relevant_windows": [[1, 2, 0.5]]}))
    other = tmp_path / "o.json"
    other.write_text(json.dumps({"results": {"r1": 0.5}}))
    # every file named, then exit 2 for the one that has no format (a script asking
    # whether its files read must not be told yes)
    assert main(["formats", str(pred), str(other)]) == 2
    out = capsys.readouterr().out
    assert f"{pred}: moment-detr (predictions)" in out
    assert f"{other}: error: " in out and "unrecognised format" in out
    assert main(["formats", str(pred)]) == 0
    assert main(["formats", "--explain", str(other), str(pred)]) == 2
    out = capsys.readouterr().out
    assert f"{other}:\n  no format fits: " in out and "detected: moment-detr (predictions)" in out
    assert main(["formats", "--explain", str(pred)]) == 0


def test_answer_files_are_pointed_to_parse_answers(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    rows = tmp_path / "answers.jsonl"
    rows.write_text("".join(json.dumps({"qid": i, "vid": "a", "query": "a man jumps 2 times",
                                        "timechat_generation": f"It happens at {i} - 5 s."})
                            + "\n" for i in range(3)))
    keyed = tmp_path / "keyed.json"
    keyed.write_text(json.dumps({"clip0": {"video_path": "/v/clip0.mp4", "description": "d",
                                           "text_rep": "0.0s: a man walks.",
                                           "model_pred": "The start time is 0:01."}}))
    for path, field in ((rows, "timechat_generation"), (keyed, "model_pred")):
        with pytest.raises(InputError) as err:
            formats.detect(path, "predictions")
        assert (f"(free-text answers in field {field!r}: `cover parse-answers {path}` turns "
                "them into a prediction file)") in str(err.value)
        assert main(["formats", str(path)]) == 2  # not a format
        assert capsys.readouterr().out == (
            f"{path}: free-text answers (field {field!r}), not a prediction file: read them "
            f"with `cover parse-answers {path}`\n")
    # windows, or no qid: not an answer file
    for row in ({"qid": 1, "answer": "at 1 - 2 s", "timestamp": [[1, 2]]},
                {"id": 1, "answer": "at 1 - 2 s"}):
        rows.write_text(json.dumps(row) + "\n")
        assert peek.peek(rows).answer_field() is None


_PRED = {"qid": 1, "vid": "v", "pred_relevant_windows": [[1.0, 5.0, 0.9]]}
_GT = {"qid": 1, "vid": "v", "duration": 30, "relevant_windows": [[1.0, 5.0]]}


@pytest.mark.parametrize("first", ["null", '"a string"', "# predictions of run 3", "[]"])
def test_detection_looks_past_a_first_line_that_is_not_a_row(tmp_path: Path, first: str
                                                              ) -> None:
    """The format comes from the first row; the odd first line is that line's own
    problem (rejected naming line 1 under on_error='reject'), not the file's."""
    p = tmp_path / "preds.jsonl"
    p.write_text("\n".join([first, json.dumps(_PRED), json.dumps(_PRED | {"qid": 2})]) + "\n")
    got = formats.read(p, "predictions", options=formats.Options(on_error="reject"))
    assert got.format == "moment-detr"
    assert got.loaded.table.qid.tolist() == ["1", "2"]
    assert [(x.line, x.action) for x in got.loaded.problems] == [(1, "rejected")]
    assert "'" not in got.loaded.problems[0].problem  # no Python repr
    with pytest.raises(InputError, match=r"preds.jsonl:1: "):
        formats.read(p, "predictions")


@pytest.mark.parametrize(("role", "row", "name"), [("predictions", _PRED, "moment-detr"),
                                                    ("ground_truth", _GT, "moment-detr-gt")])
def test_a_byte_order_mark_is_read_past(tmp_path: Path, role: str, row: dict, name: str
                                        ) -> None:
    p = tmp_path / "bom.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps(row).encode() + b"\n")
    got = formats.read(p, role)  # type: ignore[arg-type]
    assert got.format == name and got.loaded.table.qid.tolist() == ["1"]


@pytest.mark.parametrize(("spec", "why"), [
    ("qid=id,start=s", "give both start= and end=, or windows="),
    ("qid=id,start=s,end=e,end=x", "end= given twice (end=e and end=x)"),
    ("qid=id,start=s,end=e,colour=red", "unknown field(s) colour"),
    ("rows=*,qid=$key,windows=w,colour=red", "unknown field(s) colour"),
    ("rows=*,qid=$kex,windows=w", "qid=$kex: expected $key, $key1.., or $value"),
    ("rows=*,qid=$key,vid=v|<video>,windows=w", "vid=v|<video>: the pattern must have a "
                                                "<vid> part"),
])
@pytest.mark.parametrize(("role", "flag"), [("predictions", "--columns"),
                                            ("ground_truth", "--gt-columns")])
def test_a_bad_mapping_names_the_flag_it_came_from(tmp_path: Path, spec: str, why: str,
                                                   role: str, flag: str) -> None:
    """A ground-truth mapping's mistake names --gt-columns, a prediction mapping's
    --columns (every one said --columns)."""
    from cover.io.format_catalogue import Options

    path = tmp_path / "rows.csv"
    path.write_text("id,s,e,w\nq1,1,2,3\n")
    with pytest.raises(InputError) as err:
        formats.read(path, role, options=Options(columns=spec))  # type: ignore[arg-type]
    assert str(err.value).startswith(f"{flag}: {why}"), str(err.value)


@pytest.mark.parametrize("name", ["activitynet-captions", "charades-sta", "charades-rf",
                                  "lmms-eval-samples", "timechat-tvg", "uag-oops"])
def test_an_id_too_long_is_a_rejected_row_in_every_dataset_format(tmp_path: Path,
                                                                   name: str) -> None:
    """A video id of a million characters in a dataset file: its rows are rejected with
    the id's length, the other rows read (it made every row of the id column a million
    characters wide: 65 GB for ActivityNet's val_1, a MemoryError traceback)."""
    long = "W" * 1_000_000
    role = "predictions" if name in ("lmms-eval-samples", "timechat-tvg") else "ground_truth"
    path = tmp_path / ("g.txt" if name == "charades-sta" else "g.json")
    if name == "activitynet-captions":
        path.write_text(json.dumps({
            v: {"duration": 35.4, "timestamps": [[2.0, 9.0]], "sentences": ["x"]}
            for v in ("v_a", long)}))
    elif name == "charades-sta":
        path.write_text(f"3MSZA 0.0 6.9##x\n{long} 1.0 2.0##y\n")
    elif name == "charades-rf":
        path.write_text(json.dumps({v: {"duration": 30.9, "sts": [
            {"sentence": "x", "id": f"{v[:5]}-0", "timestamp": [2.3, 9.4],
             "no_answer": False}]} for v in ("3M", long)}))
    elif name == "timechat-tvg":
        path.write_text(json.dumps({f"{v}_1": {"timestamp": [[1, 2]], "query": "x",
                                               "vid": f"{v}.mp4"} for v in ("a", long)}))
    elif name == "uag-oops":
        path.write_text(json.dumps({v: {"video_path": f"x/{v}.mp4", "start_time": 1.5,
                                        "end_time": 7.0, "description": "y"}
                                    for v in ("Fails (May 2017)0", long)}))
    else:
        path.write_text("".join(json.dumps({
            "doc_id": i, "doc": {"video": f"{v}.mp4", "caption": "x", "timestamp": [1, 2]},
            "resps": [["It happens at 1 - 2 s."]]}) + "\n" for i, v in enumerate(("a", long))))
    durations = tmp_path / "charades.json"
    durations.write_text(json.dumps({"3MSZA": {"duration": 30.96}}))
    got = formats.read(path, role, format=name, options=formats.Options(
        on_error="reject", durations=durations)).loaded
    assert len(got.table) == 1
    why = [p.problem for p in got.problems if p.action == "rejected"]
    assert why and all(w.endswith("characters long; an id holds at most 1,024") for w in why)


def test_a_qid_list_line_too_long_for_an_id_is_an_error_naming_it(tmp_path: Path) -> None:
    from cover.io.qids import read_qid_lines

    path = tmp_path / "qids.txt"
    path.write_text("1\n" + "x" * 2000 + "\n3\n")
    with pytest.raises(InputError, match=r"qids.txt:2: qid is 2,000 characters long; an id "
                                         r"holds at most 1,024$"):
        read_qid_lines(path)
