"""One test per dataset/prediction format on a small file written here, plus malformed
input: every bad row is named by file, line and qid, and nothing is lost."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import example_dir
from cover.errors import InputError
from cover.io import formats
from cover.io.activitynet_captions import read_activitynet_captions
from cover.io.charades_cd import read_charades_cd
from cover.io.charades_rf import NO_MOMENT, no_moment_qids, read_charades_rf
from cover.io.charades_sta import read_charades_sta
from cover.io.jsonl_by_line import read_gt_by_line
from cover.io.lmms_eval import first_span, read_lmms_eval_samples, read_lmms_eval_submission
from cover.io.tacos import read_tacos
from cover.io.timechat import read_timechat_tvg, read_timechat_vhd, read_timeit_gt


def dump(path: Path, obj: Any, indent: int | None = None) -> Path:
    path.write_text(json.dumps(obj, indent=indent), encoding="utf-8")
    return path


def durations(tmp_path: Path) -> Path:
    return dump(tmp_path / "charades.json", {"AAA": {"subset": "testing", "duration": 30.0},
                                             "BBB": {"duration": 20.0}})


def rejected(loaded: Any) -> list[tuple[int, str | None, str]]:
    return [(p.line, p.qid, p.problem) for p in loaded.problems if p.action == "rejected"]


# ---- Charades-STA text -------------------------------------------------------------

def test_charades_sta_reads_lines_with_durations(tmp_path: Path) -> None:
    durations(tmp_path)
    txt = tmp_path / "charades_sta_test.txt"
    txt.write_text("AAA 1.5 4.0##person opens a door.\nBBB 0.0 25.0##a person sits.\n")
    t = read_charades_sta(txt).table
    assert t.qid.tolist() == ["0", "1"] and t.vid.tolist() == ["AAA", "BBB"]
    assert t.duration.tolist() == [30.0, 20.0]
    assert t.require_truth().to_lists() == [[[1.5, 4.0]], [[0.0, 25.0]]]  # clipped at join
    assert t.query.tolist() == ["person opens a door.", "a person sits."]
    assert read_charades_sta(txt, qid_offset=12404).table.qid.tolist() == ["12404", "12405"]


def test_charades_sta_malformed_lines_named(tmp_path: Path) -> None:
    durations(tmp_path)
    txt = tmp_path / "charades_sta_test.txt"
    txt.write_text("AAA 1.5 4.0##ok.\nAAA one 4.0##bad number.\nno separator here\n"
                   "ZZZ 1 2##unknown video.\nAAA 5 3##reversed.\n")
    got = read_charades_sta(txt, on_error="reject")
    assert len(got.table) == 1
    assert sorted(rejected(got)) == [
        (2, "1", "start and end must be numbers (seconds)"),
        (3, "2", "expected '<vid> <start> <end>##<sentence>'"),
        (4, "3", f"video ZZZ has no duration in {tmp_path / 'charades.json'}"),
        (5, "4", "a true window has start > end"),
    ]
    with pytest.raises(InputError, match=r"charades_sta_test.txt:2 \(qid=1\)"):
        read_charades_sta(txt)


def test_charades_sta_without_durations_says_what_to_pass(tmp_path: Path) -> None:
    txt = tmp_path / "x.txt"
    txt.write_text("AAA 1.5 4.0##ok.\n")
    with pytest.raises(InputError, match=r"--gt-durations charades\.json"):
        read_charades_sta(txt)


# ---- ActivityNet Captions / TACoS / Charades-CD ------------------------------------

def test_activitynet_captions(tmp_path: Path) -> None:
    p = dump(tmp_path / "val_1.json", {
        "v_a": {"duration": 50.0, "timestamps": [[0, 10], [5, 50.01]],
                "sentences": ["One.", "  Two."]},
        "v_b": {"duration": 20.0, "timestamps": [[8, 2]], "sentences": ["Reversed."]},
        "v_c": {"duration": 20.0, "timestamps": [[1, 2], [3, 4]], "sentences": ["Only one."]},
    }, indent=1)
    got = read_activitynet_captions(p, on_error="reject")
    assert got.table.qid.tolist() == ["v_a_0", "v_a_1"]
    assert got.table.query.tolist() == ["One.", "  Two."]
    lines = {q: ln for ln, q, _ in rejected(got)}
    assert set(lines) == {"v_b_0", "v_c_0", "v_c_1"}
    text = p.read_text().splitlines()
    assert '"v_b"' in text[lines["v_b_0"] - 1] and '"v_c"' in text[lines["v_c_0"] - 1]
    assert {w for _, _, w in rejected(got)} == {"a true window has start > end",
                                                "2 timestamps for 1 sentences"}


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 3), st.booleans()), min_size=1,
                max_size=12))
def test_caption_dict_accounts_for_every_sentence(tmp_path_factory: pytest.TempPathFactory,
                                                  videos: list[tuple[int, int, bool]]) -> None:
    """kept + rejected = every sentence; each rejection names its own qid."""
    doc = {}
    for v, (n, n_reversed, mismatch) in enumerate(videos):
        ts = [[float(i), float(i) + 2] for i in range(n)]
        for i in range(min(n_reversed, n)):
            ts[i] = [5.0, 1.0]
        sents = [f"s{i}" for i in range(n + (1 if mismatch else 0))]
        doc[f"v_{v}"] = {"duration": 60.0, "timestamps": ts, "sentences": sents}
    p = dump(example_dir(tmp_path_factory) / "a.json", doc)
    got = read_activitynet_captions(p, on_error="reject")
    bad = rejected(got)
    total = sum(n + (1 if m else 0) for n, _, m in videos)
    assert len(got.table) + len(bad) == total
    assert len({q for _, q, _ in bad}) == len(bad)
    assert not set(got.table.qid.tolist()) & {q for _, q, _ in bad}


def test_tacos_frames_to_seconds(tmp_path: Path) -> None:
    p = dump(tmp_path / "test.json", {"s1-d2.avi": {
        "timestamps": [[147, 294]], "sentences": ["cut"], "fps": 29.4, "num_frames": 2940}})
    t = read_tacos(p).table
    assert t.qid.tolist() == ["s1-d2_0"] and t.vid.tolist() == ["s1-d2"]
    assert t.duration[0] == pytest.approx(100.0)
    assert t.require_truth().to_lists() == [[[pytest.approx(5.0), pytest.approx(10.0)]]]


def test_tacos_bad_fps_rejected_by_video(tmp_path: Path) -> None:
    p = dump(tmp_path / "test.json", {"s1.avi": {
        "timestamps": [[1, 2]], "sentences": ["x"], "fps": 0, "num_frames": 10}})
    got = read_tacos(p, on_error="reject")
    assert len(got.table) == 0
    assert rejected(got)[0][:2] == (1, "s1_0") and "fps must be > 0" in rejected(got)[0][2]


def test_charades_cd_uses_video_duration(tmp_path: Path) -> None:
    p = dump(tmp_path / "charades_test_ood.json", {"AAA": {
        "timestamps": [[1.0, 48.0]], "sentences": ["person sits"], "video_duration": 47.625,
        "framestamps": [[16, 768]], "decode_fps": 16.0, "video_fps": -1.0}})
    t = read_charades_cd(p).table
    assert t.duration.tolist() == [47.625] and t.require_truth().ends.tolist() == [48.0]
    bad = dump(tmp_path / "bad.json", {"AAA": {"timestamps": [[1.0, 2.0]],
                                               "sentences": ["x"]}})
    with pytest.raises(InputError, match=r"bad.json:1 \(qid=AAA_0\)"):
        read_charades_cd(bad)


# ---- Charades-RF --------------------------------------------------------------------

def test_charades_rf_no_answer_is_noted_not_lost(tmp_path: Path) -> None:
    p = dump(tmp_path / "rf.json", {"AAA": {"duration": 30.0, "sts": [
        {"sentence": "a", "id": "AAA-0000", "timestamp": [1.0, 5.0], "no_answer": False},
        {"sentence": "b", "id": "BBB-1000", "timestamp": [], "no_answer": True},
        {"sentence": "c", "id": "AAA-0001", "timestamp": "soon", "no_answer": False},
    ]}}, indent=4)
    got = read_charades_rf(p, on_error="reject")
    assert got.table.qid.tolist() == ["AAA-0000"]
    assert no_moment_qids(got) == {"BBB-1000"}
    noted = [x for x in got.problems if x.action == "noted"]
    assert noted[0].problem == NO_MOMENT
    assert '"BBB-1000"' in p.read_text().splitlines()[noted[0].line - 1]
    assert rejected(got)[0][1:] == ("AAA-0001",
                                    "timestamp must be [start, end] or [] (no answer)")


# ---- TimeChat ----------------------------------------------------------------------

def test_timechat_tvg_empty_timestamp_is_refusal(tmp_path: Path) -> None:
    p = dump(tmp_path / "pred.json", {
        "7": {"timestamp": [[2.0, 6.0]], "query": "q7", "vid": "AAA.mp4"},
        "3": {"timestamp": [], "query": "q3", "vid": "BBB.mp4"},
        "9": {"timestamp": "20 - 30", "query": "q9", "vid": "AAA.mp4"},
    }, indent=2)
    got = read_timechat_tvg(p, on_error="reject")
    t = got.table
    assert t.qid.tolist() == ["7", "3"] and t.vid.tolist() == ["AAA", "BBB"]
    assert t.has_interval.tolist() == [True, False]
    (line, qid, _why), = rejected(got)
    assert qid == "9" and '"9"' in p.read_text().splitlines()[line - 1]
    assert t.records[0] == {"qid": "7", "timestamp": [[2.0, 6.0]], "query": "q7",
                            "vid": "AAA.mp4"}


def test_timechat_vhd_strips_prefix_and_extension(tmp_path: Path) -> None:
    p = tmp_path / "vhd.json"
    p.write_text(json.dumps([
        {"qid": 1, "query": "a", "vid": "v_abc_0.0_150.0.mp4", "pred_saliency_scores": [0, 1]},
        {"qid": 2, "query": "b", "vid": "v_xyz_0.0_150.0.mp4", "pred_saliency_scores": ["x"]},
    ]))
    got = read_timechat_vhd(p, on_error="reject")
    assert got.table.vid.tolist() == ["abc_0.0_150.0"]
    assert got.table.relevance.values.tolist() == [0.0, 1.0]
    assert not got.table.has_interval.any()
    assert rejected(got)[0][1] == "2"


def test_timeit_ground_truth(tmp_path: Path) -> None:
    dur = durations(tmp_path)
    p = dump(tmp_path / "gt.json", {"annotations": [
        {"image_id": "AAA.mp4", "caption": "x", "timestamp": [1, 2], "id": 0},
        {"image_id": "QQQ.mp4", "caption": "y", "timestamp": [1, 2], "id": 1}]})
    got = read_timeit_gt(p, durations=dur, on_error="reject")
    assert got.table.qid.tolist() == ["0"] and got.table.duration.tolist() == [30.0]
    assert rejected(got)[0][1:] == ("1", f"video QQQ has no duration in {dur}")
    with pytest.raises(InputError, match="--gt-durations"):
        read_timeit_gt(p, durations=None)


# ---- lmms-eval ---------------------------------------------------------------------

def sample(doc_id: int, video: str, caption: str, answer: str) -> dict[str, Any]:
    """One row as lmms-eval's evaluator logs it (``--log_samples``)."""
    return {"doc_id": doc_id, "doc": {"video": video, "caption": caption,
                                      "timestamp": [24.3, 30.4]},
            "target": [24.3, 30.4], "arguments": [["prompt"]], "resps": [[answer]],
            "filtered_resps": [answer], "doc_hash": "h", "prompt_hash": "p",
            "target_hash": "t",
            "submission": {f"{video}>>>{caption}>>>[24.3, 30.4]": answer}}


@pytest.mark.parametrize(("text", "span"), [
    ("The event happens in the 24.0 - 30.5 seconds.", (24.0, 30.5)),
    ("from 3 to 7", (3.0, 7.0)),
    ("It starts at 9 - 4 s", None),
    ("I cannot tell.", None),
])
def test_first_span(text: str, span: tuple[float, float] | None) -> None:
    assert first_span(text) == span


def test_lmms_eval_sample_log(tmp_path: Path) -> None:
    p = tmp_path / "samples_temporal_grounding_charades.jsonl"
    rows = [sample(0, "AAA.mp4", "person opens a door.", "The event happens in 1 - 4 seconds."),
            sample(1, "BBB.mp4", "a person sits.", "Sorry, I do not know."),
            {"doc_id": 2, "resps": [["1 - 2"]]}]
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    got = read_lmms_eval_samples(p, on_error="reject")
    t = got.table
    assert t.qid.tolist() == ["0", "1"] and t.vid.tolist() == ["AAA", "BBB"]
    assert t.pred_start.tolist()[0] == 1.0 and t.has_interval.tolist() == [True, False]
    assert [(x.line, x.qid) for x in got.problems if x.action == "noted"] == [(2, "1")]
    assert rejected(got) == [(3, "2", "missing field(s): doc_id, doc.video")]


def test_lmms_eval_sample_log_with_video_path_and_span(tmp_path: Path) -> None:
    """Newer grounding tasks log ``doc.video_path`` and the true window as ``doc.span``."""
    p = tmp_path / "samples_charades_sta.jsonl"
    rows = [{"doc_id": i, "doc": {"video_path": path, "query": q, "span": [2.0, 6.5],
                                  "duration": 30.5},
             "target": [2.0, 6.5], "resps": [[a]], "filtered_resps": [a]}
            for i, (path, q, a) in enumerate([
                ("/data/Charades_v1/AAA.mp4", "person opens a door.", "From 1.5 to 7 seconds."),
                ("C:\\videos\\BBB.webm", "a person sits.", "I am not sure.")])]
    p.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert formats.detect(p, "predictions")[0].name == "lmms-eval-samples"
    got = read_lmms_eval_samples(p, on_error="reject")
    t = got.table
    assert t.vid.tolist() == ["AAA", "BBB"] and t.duration.tolist() == [30.5, 30.5]
    assert t.query is not None and t.query.tolist() == ["person opens a door.", "a person sits."]
    assert (t.pred_start[0], t.pred_end[0]) == (1.5, 7.0) and not t.has_interval[1]
    assert rejected(got) == []


def test_lmms_eval_submission(tmp_path: Path) -> None:
    p = dump(tmp_path / "inference_results_temporal_grounding_charades.json", {
        "AAA.mp4>>>person opens a door.>>>[1.5, 4.0]": "happens in 2 - 5 seconds",
        "broken key": "1 - 2"}, indent=4)
    got = read_lmms_eval_submission(p, on_error="reject")
    assert got.table.vid.tolist() == ["AAA"] and got.table.pred_end.tolist() == [5.0]
    assert rejected(got)[0][1] == "1"


# ---- Moment-DETR jsonl with repeating qids --------------------------------------------

def test_gt_by_line_renumbers(tmp_path: Path) -> None:
    p = tmp_path / "test_len_80.jsonl"
    row = {"qid": 0, "query": "q", "duration": 30, "vid": "A", "relevant_windows": [[1, 2]]}
    p.write_text("\n".join(json.dumps(r) for r in [row, row | {"vid": "B"},
                                                    row | {"relevant_windows": "x"}]))
    got = read_gt_by_line(p, on_error="reject")
    assert got.table.qid.tolist() == ["0", "1"]
    assert rejected(got) == [(3, "2", "relevant_windows must look like [[start, end], ...]")]


def test_malformed_json_document_names_line(tmp_path: Path) -> None:
    p = tmp_path / "val_1.json"
    p.write_text('{"v_a": {"duration": 5,\n "timestamps": [[0, 1]],, "sentences": ["x"]}}')
    with pytest.raises(InputError, match=r"val_1.json:2: malformed JSON"):
        read_activitynet_captions(p)
