"""Reading QVHighlights / Moment-DETR prediction and ground-truth files.

Every bad row must give an error that names the file, the line and (when it can be
read) the qid, and nothing may be lost: each non-blank input line ends up either as
a kept row or as a rejected row with its reason.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cover.errors import InputError
from cover.io.qvhighlights import Loaded, read_durations, read_ground_truth, read_predictions

# ---------------------------------------------------------------------------------
# helpers


def write_lines(path: Path, lines: list[Any]) -> Path:
    """One line per item: dicts are dumped as JSON (NaN/Infinity literals allowed),
    strings are written verbatim."""
    out = []
    for item in lines:
        out.append(item if isinstance(item, str) else json.dumps(item))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def pred(qid: Any, vid: str = "vidA_0.0_150.0", windows: Any = None, **extra: Any) -> dict:
    row: dict[str, Any] = {"qid": qid, "vid": vid}
    row["pred_relevant_windows"] = [[10.0, 20.0, 0.9]] if windows is None else windows
    row.update(extra)
    return row


def gt(qid: Any, vid: str = "vidA_0.0_150.0", windows: Any = None, duration: Any = 150,
       **extra: Any) -> dict:
    row: dict[str, Any] = {"qid": qid, "vid": vid, "duration": duration}
    row["relevant_windows"] = [[10, 30]] if windows is None else windows
    row.update(extra)
    return row


def nonblank_lines(path: Path) -> list[int]:
    text = path.read_text(encoding="utf-8")
    return [i for i, line in enumerate(text.splitlines(), start=1) if line.strip()]


def assert_accounted(loaded: Loaded, path: Path) -> None:
    """Every non-blank line is either kept or rejected (with a reason), never both."""
    lines = nonblank_lines(path)
    kept = [int(x) for x in loaded.table.line.tolist()]
    rejected = sorted(line for line, _ in loaded.rejected)  # keyed by (line, qid)
    assert len(kept) + len(rejected) == len(lines), (kept, rejected, lines)
    assert sorted(kept + rejected) == lines
    rejected_problems = [p for p in loaded.problems if p.action == "rejected"]
    assert sorted(p.line for p in rejected_problems) == rejected
    for p in rejected_problems:
        assert p.path == str(path)
        assert p.problem.strip(), "a rejection must give its reason"


def only_problem(loaded: Loaded) -> Any:
    rej = [p for p in loaded.problems if p.action == "rejected"]
    assert len(rej) == 1, rej
    return rej[0]


def assert_names(exc: BaseException, path: Path, line: int, qid: Any) -> None:
    msg = str(exc)
    assert str(path) in msg, msg
    assert f"{path}:{line}" in msg, msg
    assert f"qid={qid}" in msg, msg


# ---------------------------------------------------------------------------------
# well-formed input


def test_reads_rows_with_lines_and_qids_as_text(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "p.jsonl", [
        pred(1, windows=[[1, 5, 0.3]], duration=150, pred_saliency_scores=[0.1, 0.2, 0.3]),
        "",
        pred("two", vid="vidB_150.0_300.0", windows=[[2, 8, 0.4]]),
    ])
    loaded = read_predictions(p)
    t = loaded.table
    assert t.qid.tolist() == ["1", "two"]
    assert t.vid.tolist() == ["vidA_0.0_150.0", "vidB_150.0_300.0"]
    assert t.line.tolist() == [1, 3]  # the blank line still counts
    assert t.source == str(p)
    assert t.duration[0] == 150.0 and math.isnan(t.duration[1])
    assert t.relevance.lengths.tolist() == [3, 0]
    assert loaded.problems == [] and loaded.rejected == {}
    assert_accounted(loaded, p)


def test_top1_is_highest_scoring_window_not_first(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "p.jsonl", [
        pred(1, windows=[[0, 10, 0.2], [20, 30, 0.9], [40, 50, 0.5]]),
        pred(2, windows=[[60, 70, 0.1], [5, 15, 0.3]]),
        pred(3, windows=[[1, 2, 0.95]]),
    ])
    t = read_predictions(p).table
    assert t.pred_start.tolist() == [20.0, 5.0, 1.0]
    assert t.pred_end.tolist() == [30.0, 15.0, 2.0]


def test_top1_tie_keeps_the_earlier_window(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "p.jsonl", [
        pred(1, windows=[[0, 10, 0.1], [20, 30, 0.5], [40, 50, 0.5]]),
    ])
    t = read_predictions(p).table
    assert (t.pred_start[0], t.pred_end[0]) == (20.0, 30.0)


def test_windows_without_scores_first_is_top1(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "p.jsonl", [
        pred(1, windows=[[40, 50], [0, 10], [20, 30]]),
        pred(2, windows=[[7, 9]]),
    ])
    t = read_predictions(p).table
    assert t.pred_start.tolist() == [40.0, 7.0]
    assert t.pred_end.tolist() == [50.0, 9.0]


def test_empty_windows_is_a_refusal_not_an_error(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "p.jsonl", [
        pred(1, windows=[]),
        pred(2, windows=[], pred_saliency_scores=[0.5, 0.1]),
        pred(3, windows=[[1, 2, 0.5]]),
    ])
    loaded = read_predictions(p)  # on_error="raise": must not raise
    t = loaded.table
    assert t.has_interval.tolist() == [False, False, True]
    assert t.has_relevance.tolist() == [False, True, False]
    assert loaded.problems == []
    assert_accounted(loaded, p)


def test_saliency_only_row_is_kept_as_interval_refusal(tmp_path: Path) -> None:
    row = {"qid": 1, "vid": "v", "pred_saliency_scores": [0.1, 0.9]}
    p = write_lines(tmp_path / "p.jsonl", [row])
    t = read_predictions(p).table
    assert t.has_interval.tolist() == [False]
    assert t.relevance.lengths.tolist() == [2]


def test_crlf_line_endings(tmp_path: Path) -> None:
    p = tmp_path / "p.jsonl"
    p.write_bytes((json.dumps(pred(1)) + "\r\n" + json.dumps(pred(2)) + "\r\n").encode())
    loaded = read_predictions(p)
    assert loaded.table.qid.tolist() == ["1", "2"]
    assert loaded.table.line.tolist() == [1, 2]


# ---------------------------------------------------------------------------------
# empty / odd files


@pytest.mark.parametrize("reader", [read_predictions, read_ground_truth])
@pytest.mark.parametrize("content", ["", "   \n\n\t \n"], ids=["empty", "whitespace"])
def test_empty_file_is_an_error_naming_the_file(tmp_path: Path, reader: Any,
                                                content: str) -> None:
    p = tmp_path / "empty.jsonl"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match="empty") as ei:
        reader(p, on_error="reject")
    assert str(p) in str(ei.value)


@pytest.mark.parametrize("reader", [read_predictions, read_ground_truth])
def test_missing_file_is_an_input_error(tmp_path: Path, reader: Any) -> None:
    p = tmp_path / "nope.jsonl"
    with pytest.raises(InputError) as ei:
        reader(p)
    assert str(p) in str(ei.value)


def test_json_array_file_is_read(tmp_path: Path) -> None:
    p = tmp_path / "p.json"
    p.write_text(json.dumps([pred(1, windows=[[0, 5, 0.1], [10, 20, 0.7]]), pred(2)], indent=2),
                 encoding="utf-8")
    loaded = read_predictions(p)
    t = loaded.table
    assert t.qid.tolist() == ["1", "2"]
    assert t.pred_start.tolist() == [10.0, 10.0]
    assert loaded.problems == []


def test_json_array_non_object_entry_is_rejected(tmp_path: Path) -> None:
    p = tmp_path / "p.json"
    p.write_text(json.dumps([pred(1), [1, 2], pred(3)]), encoding="utf-8")
    with pytest.raises(InputError) as ei:
        read_predictions(p)
    assert str(p) in str(ei.value)
    loaded = read_predictions(p, on_error="reject")
    assert loaded.table.qid.tolist() == ["1", "3"]
    assert loaded.n_rejected == 1
    assert len(loaded.table) + loaded.n_rejected == 3


def test_malformed_json_array_is_an_input_error(tmp_path: Path) -> None:
    p = tmp_path / "p.json"
    p.write_text('[{"qid": 1, "vid": "v", "pred_relevant_windows": []},\n{"qid": 2,', "utf-8")
    with pytest.raises(InputError) as ei:
        read_predictions(p, on_error="reject")
    assert str(p) in str(ei.value)


# ---------------------------------------------------------------------------------
# row-level problems in prediction files


def test_malformed_json_line_names_file_line_and_qid(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "p.jsonl", [
        pred(1),
        '{"qid": 77, "vid": "v", "pred_relevant_windows": [[1, 2, 0.5]',
        pred(3),
    ])
    with pytest.raises(InputError) as ei:
        read_predictions(p)
    assert_names(ei.value, p, 2, 77)
    assert "malformed JSON" in str(ei.value)

    loaded = read_predictions(p, on_error="reject")
    assert loaded.table.qid.tolist() == ["1", "3"]
    prob = only_problem(loaded)
    assert (prob.line, prob.qid) == (2, "77")
    assert loaded.rejected[2, "77"].startswith('{"qid": 77')  # the raw text is echoed back
    assert_accounted(loaded, p)


def test_malformed_json_without_readable_qid_still_names_the_line(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "p.jsonl", [pred(1), "this is not json at all"])
    with pytest.raises(InputError) as ei:
        read_predictions(p)
    assert f"{p}:2" in str(ei.value)
    loaded = read_predictions(p, on_error="reject")
    assert only_problem(loaded).qid is None
    assert_accounted(loaded, p)


@pytest.mark.parametrize("line", ["[1, 2]", "42", '"a string"', "null", "true"])
def test_json_but_not_an_object_is_rejected(tmp_path: Path, line: str) -> None:
    p = write_lines(tmp_path / "p.jsonl", [pred(1), line, pred(3)])
    with pytest.raises(InputError) as ei:
        read_predictions(p)
    assert f"{p}:2" in str(ei.value)
    loaded = read_predictions(p, on_error="reject")
    assert loaded.table.qid.tolist() == ["1", "3"]
    assert "object" in only_problem(loaded).problem
    assert_accounted(loaded, p)


def test_first_line_json_array_in_jsonl_rejects_only_that_line(tmp_path: Path) -> None:
    """A JSON-lines file whose *first* line is a JSON array (not an object) must not
    be mistaken for a whole-file JSON array: only line 1 is bad."""
    p = write_lines(tmp_path / "p.jsonl", ["[1, 2]", pred(2), pred(3)])
    loaded = read_predictions(p, on_error="reject")
    assert loaded.table.qid.tolist() == ["2", "3"]
    assert only_problem(loaded).line == 1
    assert_accounted(loaded, p)


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"vid": "v", "pred_relevant_windows": [[1, 2, 0.1]]}, "qid"),
        ({"qid": 5, "pred_relevant_windows": [[1, 2, 0.1]]}, "vid"),
        ({"qid": 5, "vid": None, "pred_relevant_windows": [[1, 2, 0.1]]}, "vid"),
        ({"qid": 5, "vid": "v"}, "pred_relevant_windows"),
    ],
    ids=["qid", "vid", "vid-null", "windows"],
)
def test_missing_prediction_field_is_rejected_naming_it(tmp_path: Path, row: dict,
                                                        field: str) -> None:
    p = write_lines(tmp_path / "p.jsonl", [pred(1), row, pred(3)])
    with pytest.raises(InputError) as ei:
        read_predictions(p)
    assert f"{p}:2" in str(ei.value)
    assert field in str(ei.value)
    if "qid" in row:
        assert f"qid={row['qid']}" in str(ei.value)
    loaded = read_predictions(p, on_error="reject")
    assert loaded.table.qid.tolist() == ["1", "3"]
    prob = only_problem(loaded)
    assert prob.line == 2 and field in prob.problem
    assert loaded.rejected[prob.key] == row
    assert_accounted(loaded, p)


def test_duplicate_qid_names_the_first_line(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "p.jsonl", [
        pred(1), pred(7, windows=[[0, 1, 0.2]]), pred(3), pred(7, windows=[[5, 6, 0.9]]),
        pred("7"),
    ])
    with pytest.raises(InputError) as ei:
        read_predictions(p)
    assert_names(ei.value, p, 4, 7)
    assert "line 2" in str(ei.value)

    loaded = read_predictions(p, on_error="reject")
    t = loaded.table
    assert t.qid.tolist() == ["1", "7", "3"]
    assert t.pred_start[1] == 0.0  # the first occurrence is kept
    rej = [q for q in loaded.problems if q.action == "rejected"]
    assert [q.line for q in rej] == [4, 5]
    assert all("duplicate" in q.problem and "line 2" in q.problem for q in rej)
    assert_accounted(loaded, p)


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"pred_relevant_windows": [[1.0, float("nan"), 0.5]]}, "non-finite"),
        ({"pred_relevant_windows": [[1.0, 2.0, float("inf")]]}, "non-finite"),
        ({"pred_relevant_windows": [[float("-inf"), 2.0, 0.5]]}, "non-finite"),
        ({"pred_relevant_windows": [[0, 1, 0.9], [1.0, 2.0, float("nan")]]}, "non-finite"),
        ({"pred_saliency_scores": [0.1, float("nan")]}, "non-finite"),
        ({"pred_saliency_scores": [float("inf")]}, "non-finite"),
        ({"duration": float("inf")}, "duration"),
        ({"duration": float("nan")}, "duration"),
        ({"duration": -3}, "duration"),
        ({"duration": 0}, "duration"),
        ({"duration": "150"}, "duration"),
        ({"start_std": float("nan"), "end_std": 1.0}, "start_std"),
        ({"start_std": -1.0, "end_std": 1.0}, "start_std"),
        ({"start_std": 1.0, "end_std": float("inf")}, "end_std"),
    ],
    ids=["nan-end", "inf-score", "-inf-start", "nan-in-second-window", "nan-saliency",
         "inf-saliency", "inf-duration", "nan-duration", "negative-duration", "zero-duration",
         "string-duration", "nan-start_std", "negative-start_std", "inf-end_std"],
)
def test_bad_numbers_in_predictions_are_rejected(tmp_path: Path, extra: dict,
                                                 words: str) -> None:
    bad = pred(9, **extra)
    p = write_lines(tmp_path / "p.jsonl", [pred(1), bad])
    with pytest.raises(InputError) as ei:
        read_predictions(p)
    assert_names(ei.value, p, 2, 9)
    loaded = read_predictions(p, on_error="reject")
    assert loaded.table.qid.tolist() == ["1"]
    prob = only_problem(loaded)
    assert (prob.line, prob.qid) == (2, "9")
    assert words in prob.problem
    assert_accounted(loaded, p)


@pytest.mark.parametrize("windows", [[[20, 10, 0.9]], [[0, 5, 0.9], [30, 29, 0.1]]],
                         ids=["top1", "lower-ranked"])
def test_predicted_window_with_start_after_end_is_rejected(tmp_path: Path,
                                                           windows: list) -> None:
    p = write_lines(tmp_path / "p.jsonl", [pred(1), pred(2, windows=windows)])
    with pytest.raises(InputError) as ei:
        read_predictions(p)
    assert_names(ei.value, p, 2, 2)
    assert "start > end" in str(ei.value)
    loaded = read_predictions(p, on_error="reject")
    assert loaded.table.qid.tolist() == ["1"]
    assert_accounted(loaded, p)


@pytest.mark.parametrize("windows", [[[1, 2, 3, 4]], [1, 2], "abc", [["a", "b"]], [[1, 2], [3]]],
                         ids=["four-columns", "flat", "text", "text-pairs", "ragged"])
def test_badly_shaped_windows_are_rejected(tmp_path: Path, windows: Any) -> None:
    p = write_lines(tmp_path / "p.jsonl", [pred(1), pred(2, windows=windows)])
    with pytest.raises(InputError) as ei:
        read_predictions(p)
    assert_names(ei.value, p, 2, 2)
    loaded = read_predictions(p, on_error="reject")
    assert loaded.table.qid.tolist() == ["1"]
    assert "pred_relevant_windows" in only_problem(loaded).problem
    assert_accounted(loaded, p)


def test_windows_outside_video_are_kept_by_the_reader(tmp_path: Path) -> None:
    """The reader does not know T for sure; clipping happens when T is attached."""
    p = write_lines(tmp_path / "p.jsonl", [pred(1, windows=[[-5, 160, 0.9]], duration=150)])
    loaded = read_predictions(p)
    assert loaded.problems == []
    assert (loaded.table.pred_start[0], loaded.table.pred_end[0]) == (-5.0, 160.0)


def test_many_problems_one_file_every_line_accounted(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "p.jsonl", [
        pred(1),                                          # ok
        "{broken",                                        # malformed
        "",                                               # blank: not a row
        "[3]",                                            # not an object
        {"vid": "v", "pred_relevant_windows": []},        # no qid
        pred(1),                                          # duplicate of line 1
        pred(6, windows=[[5, 1, 0.2]]),                   # s > e
        pred(7, windows=[[1, 2, float("nan")]]),          # NaN
        pred(8, windows=[]),                              # refusal: kept
        pred(9, duration=float("inf")),                   # inf duration
        pred(10, windows=[[0, 3], [4, 5]]),               # ok (no scores)
        "   ",                                            # blank
    ])
    with pytest.raises(InputError) as ei:
        read_predictions(p)
    msg = str(ei.value)
    assert "7 bad row(s)" in msg
    assert f"{p}:2" in msg and "on_error='reject'" in msg

    loaded = read_predictions(p, on_error="reject")
    assert loaded.table.qid.tolist() == ["1", "8", "10"]
    assert loaded.table.line.tolist() == [1, 9, 11]
    assert sorted(line for line, _ in loaded.rejected) == [2, 4, 5, 6, 7, 8, 10]
    assert_accounted(loaded, p)


def test_rejected_rows_keep_the_original_record(tmp_path: Path) -> None:
    bad = pred(2, windows=[[3, 1, 0.5]], query="a query", extra_field=[1, 2])
    p = write_lines(tmp_path / "p.jsonl", [pred(1), bad])
    loaded = read_predictions(p, on_error="reject")
    assert loaded.rejected == {(2, "2"): bad}
    assert list(loaded.table.records) == [pred(1)]


# ---------------------------------------------------------------------------------
# ground truth


def test_ground_truth_reads_multi_window_truth(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "g.jsonl", [
        gt(1, windows=[[0, 10], [20, 30]], query="q1"),
        gt("x", vid="w_0_150", windows=[[4, 6]], duration=126.5),
    ])
    loaded = read_ground_truth(p)
    t = loaded.table
    assert t.qid.tolist() == ["1", "x"]
    assert t.duration.tolist() == [150.0, 126.5]
    assert t.truth is not None
    assert t.truth.to_lists() == [[[0.0, 10.0], [20.0, 30.0]], [[4.0, 6.0]]]
    assert t.line.tolist() == [1, 2]
    assert not t.has_interval.any()
    assert_accounted(loaded, p)


@pytest.mark.parametrize("drop", ["qid", "vid", "duration", "relevant_windows"])
def test_ground_truth_missing_field_is_rejected(tmp_path: Path, drop: str) -> None:
    bad = gt(5)
    del bad[drop]
    p = write_lines(tmp_path / "g.jsonl", [gt(1), bad, gt(3)])
    with pytest.raises(InputError) as ei:
        read_ground_truth(p)
    assert f"{p}:2" in str(ei.value) and drop in str(ei.value)
    if drop != "qid":
        assert "qid=5" in str(ei.value)
    loaded = read_ground_truth(p, on_error="reject")
    assert loaded.table.qid.tolist() == ["1", "3"]
    assert drop in only_problem(loaded).problem
    assert_accounted(loaded, p)


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        (gt(5, windows=[]), "empty"),
        (gt(5, windows=[[30, 10]]), "start > end"),
        (gt(5, windows=[[0, 10], [30, 10]]), "start > end"),
        (gt(5, windows=[[0, float("nan")]]), "non-finite"),
        (gt(5, windows=[[float("-inf"), 3]]), "non-finite"),
        (gt(5, duration=float("nan")), "duration"),
        (gt(5, duration=float("inf")), "duration"),
        (gt(5, duration=0), "duration"),
        (gt(5, duration="long"), "duration"),
        (gt(5, windows=[[1, 2, 3]]), "relevant_windows"),
    ],
    ids=["no-window", "s>e", "s>e-second", "nan", "-inf", "nan-duration", "inf-duration",
         "zero-duration", "text-duration", "three-columns"],
)
def test_ground_truth_bad_values_are_rejected(tmp_path: Path, bad: dict, words: str) -> None:
    p = write_lines(tmp_path / "g.jsonl", [gt(1), bad])
    with pytest.raises(InputError) as ei:
        read_ground_truth(p)
    assert_names(ei.value, p, 2, 5)
    loaded = read_ground_truth(p, on_error="reject")
    assert loaded.table.qid.tolist() == ["1"]
    assert words in only_problem(loaded).problem
    assert_accounted(loaded, p)


def test_ground_truth_duplicate_qid(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "g.jsonl", [gt(4), gt(2), gt(4, windows=[[1, 2]])])
    with pytest.raises(InputError) as ei:
        read_ground_truth(p)
    assert_names(ei.value, p, 3, 4)
    assert "line 1" in str(ei.value)
    loaded = read_ground_truth(p, on_error="reject")
    assert loaded.table.truth is not None
    assert loaded.table.truth.to_lists() == [[[10.0, 30.0]], [[10.0, 30.0]]]
    assert_accounted(loaded, p)


def test_ground_truth_window_outside_video_is_kept_by_the_reader(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "g.jsonl", [gt(1, windows=[[140, 160]], duration=150)])
    loaded = read_ground_truth(p)
    assert loaded.problems == []
    assert loaded.table.truth is not None
    assert loaded.table.truth.to_lists() == [[[140.0, 160.0]]]


# ---------------------------------------------------------------------------------
# durations (QVHighlights' unlabelled release files)


def test_read_durations_from_release_file(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "highlight_test_release.jsonl", [
        {"qid": 3158, "query": "hill and water", "duration": 150, "vid": "_6hnl_BrFvs_360.0_510.0"},
        {"qid": 3159, "query": "same video", "duration": 150, "vid": "_6hnl_BrFvs_360.0_510.0"},
        {"qid": 3160, "query": "short one", "duration": 126.0, "vid": "abc_0.0_126.0"},
        {"qid": 3161, "query": "no duration", "vid": "zzz_0.0_150.0"},
    ])
    vids, durs = read_durations(p)
    got = dict(zip(vids.tolist(), durs.tolist(), strict=True))
    assert got == {"_6hnl_BrFvs_360.0_510.0": 150.0, "abc_0.0_126.0": 126.0}


def test_read_durations_conflict_names_the_vid(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "d.jsonl", [
        {"vid": "a", "duration": 150}, {"vid": "b", "duration": 10}, {"vid": "a", "duration": 140},
    ])
    with pytest.raises(InputError) as ei:
        read_durations(p)
    assert str(p) in str(ei.value) and "a" in str(ei.value)


def test_read_durations_without_any_usable_row_is_an_error(tmp_path: Path) -> None:
    p = write_lines(tmp_path / "d.jsonl", [{"vid": "a"}, {"duration": 3}])
    with pytest.raises(InputError) as ei:
        read_durations(p)
    assert str(p) in str(ei.value)


def test_on_error_reject_returns_a_consistent_table(tmp_path: Path) -> None:
    """After rejections, every column still lines up with its row."""
    rows = []
    for q in range(20):
        if q % 3 == 0:
            rows.append(pred(q, windows=[[5, 1, 0.5]]))  # rejected
        else:
            rows.append(pred(q, vid=f"v{q}", windows=[[q, q + 1, 0.5]], duration=100 + q,
                             pred_saliency_scores=[float(q)] * (q % 4 + 1)))
    p = write_lines(tmp_path / "p.jsonl", rows)
    loaded = read_predictions(p, on_error="reject")
    t = loaded.table
    q = np.array([int(x) for x in t.qid])
    assert (q % 3 != 0).all()
    assert t.vid.tolist() == [f"v{x}" for x in q]
    assert t.pred_start.tolist() == q.astype(float).tolist()
    assert t.duration.tolist() == (100.0 + q).tolist()
    assert t.relevance.lengths.tolist() == (q % 4 + 1).tolist()
    assert t.line.tolist() == (q + 1).tolist()
    assert [r["qid"] for r in t.records] == q.tolist()
    assert_accounted(loaded, p)


@pytest.mark.parametrize("bad", [0, -3, float("inf"), float("nan")],
                         ids=["zero", "negative", "inf", "nan"])
def test_read_durations_returns_only_usable_durations(tmp_path: Path, bad: float) -> None:
    """A duration that is not a finite number > 0 cannot be a video length: it is
    either skipped or an error, never handed on as T."""
    p = write_lines(tmp_path / "d.jsonl", [{"vid": "good", "duration": 100},
                                           {"vid": "bad", "duration": bad}])
    try:
        vids, durs = read_durations(p)
    except InputError as exc:
        assert str(p) in str(exc)
        return
    assert np.isfinite(durs).all() and (durs > 0).all(), dict(zip(vids, durs, strict=True))
    assert "good" in vids.tolist()


def test_json_array_problem_names_the_line_of_the_entry(tmp_path: Path) -> None:
    """In an indented JSON array, the reported line must be inside the bad entry, so
    the user can open the file there (errors.py: 'open the file at that line')."""
    rows = [pred(1), pred(2, windows=[[9, 3, 0.5]]), pred(3)]
    p = tmp_path / "p.json"
    p.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    lines = p.read_text().splitlines()
    starts = [i for i, s in enumerate(lines, start=1) if s == "  {"]
    ends = [i for i, s in enumerate(lines, start=1) if s in ("  }", "  },")]
    span = range(starts[1], ends[1] + 1)  # the second entry
    loaded = read_predictions(p, on_error="reject")
    prob = only_problem(loaded)
    assert prob.qid == "2"
    assert prob.line in span, f"reported line {prob.line}, entry spans lines {list(span)}"


def test_a_row_rejected_for_its_saliency_takes_its_windows_with_it(tmp_path: Path) -> None:
    # The windows are read before the saliency: the later rows must keep their own.
    p = write_lines(tmp_path / "p.jsonl", [
        pred(1, windows=[[0.0, 1.0, 0.5]]),
        pred(2, windows=[[2.0, 3.0, 0.5]], pred_saliency_scores=[True]),
        pred(3, windows=[[4.0, 5.0, 0.5]]),
    ])
    loaded = read_predictions(p, on_error="reject")
    assert loaded.table.qid.tolist() == ["1", "3"]
    assert loaded.table.pred_start.tolist() == [0.0, 4.0]
    assert loaded.table.pred_end.tolist() == [1.0, 5.0]
    assert [p.line for p in loaded.problems] == [2]


def test_top1_of_rows_with_one_window_or_none_is_that_window() -> None:
    """Rows with at most one window need no ranking: the window (any score, NaN too) is
    the top one, a row without one gets NaN; as the ranked path for a two-window row."""
    from cover.io.qvhighlights import top1

    win = np.array([[1.0, 2.0, np.nan], [3.0, 4.0, 0.5], [5.0, 6.0, -1.0]])
    ps, pe = top1(win, np.array([0, 1, 1, 2, 3]))
    assert np.array_equal(ps, [1.0, np.nan, 3.0, 5.0], equal_nan=True)
    assert np.array_equal(pe, [2.0, np.nan, 4.0, 6.0], equal_nan=True)
    ps, pe = top1(win[1:], np.array([0, 2]))  # ranked: the higher score wins
    assert ps.tolist() == [3.0] and pe.tolist() == [4.0]


@pytest.mark.parametrize("value", [2**64, 10**400, -(10**400)])
def test_a_huge_integer_label_is_a_number_or_rejected_never_a_crash(value):
    """Python reads any integer exactly; one a float cannot hold (past ~1.8e308) is no
    score (or clip index) a label array can take: the row is rejected with the reason."""
    from cover.io.saliency_labels import label_columns, label_problems, saliency_labels

    rows = [{"relevant_clip_ids": [0, 1], "saliency_scores": [[1, 2, value], [0, 0, 0]]},
            {"relevant_clip_ids": [value], "saliency_scores": [[1, 2, 3]]}]
    problems = label_problems(*label_columns(rows)[:2])
    if abs(value) < 2**1023:
        assert 0 not in problems
        assert saliency_labels(*label_columns(rows[:1])).values[0, 3] == float(value)
    else:
        assert problems[0] == "saliency_scores must be a list of [3 numbers] per clip"
    assert (1 in problems) == (value < 0 or value > 2**1023)


def test_a_row_with_neither_windows_nor_saliency_is_rejected(tmp_path):
    """Either field makes a prediction row (saliency alone is a refusal); neither is a
    rejected row naming the missing field."""
    p = tmp_path / "p.jsonl"
    p.write_text('{"qid": 1, "vid": "a", "pred_relevant_windows": [[1, 2, 0.5]]}\n'
                 '{"qid": 2, "vid": "a", "duration": 150}\n'
                 '{"qid": 3, "vid": "a", "pred_saliency_scores": [1, 2]}\n')
    got = read_predictions(p, on_error="reject")
    assert got.table.qid.tolist() == ["1", "3"]
    assert [(x.line, x.qid, x.problem) for x in got.problems] == [
        (2, "2", "missing field: pred_relevant_windows (and no pred_saliency_scores)")]
    assert got.rejected == {(2, "2"): {"qid": 2, "vid": "a", "duration": 150}}
