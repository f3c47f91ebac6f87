"""Joining predictions to ground truth across formats, and the acceptance runs:
``cover validity`` on LA-DETR Charades-STA (Lighthouse jsonl or the original text +
charades.json: the same numbers), on the TimeChat example files, and on a Parquet copy
of a QVHighlights prediction file."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.cli import main
from cover.data.table import GroundingTable
from cover.io.content_join import content_keys, rekey
from cover.io.labelled import load_labelled


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("ABC"),
                          st.sampled_from(["x", "y.", "z" * 300 + ".", "z" * 300 + "w"])),
                min_size=1, max_size=25), st.randoms(use_true_random=False))
def test_rekey_pairs_kth_occurrences(pairs: list[tuple[str, str]], rnd: object) -> None:
    """Renumbered, shuffled predictions find their own truth row: the k-th prediction of
    a (vid, query) in qid order pairs with the k-th truth row of it."""
    n = len(pairs)
    gt = GroundingTable.from_arrays(qid=np.arange(n), duration=np.full(n, 50.0),
                                    vid=[v for v, _ in pairs], truth=(np.arange(n),
                                                                      np.arange(n) + 1.0))
    gt = replace(gt, query=np.array([q for _, q in pairs], dtype=object))
    perm = list(range(n))
    rnd.shuffle(perm)  # type: ignore[attr-defined]
    pq = np.array([str(1000 + i) for i in range(n)])  # same order as gt, other numbers
    preds = GroundingTable.from_arrays(qid=pq[perm], duration=np.full(n, np.nan),
                                       vid=np.array([pairs[i][0] for i in perm]))
    preds = replace(preds, query=np.array(
        [pairs[i][1].upper().rstrip(".") + " " for i in perm], dtype=object))
    rekeyed, matched = rekey(preds, gt, content_keys(preds), content_keys(gt))
    assert matched == n
    assert rekeyed.qid.tolist() == pq.tolist()
    assert np.unique(content_keys(gt)).size == n


def test_a_query_of_a_million_characters_keys_by_its_digest() -> None:
    """The join keys are one text column as wide as the longest: a query of a million
    characters made every key a million wide (17,031 ActivityNet rows: 68 GB). A long
    query keys by the digest of its normalised text, so the same query still pairs."""
    long = "A man " * 200_000
    gt = GroundingTable.from_arrays(qid=np.arange(2), duration=np.full(2, 50.0),
                                    vid=["v", "v"], truth=(np.zeros(2), np.ones(2)))
    gt = replace(gt, query=np.array(["short.", long], dtype=object))
    preds = GroundingTable.from_arrays(qid=np.array(["b", "a"]), duration=np.full(2, np.nan),
                                       vid=["v", "v"])
    preds = replace(preds, query=np.array([long.strip().upper() + ".", "SHORT"], dtype=object))
    keys = content_keys(gt)
    assert keys.dtype.itemsize < 4 * 300
    rekeyed, matched = rekey(preds, gt, content_keys(preds), keys)
    assert matched == 2 and rekeyed.qid.tolist() == ["a", "b"]  # the truth, in preds' names


def test_no_moment_predictions_are_set_aside(tmp_path: Path) -> None:
    rf = {"A": {"duration": 30.0, "sts": [
        {"sentence": "s0", "id": "A-0", "timestamp": [1.0, 5.0], "no_answer": False},
        {"sentence": "s1", "id": "B-9", "timestamp": [], "no_answer": True}]}}
    (tmp_path / "rf.json").write_text(json.dumps(rf))
    (tmp_path / "p.jsonl").write_text("\n".join(json.dumps(
        {"qid": q, "vid": "A", "pred_relevant_windows": [[1, 4, 1.0]]}) for q in ("A-0", "B-9")))
    msgs: list[str] = []
    table, problems = load_labelled(tmp_path / "p.jsonl", tmp_path / "rf.json", log=msgs.append)
    assert table.qid.tolist() == ["A-0"]
    assert [(p.qid, p.action) for p in problems] == [("B-9", "noted"), ("B-9", "noted")]
    assert any("no relevant moment" in m for m in msgs)


# ---- acceptance on the real files ---------------------------------------------------

def validity(args: list[str], out: Path) -> dict:
    assert main(["validity", *args, "--out", str(out), "--resamples", "2",
                 "--alphas", "0.1", "--families", "norm"]) == 0
    return json.loads((out / "validity.json").read_text())


def same_table(a: GroundingTable, b: GroundingTable) -> None:
    assert (a.qid == b.qid).all() and (a.vid == b.vid).all()
    for col in ("duration", "pred_start", "pred_end"):
        np.testing.assert_array_equal(getattr(a, col), getattr(b, col))
    ta, tb = a.require_truth(), b.require_truth()
    np.testing.assert_array_equal(ta.starts, tb.starts)
    np.testing.assert_array_equal(ta.ends, tb.ends)
    np.testing.assert_array_equal(a.relevance.values, b.relevance.values)
    if a.pred_windows is not None and b.pred_windows is not None:
        np.testing.assert_array_equal(a.pred_windows.values, b.pred_windows.values)
        np.testing.assert_array_equal(a.pred_windows.offsets, b.pred_windows.offsets)


def test_la_detr_charades_same_numbers_from_lighthouse_or_text(data_dir: Path) -> None:
    """Same joined table from both ground truths, so every number downstream is equal."""
    preds = data_dir / "charades_sta/la_detr/hl_test_submission.jsonl"
    text = data_dir / "charades_sta/annotations/charades_sta_test.txt"
    t1, _ = load_labelled(preds, data_dir / "lighthouse/charades_test_release.jsonl")
    t2, _ = load_labelled(preds, text, gt_durations=text.with_name("charades.json"))
    assert len(t1) == 3720
    same_table(t1, t2)


def test_timechat_examples_run_through_validity(data_dir: Path, tmp_path: Path) -> None:
    text = data_dir / "charades_sta/annotations/charades_sta_test.txt"
    tvg = validity(["--preds", str(data_dir / "charades_sta/timechat_repo_example/"
                                   "example_pred_file.json"), "--gt", str(text),
                    "--gt-durations", str(text.with_name("charades.json")),
                    "--on-error", "reject"], tmp_path / "tvg")
    # 14 of the 500 predictions lie wholly outside their video: rejected, not clipped.
    assert tvg["rows"]["total"] == 486
    assert main(["validity", "--preds", str(data_dir / "qvhighlights/timechat_repo_example_vhd/"
                                            "example_pred_file.json"),
                 "--gt", str(data_dir / "qvhighlights/annotations/highlight_val_release.jsonl"),
                 "--on-error", "reject", "--families", "sls", "--resamples", "2", "--alphas",
                 "0.1", "--out", str(tmp_path / "vhd")]) == 0
    assert json.loads((tmp_path / "vhd" / "validity.json").read_text())["rows"]["total"] == 1463


def test_parquet_copy_of_qvhighlights_gives_the_same_numbers(qvh_gt: Path, qdetr_preds: Path,
                                                             tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [json.loads(x) for x in qdetr_preds.read_text().splitlines() if x.strip()]
    pq.write_table(pa.table({
        "query_id": [r["qid"] for r in rows], "video": [r["vid"] for r in rows],
        "windows": [r["pred_relevant_windows"] for r in rows],
        "saliency": [r["pred_saliency_scores"] for r in rows]}), tmp_path / "qd.parquet")
    mapping = "qid=query_id,vid=video,windows=windows,saliency=saliency"
    t1, _ = load_labelled(qdetr_preds, qvh_gt)
    t2, _ = load_labelled(tmp_path / "qd.parquet", qvh_gt, columns=mapping)
    same_table(t1, t2)
    d = validity(["--preds", str(tmp_path / "qd.parquet"), "--gt", str(qvh_gt), "--columns",
                  mapping], tmp_path / "b")
    assert d["rows"]["total"] == 1550


def test_qid_list_from_position_ground_truth_selects_renamed_rows(tmp_path: Path) -> None:
    """`cover split` on Charades-STA text writes line-index qids; predictions numbered
    12404 + line still calibrate on exactly those queries."""
    (tmp_path / "charades.json").write_text(json.dumps(
        {f"V{i}": {"duration": 30.0} for i in range(6)}))
    (tmp_path / "gt.txt").write_text("".join(f"V{i} 1.0 5.0##query {i}.\n" for i in range(6)))
    (tmp_path / "p.jsonl").write_text("\n".join(json.dumps(
        {"qid": 12404 + i, "vid": f"V{i}", "query": f"query {i}.",
         "pred_relevant_windows": [[1, 4, 1.0]]}) for i in range(6)))
    (tmp_path / "cal.txt").write_text("1\n4\n")
    assert main(["split", "--gt", str(tmp_path / "gt.txt"), "--out-dir", str(tmp_path)]) == 0
    table, _ = load_labelled(tmp_path / "p.jsonl", tmp_path / "gt.txt", qids=tmp_path / "cal.txt")
    assert table.qid.tolist() == ["12405", "12408"]
    split_qids = (tmp_path / "calibration_qids.txt").read_text().split()
    table, _ = load_labelled(tmp_path / "p.jsonl", tmp_path / "gt.txt",
                             qids=tmp_path / "calibration_qids.txt")
    assert sorted(table.qid.tolist()) == sorted(str(12404 + int(q)) for q in split_qids)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.lists(st.sampled_from(["a", "a.mp4", "v_a", "v_a.mp4", "b.avi", "v_b", "c", "c.mkv",
                                 "v_c.mp4"]), max_size=30),
       st.sets(st.sampled_from(["a", "v_a", "b", "c"])))
def test_known_vids_edits_each_unknown_id_as_the_row_by_row_rule(vids, known):
    """An id not in ``known`` loses its file extension, then its ``v_`` prefix, where that
    names a known video: the rule applied to every row, computed once per distinct id."""
    from cover.io.content_join import known_vids
    from cover.io.timechat import strip_ext

    kn = np.array(sorted(known), dtype=str)
    want = []
    for v in vids:
        got = v
        if v not in known and strip_ext(v) in known:
            got = strip_ext(v)
        if got not in known and strip_ext(v).removeprefix("v_") in known:
            got = strip_ext(v).removeprefix("v_")
        want.append(got)
    arr = np.array(vids, dtype=str)
    before = arr.copy()
    assert known_vids(arr, kn).tolist() == want
    assert np.array_equal(arr, before)  # the caller's column is not written


def test_batches_and_whole_file_join_alike(tmp_path: Path) -> None:
    """One join for every calibration input: a file streamed in batches of 2 and read
    whole give the same rows and the same problems (a repeated qid, a prediction without
    truth, a truth row without prediction, a listed qid in neither file), and under
    ``on_error='raise'`` the same message."""
    from cover.io.batch_join import QidList
    from cover.io.qids import read_qid_lines
    from cover.io.qvhighlights import read_ground_truth
    from cover.stream.calibrate import score_file

    def row(q: int) -> str:
        return json.dumps({"qid": q, "vid": f"v{q}", "duration": 30.0,
                           "pred_relevant_windows": [[1.0, 5.0, 0.9]]})

    (tmp_path / "p.jsonl").write_text("\n".join(row(q) for q in (1, 2, 3, 2, 9, 4)) + "\n")
    (tmp_path / "gt.jsonl").write_text("\n".join(json.dumps(
        {"qid": q, "vid": f"v{q}", "duration": 30.0, "relevant_windows": [[2.0, 6.0]]})
        for q in (1, 2, 3, 4, 5)) + "\n")
    (tmp_path / "q.txt").write_text("1\n2\n3\n4\n5\n9\n77\n")
    p, g, q = (str(tmp_path / n) for n in ("p.jsonl", "gt.jsonl", "q.txt"))

    gt = read_ground_truth(g).table
    got = score_file(p, gt, family="norm", min_scale=1e-3, target="envelope",
                      qids=QidList(q, *read_qid_lines(q)), on_error="reject", batch_rows=2,
                      gt_name=g, fast=False, keep_problems=None)
    with pytest.raises(Exception, match="duplicate qid"):  # the whole-file reader's words
        load_labelled(p, g, qids=q)
    whole, problems = load_labelled(p, g, qids=q, on_error="reject")
    assert got.batches == 3 and sorted(got.table.qid.tolist()) == sorted(whole.qid.tolist())
    def seen(found: list) -> list[tuple]:
        return [(x.path, x.line, x.qid, x.problem.split(" (")[0], x.action) for x in found]

    assert sorted(seen(got.problems.kept)) == sorted(seen(problems))
    with pytest.raises(Exception) as whole_error:
        load_labelled(p, g, qids=q)
    for batch in (1, 2, 7):  # the stream reads every batch, then names the same rows
        with pytest.raises(Exception) as streamed_error:
            score_file(p, gt, family="norm", min_scale=1e-3, target="envelope",
                        qids=QidList(q, *read_qid_lines(q)), batch_rows=batch, gt_name=g)
        assert str(streamed_error.value) == str(whole_error.value)


def test_a_caller_without_records_gets_the_same_joined_table(qdetr_preds: Path,
                                                             qvh_gt: Path) -> None:
    """QD-DETR on QVHighlights val: ``keep_records=False`` (what ``cover calibrate
    --in-memory`` passes unless it groups by a record field) reads the predictions
    without their parsed rows and gives the same joined table and problems."""
    from bulk_rows import same_tables
    from cover.io.labelled import read_labelled

    full = read_labelled(qdetr_preds, qvh_gt)
    lean = read_labelled(qdetr_preds, qvh_gt, keep_records=False)
    assert full.table.records is not None and lean.table.records is None
    same_tables(lean.table, full.table, skip=("records",))
    assert lean.problems == full.problems and lean.relevance == full.relevance


def test_calibrate_in_memory_grouped_by_a_record_field_keeps_the_records(
        tmp_path: Path) -> None:
    """``--groups key --group-key camera`` reads a field only the input rows carry: the
    whole read keeps them (a fit without them is refused), and the fit is the one of the
    same rows read with every record (the file read row by row)."""
    from cli_files import synthetic_rows, write_jsonl

    preds, gts = synthetic_rows(120)
    for i, r in enumerate(preds):
        r["camera"] = "ab"[i % 2]
    p = write_jsonl(tmp_path / "p.jsonl", list(preds))
    g = write_jsonl(tmp_path / "g.jsonl", list(gts))
    args = ["calibrate", "--preds", str(p), "--gt", str(g), "--in-memory", "--rule",
            "mondrian", "--groups", "key", "--group-key", "camera", "--min-group-rows", "20"]
    assert main([*args, "-o", str(tmp_path / "a.json")]) == 0
    got = json.loads((tmp_path / "a.json").read_text())
    assert got["groups"] == {"kind": "key", "field": "camera"}
    assert sorted(got["thresholds"]) == ["a", "b"]


def test_a_duration_whose_signal_from_proposals_is_too_long_rejects_its_rows(
        data_dir: Path, tmp_path: Path) -> None:
    """TGN's proposals joined with Charades-STA whose durations give one video 1e9 s:
    under on_error="reject" the three queries of that video are rejected, each named with
    the reason, and the other 3,717 rows are read (it stopped the whole read); under
    "raise" the error names them."""
    from cover.errors import InputError
    from cover.io.labelled import read_labelled

    doc = json.loads((data_dir / "charades_sta/annotations/charades.json").read_text())
    doc["JVLAZ"]["duration"] = 1e9
    durations = tmp_path / "charades.json"
    durations.write_text(json.dumps(doc))
    preds = data_dir / "charades_sta/tgn/TGN_predict_proposals_test_nms_0.55.json"
    gt = data_dir / "charades_sta/annotations/charades_sta_test.txt"
    got = read_labelled(preds, gt, gt_durations=durations, relevance_from="proposals",
                        on_error="reject")
    assert len(got.table) == 3717 and "JVLAZ" not in set(got.table.vid.tolist())
    long = [p for p in got.problems if "would need more than 4,194,304 clips" in p.problem]
    assert sorted(p.qid for p in long) == ["JVLAZ-0", "JVLAZ-1", "JVLAZ-2"]
    assert all(p.action == "rejected" and p.path == str(preds) for p in long)
    with pytest.raises(InputError, match=r"(?s)3 bad row\(s\) in .*\(qid=JVLAZ-"):
        read_labelled(preds, gt, gt_durations=durations, relevance_from="proposals")
