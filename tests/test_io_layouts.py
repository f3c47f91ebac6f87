"""Named layouts read by mappings (no format-specific reader), the mapping language on
nested JSON, and the joins they need; checked on the shared files against the numbers
their PROVENANCE.md states."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cover.data.join import index_of
from cover.data.relevance import MAX_SIGNAL_CLIPS, proposal_relevance, rebuild_relevance
from cover.errors import InputError
from cover.io import formats, layouts
from cover.io.durations import read_video_durations
from cover.io.labelled import load_labelled
from cover.io.mapping import is_nested, parse_mapping
from cover.io.order_join import join_truth
from cover.metrics import point_iou

FIXTURES = Path(__file__).parent / "fixtures"
WRAPPER = FIXTURES / "sliding_window_predictions.json"

# (predictions, ground truth, layout, rows read, rows joined, R1@0.5, mIoU) from each
# folder's PROVENANCE.md (IoU against the ground truth as written, not clipped).
PROVENANCE = [
    ("charades_sta/distime/DisTime-InternVL2_5-8B_charades_test_results.json",
     "charades_sta/annotations/charades_sta_test.txt", "distime-by-video", 3720, 3720,
     60.32, 53.54),
    ("activitynet_captions/distime/DisTime-InternVL2_5-8B_anet_val2_results.json",
     "activitynet_captions/annotations/val_2.json", "distime-results", 17031, 17031,
     53.26, 50.53),
    ("qvhighlights/distime/DisTime-InternVL2_5-8B_qvh_val_results.json",
     "qvhighlights/annotations/highlight_val_release.jsonl", "distime-list", 1550, 1550,
     61.10, 56.05),
    # two ground-truth rows have start > end and are rejected by the reader
    ("activitynet_cd/shuffling_videos_mdc/prediction_results_test_ood.json",
     "activitynet_cd/momentdiff_repo/anet_test_ood_momentdiff.jsonl", "shuffling-videos",
     13578, 13576, 24.61, 30.21),
    ("charades_cd/shuffling_videos_mdc/prediction_results_test_ood.json",
     "charades_cd/momentdiff_repo/charades_test_ood.json", "shuffling-videos", 3375, 3375,
     47.32, 44.28),
    ("charades_sta/tgn/TGN_predict_proposals_test_nms_0.55.json",
     "charades_sta/annotations/charades_sta_test.txt", "tgn-proposals", 3720, 3720,
     34.65, 33.46),
]


def _raw_join(preds: Path, gt: Path) -> tuple[formats.Read, np.ndarray]:
    """Top-1 IoU of every joined row against the truth as written (no clipping)."""
    p = formats.read(preds, "predictions")
    g = formats.read(gt, "ground_truth", options=formats.Options(on_error="reject"))
    gtab = join_truth(p.loaded.table, g.loaded.table, g.loaded.rejected).gt
    j, hit = index_of(gtab.qid, p.loaded.table.qid)
    rows = np.flatnonzero(hit)
    t = replace(p.loaded.table.take(rows), truth=gtab.require_truth().take(j[rows]))
    return p, point_iou(t)


@pytest.mark.parametrize(("rel", "gt", "layout", "rows", "joined", "r1", "miou"), PROVENANCE,
                         ids=[x[2] + ":" + x[0].split("/")[0] for x in PROVENANCE])
def test_layout_reads_the_provenance_numbers(data_dir: Path, rel: str, gt: str, layout: str,
                                             rows: int, joined: int, r1: float,
                                             miou: float) -> None:
    p, iou = _raw_join(data_dir / rel, data_dir / gt)
    assert p.format == layout and p.mapping is layouts.by_name(layout).parsed  # type: ignore[union-attr]
    assert len(p.loaded.table) == rows and not p.loaded.problems
    assert iou.size == joined
    # IoU exactly 0.5 (TGN: 14 rows, Charades-CD: 20) lands on either side of 0.5 by
    # float rounding, depending on how the union is written (sum minus overlap, or hull):
    # the stated R1@0.5 lies between the counts without and with those rows.
    tie = np.abs(iou - 0.5) < 1e-9
    lo, hi = 100 * np.mean((iou >= 0.5) & ~tie), 100 * np.mean((iou >= 0.5) | tie)
    assert lo - 0.005 <= r1 <= hi + 0.005
    if not tie.any():
        assert round(100 * float((iou >= 0.5).mean()), 2) == r1
    assert round(100 * float(iou.mean()), 2) == miou


def test_tgn_proposals_give_sls_a_relevance_over_the_whole_video(data_dir: Path) -> None:
    t, _ = load_labelled(data_dir / PROVENANCE[-1][0], data_dir / PROVENANCE[-1][1],
                         on_error="reject")
    assert t.has_relevance.all()
    # the signal now spans [0, T] of the ground truth, one value per clip
    assert (t.relevance.lengths == np.ceil(np.round(t.duration / t.clip, 9))).all()


def test_anet_max_duration_keeps_the_paper_protocol(data_dir: Path) -> None:
    said: list[str] = []
    t, _ = load_labelled(data_dir / PROVENANCE[1][0], data_dir / PROVENANCE[1][1],
                         on_error="reject", max_duration=150, log=said.append)
    assert len(t) == 10571 and (t.duration <= 150).all()
    assert any("joined on order within each video: 17031 of 17031" in s
               and "3 of them with a different query text" in s for s in said)
    assert any("--max-duration 150: kept 10571 of 17031 queries" in s for s in said)


def test_qvh_list_has_no_vid_and_takes_it_from_the_ground_truth(data_dir: Path) -> None:
    said: list[str] = []
    t, _ = load_labelled(data_dir / PROVENANCE[2][0], data_dir / PROVENANCE[2][1],
                         on_error="raise", log=said.append)
    assert len(t) == 1550 and t.vid[0] == "NUsG9BgSes0_210.0_360.0"
    assert any("the mapping names no vid; took it from" in s and "1550 of 1550 rows" in s
               for s in said)


def test_validity_runs_on_distime_charades(data_dir: Path, tmp_path: Path) -> None:
    from cover.cli import main

    out = tmp_path / "v"
    code = main(["validity", "--preds", str(data_dir / PROVENANCE[0][0]), "--gt",
                 str(data_dir / PROVENANCE[0][1]), "--out", str(out), "--resamples", "20",
                 "--families", "norm"])
    assert code == 0
    doc = json.loads((out / "validity.json").read_text())
    assert doc  # written, parsed


# ---- the {config, predictions} wrapper: a named layout, and never rows of its keys -----

def _gt(tmp_path: Path) -> Path:
    rows = [{"qid": q, "vid": f"v{q}", "query": "q", "duration": 40.0,
             "relevant_windows": [w]}
            for q, w in ((101, [0, 10]), (102, [0, 10]), (103, [20, 30]))]
    path = tmp_path / "gt.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_wrapper_is_a_named_layout(tmp_path: Path) -> None:
    said: list[str] = []
    got = formats.read(WRAPPER, "predictions")
    assert got.format == "predictions-wrapper" and len(got.loaded.table) == 3
    t, _ = load_labelled(WRAPPER, _gt(tmp_path), log=said.append)
    # IoU 1, 1/3, 1: the vids came from the ground truth, said
    assert np.allclose(point_iou(t), [1.0, 1 / 3, 1.0])
    assert any("names no vid; took it from" in s for s in said)


def test_wrapper_read_as_flat_rows_is_an_error_naming_the_rows_path() -> None:
    with pytest.raises(InputError) as err:
        formats.read(WRAPPER, "predictions", options=formats.Options(
            columns="qid=id,start=pred.0,end=pred.1"))
    msg = str(err.value)
    assert "read as a table of its top-level keys ('config', 'predictions')" in msg
    assert "no row has qid=id" in msg
    assert "'predictions' holds 3 entries" in msg
    assert "--columns 'rows=predictions.*,qid=$key,windows=$value'" in msg
    # ... and the suggested mapping reads it
    got = formats.read(WRAPPER, "predictions", options=formats.Options(
        columns="rows=predictions.*,qid=$key,windows=$value"))
    assert got.loaded.table.pred_end.tolist() == [10.0, 15.0, 30.0]


def test_a_mapping_that_matches_no_rows_says_what_is_there() -> None:
    with pytest.raises(InputError, match=r"rows=results\.\* matches no record; its top level "
                       r"has keys \['config', 'predictions'\]"):
        formats.read(WRAPPER, "predictions", options=formats.Options(
            columns="rows=results.*,qid=$key,windows=$value"))
    with pytest.raises(InputError, match=r"no record has a value for query=text"):
        formats.read(WRAPPER, "predictions", options=formats.Options(
            columns="rows=predictions.*,qid=$key,windows=$value,query=text"))


# ---- the mapping language ----------------------------------------------------------------

def test_keys_split_by_a_pattern_at_the_last_separator(tmp_path: Path) -> None:
    doc = {"results": {"v_0bosp4-pyTM-3": {"ts": "[[1, 2]]", "s": 0.5},
                       "v_x-10": {"ts": "[[3, 4]]", "s": 0.5}}}
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    got = formats.read(path, "predictions", options=formats.Options(
        columns="rows=results.*,vid=$key|<vid>-<order>,windows=ts|json,scores=s"))
    t = got.loaded.table
    assert t.vid.tolist() == ["v_0bosp4-pyTM", "v_x"]
    assert t.qid.tolist() == ["v_0bosp4-pyTM-3", "v_x-10"]
    assert not got.native_qids and got.mapping is not None and got.mapping.join == "order"


def test_a_key_the_pattern_does_not_match_rejects_its_row(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"results": {"a-1": [1, 2], "nodash": [1, 2]}}))
    got = formats.read(path, "predictions", options=formats.Options(
        on_error="reject", columns="rows=results.*,vid=$key|<vid>-<order>,windows=$value"))
    assert len(got.loaded.table) == 1
    assert "vid: 'nodash' does not match '<vid>-<order>'" in str(got.loaded.problems[0])


def test_mapping_checks_name_the_problem() -> None:
    assert is_nested("rows=a.*,qid=$key") and not is_nested("qid=id,start=p.0,end=p.1")
    with pytest.raises(InputError, match="unknown field"):
        parse_mapping("rows=*,qid=$key,colour=red")
    with pytest.raises(InputError, match="needs vid= too"):
        parse_mapping("rows=*,order=$key,windows=w")
    with pytest.raises(InputError, match="gives no qid"):
        parse_mapping("rows=*,vid=$key,windows=w")
    with pytest.raises(InputError, match="must have a <qid> part"):
        parse_mapping("rows=*,qid=id|Q_<vid>,windows=w")
    with pytest.raises(InputError, match="unknown modifier 'yaml'"):
        parse_mapping("rows=*,qid=id|yaml,windows=w")


# ---- proposals as a relevance signal -----------------------------------------------------

def test_proposal_relevance_is_the_best_score_overlapping_each_clip() -> None:
    w = np.array([[0.0, 4.0, 0.2], [2.0, 3.0, 0.9], [1.0, 1.5, 0.1]])
    off = np.array([0, 2, 3])
    r = proposal_relevance(w, off, np.array([10.0, np.nan]), clip=2.0)
    assert r.row(0).tolist() == [0.2, 0.9, 0.0, 0.0, 0.0]  # [0, 10]: 5 clips, floor 0
    assert r.row(1).tolist() == [0.1]  # T unknown: up to the furthest end
    # the level set at 0.9 holds the whole 0.9 proposal; at 0.2, the whole 0.2 one
    assert r.row(0)[1] >= 0.9 and (r.row(0)[:2] >= 0.2).all()


def test_proposal_relevance_floor_is_each_rows_own() -> None:
    """A clip no proposal overlaps gets 0, or its row's lowest score when that is below
    0: a row's signal is the same alone as beside others (certify builds it per batch)."""
    w = np.array([[0.0, 2.0, -3.0], [4.0, 6.0, -1.0], [0.0, 2.0, 0.5]])
    both = proposal_relevance(w, np.array([0, 2, 3]), np.array([8.0, 6.0]), clip=2.0)
    assert both.row(0).tolist() == [-3.0, -3.0, -1.0, -3.0]
    assert both.row(1).tolist() == [0.5, 0.0, 0.0]
    alone = proposal_relevance(w[2:], np.array([0, 1]), np.array([6.0]), clip=2.0)
    assert alone.row(0).tolist() == both.row(1).tolist()


def test_a_signal_of_too_many_clips_is_an_error_naming_the_row(tmp_path: Path) -> None:
    """A duration in the wrong unit would need a signal of billions of clips: the row is
    rejected naming the file, line and qid (an error under on_error="raise"), before
    anything is allocated (it was a MemoryError, or at ~1e9 s the process killed for
    memory; then an error that stopped the read under "reject" too). A proposal reaching
    that far while T is not known yet gets no signal until T is known, when it is clipped
    to [0, T]."""
    path = tmp_path / "p.jsonl"
    rows = [{"qid": 7, "vid": "v", "pred_relevant_windows": [[0, 4, 0.5], [4, 5, 0.8]],
             "duration": 1e9},
            {"qid": 8, "vid": "v", "pred_relevant_windows": [[0, 4, 0.5], [4, 3.7e12, 0.8]]}]
    options = formats.Options(relevance_from="proposals", on_error="reject")
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    why = (f"a relevance signal from proposals over its duration of 1e+09 s would need "
           f"more than {MAX_SIGNAL_CLIPS:,} clips of 2 s (no video is that long: is it in "
           f"seconds?)")
    got = formats.read(path, "predictions", options=options).loaded
    assert got.table.qid.tolist() == ["8"]
    assert [(p.line, p.qid, p.problem, p.action) for p in got.problems] == [
        (1, "7", why, "rejected")]
    assert got.rejected[1, "7"]["qid"] == 7  # its record, echoed by certify
    with pytest.raises(InputError) as raised:
        formats.read(path, "predictions", options=replace(options, on_error="raise"))
    assert f"{path}:1 (qid=7): {why}" in str(raised.value)
    path.write_text(json.dumps(rows[1]) + "\n")
    table = formats.read(path, "predictions", options=options).loaded.table
    assert table.relevance.lengths.tolist() == [0]
    t30 = replace(table, duration=np.array([30.0]))
    assert rebuild_relevance(t30).relevance.row(0).tolist() == [0.5, 0.5, 0.8] + [0.8] * 12
    w = np.array([[0.0, 4.0, 0.5], [4.0, 5.0, 0.8]])
    with pytest.raises(ValueError, match="row 0: its relevance signal would hold more"):
        proposal_relevance(w, np.array([0, 2]), np.array([1e9]), clip=2.0)
    # the longest signal allowed is built as any other
    edge = proposal_relevance(w, np.array([0, 2]), np.array([2.0 * MAX_SIGNAL_CLIPS]),
                              clip=2.0)
    assert edge.lengths.tolist() == [MAX_SIGNAL_CLIPS]


def test_relevance_from_proposals_flag_on_any_format(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"qid": 1, "vid": "v", "pred_relevant_windows":
                                [[0, 4, 0.5], [4, 6, 0.8]]}) + "\n")
    got = formats.read(path, "predictions", options=formats.Options(
        relevance_from="proposals"))
    assert got.loaded.table.relevance.row(0).tolist() == [0.5, 0.5, 0.8]


# ---- silent defaults ---------------------------------------------------------------------

def test_tacos_ground_truth_reads_as_videos(data_dir: Path) -> None:
    vid, t = read_video_durations(data_dir / "tacos/annotations/test.json")
    g = formats.read(data_dir / "tacos/annotations/test.json", "ground_truth").loaded.table
    j, hit = index_of(vid, g.vid)
    assert hit.all() and np.allclose(t[j], g.duration)


def test_text_qids_fall_back_to_the_content_join(tmp_path: Path) -> None:
    gt = _gt(tmp_path)
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"id": f"charades_sta_test_{i}", "video": f"v{q}",
                                         "text": "q", "p": [0, 10]}) + "\n"
                             for i, q in enumerate((101, 102, 103))))
    said: list[str] = []
    t, _ = load_labelled(preds, gt, columns="qid=id,vid=video,query=text,start=p.0,end=p.1",
                         log=said.append)
    assert len(t) == 3 and t.qid[0] == "charades_sta_test_0"
    assert any("joined on (vid, query text): 3 of 3" in s for s in said)


def test_columns_without_vid_take_it_from_the_ground_truth(tmp_path: Path) -> None:
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"id": q, "p": [0, 10]}) + "\n"
                             for q in (101, 102, 103)))
    said: list[str] = []
    t, _ = load_labelled(preds, _gt(tmp_path), columns="qid=id,start=p.0,end=p.1",
                         log=said.append)
    assert t.vid.tolist() == ["v101", "v102", "v103"]  # not the qids
    assert any(f"{preds}: the mapping names no vid; took it from" in s
               and "3 of 3 rows (by qid)" in s for s in said)


def test_formats_explain_shows_detection_mapping_and_first_rows(
        capsys: pytest.CaptureFixture[str]) -> None:
    from cover.cli import main

    assert main(["formats", "--explain", str(WRAPPER)]) == 0
    out = capsys.readouterr().out
    assert "detected: predictions-wrapper (predictions)" in out
    assert "mapping:  --columns 'rows=predictions.*,qid=$key,windows=$value'" in out
    assert "join:     by qid" in out
    assert "read:     3 rows, 0 rejected" in out
    assert "row 1:    qid=101, vid=(from the ground truth), windows=[[0, 10]]" in out
