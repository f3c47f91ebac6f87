"""Highlight detection (HL-mAP, HIT@1) against a per-row reference and the numbers Moment-DETR's
evaluator gives on the real QVHighlights files."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cover
from cover.data.table import GroundingTable
from cover.errors import InputError
from cover.grounding_metrics import grounding_metrics
from cover.highlight_metrics import average_precision, highlight_metrics, label_matrix
from cover.intervals import Intervals
from cover.io.gt_lean import read_ground_truth_lean
from cover.io.qvhighlights import read_ground_truth
from cover.ragged import Ragged

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None)


def _table(labels: list[list[list[float]]], saliency: list[list[float]],
           t: float = 20.0) -> GroundingTable:
    """Rows with labels ``[[clip, s1, s2, s3], ...]`` and predicted saliency."""
    n = len(labels)
    table = GroundingTable.from_arrays(
        qid=np.arange(n), duration=t, pred_start=np.zeros(n), pred_end=np.ones(n),
        relevance=saliency, truth=Intervals.from_lists([[[0.0, 2.0]]] * n))
    flat = np.array([c for row in labels for c in row], dtype=float).reshape(-1, 4)
    off = np.r_[0, np.cumsum([len(r) for r in labels])].astype(np.int64)
    return replace(table, truth_saliency=Ragged(flat, off))


# ---- a plain per-row reference, written from the definition ---------------------------
def _ap_reference(positive: list[bool], saliency: list[float]) -> float:
    if all(positive):
        return 1.0
    if not any(positive):
        return 0.0
    levels = sorted(set(saliency), reverse=True)
    points = []  # (precision, gained positives) at each score level, best first
    seen = hits = 0
    for lv in levels:
        members = [p for p, s in zip(positive, saliency, strict=True) if s == lv]
        seen += len(members)
        hits += sum(members)
        points.append((hits / seen, sum(members) > 0))
    picked = [max(p for p, _ in points[i:]) for i, (_, gained) in enumerate(points) if gained]
    return sum(picked) / len(picked)


@SETTINGS
@given(st.lists(st.tuples(st.booleans(), st.integers(-3, 3)), min_size=1, max_size=12))
def test_average_precision_matches_a_per_row_reference(rows):
    positive = [p for p, _ in rows]
    saliency = [s / 2 for _, s in rows]  # few distinct values: ties are common
    got = average_precision(np.array(positive)[:, None], np.array(saliency))
    assert got[0] == pytest.approx(_ap_reference(positive, saliency))


def test_by_hand_hit_and_ap():
    # 10 clips (T = 20 s). Row 0: the top clip (3) is VeryGood for annotator 2 only.
    # Row 1: the top clip (9) carries no label: a miss at every level.
    labels = [[[3, 1, 4, 0], [4, 4, 4, 4]], [[0, 2, 2, 2]]]
    sal = [[0, 0, 0, 0.9, 0.5, 0, 0, 0, 0, 0], [0.1] + [0] * 8 + [0.3]]
    m = highlight_metrics(_table(labels, sal))
    assert m is not None and m.n == 2
    assert m.hit1 == {"Fair": 50.0, "Good": 50.0, "VeryGood": 50.0}
    # VeryGood, row 0: annotator 1 ranks its positive (clip 4) 2nd of the non-tied
    # clips -> AP 1/2; annotator 2 has clips 3, 4 first -> 1; annotator 3 -> 1/2.
    # Row 1: no VeryGood clip -> 0 for all three.
    assert m.map["VeryGood"] == pytest.approx(100 * (0.5 + 1 + 0.5) / 6)
    # Fair, row 1: clip 0 ranks 2nd behind clip 9 -> AP 1/2 for each annotator.
    assert m.map["Fair"] == pytest.approx(100 * (0.5 + 1 + 0.5 + 1.5) / 6)


def test_labels_past_the_video_and_short_predictions():
    # T = 7 s has floor(7/2) = 3 labelled clips: clip 5 is dropped; the prediction is
    # padded with zeros for AP, and its arg-max past the labelled clips is a miss.
    assert label_matrix(np.array([[1, 4, 4, 4], [5, 4, 4, 4]]), 7.0)[:, 0].tolist() == [
        0, 4, 0]
    m = highlight_metrics(_table([[[1, 4, 4, 4]]], [[0.0, 0.0, 0.0, 0.0, 1.0]], t=7.0))
    assert m is not None and m.hit1["VeryGood"] == 0.0


def test_rows_without_labels_or_saliency_do_not_count():
    t = _table([[[0, 4, 4, 4]], []], [[1.0], [1.0]])
    assert highlight_metrics(t).n == 1  # type: ignore[union-attr]
    assert highlight_metrics(replace(t, truth_saliency=None)) is None
    none = replace(t, relevance=Ragged(np.empty(0), np.zeros(3, dtype=np.int64)))
    assert highlight_metrics(none) is None
    assert "highlight" not in grounding_metrics(none).to_dict()


def test_ground_truth_keeps_labels_and_rejects_malformed_ones(tmp_path: Path):
    rows = [{"qid": 1, "vid": "v", "duration": 10, "relevant_windows": [[0, 4]],
             "relevant_clip_ids": [0, 1], "saliency_scores": [[4, 3, 2], [1, 1, 1]]},
            {"qid": 2, "vid": "v", "duration": 10, "relevant_windows": [[0, 4]],
             "relevant_clip_ids": [0, 1], "saliency_scores": [[4, 3, 2]]},
            {"qid": 3, "vid": "v", "duration": 10, "relevant_windows": [[0, 4]]}]
    gt = tmp_path / "gt.jsonl"
    gt.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(InputError, match=r"gt.jsonl:2.*relevant_clip_ids has 2 clips but "
                                         r"saliency_scores has 1 rows"):
        read_ground_truth(gt)
    for loaded in (read_ground_truth(gt, on_error="reject"),
                   read_ground_truth_lean(gt, on_error="reject")):
        labels = loaded.table.truth_saliency
        assert labels is not None and labels.lengths.tolist() == [2, 0]
        assert labels.row(0).tolist() == [[0, 4, 3, 2], [1, 1, 1, 1]]


# ---- golden: the reference evaluator's own output on the shared files -----------------
#: ``HL-min-{Fair,Good,VeryGood}`` (HL-mAP, HL-Hit1) as Moment-DETR's standalone_eval
#: wrote them next to each prediction file in its repository (the PROVENANCE.md of
#: each folder names the repository and commit): QD-DETR
#: results/{video,audio}_checkpoint/{best,latest}_hl_val_preds_metrics.json @ 836bd92,
#: EaTR eatr_ckpt/best_hl_val_preds_metrics.json @ 37f3609, LA-DETR
#: results/ours/best_hl_val_preds_metrics.json @ 61d3f59.
HL_GOLDEN: dict[str, list[float]] = {
    "qd_detr/video_checkpoint_best_hl_val_preds.jsonl":
        [74.93, 76.65, 64.03, 74.77, 39.49, 64.13],
    "qd_detr/audio_checkpoint_best_hl_val_preds.jsonl":
        [75.03, 76.84, 64.08, 75.29, 39.34, 65.03],
    "latest_epoch/qd_detr_video_checkpoint__latest_hl_val_preds.jsonl":
        [74.99, 75.29, 63.89, 73.16, 39.39, 62.26],
    "eatr/best_hl_val_preds.jsonl": [70.22, 69.94, 59.92, 67.94, 36.90, 57.87],
    "la_detr/best_hl_val_preds.jsonl": [74.76, 75.35, 63.93, 73.94, 39.47, 63.61],
}


@pytest.mark.parametrize("rel", sorted(HL_GOLDEN))
def test_golden_hl_map_and_hit1(data_dir: Path, qvh_gt: Path, rel: str):
    table, _ = cover.load_labelled(data_dir / "qvhighlights" / rel, qvh_gt)
    hl = grounding_metrics(table).to_dict()["highlight"]
    assert hl["n"] == 1550
    got = [hl[f"HL-min-{lv}"][k] for lv in ("Fair", "Good", "VeryGood")
           for k in ("HL-mAP", "HL-Hit1")]
    assert [round(x, 2) for x in got] == HL_GOLDEN[rel]


def test_field_metrics_text_names_hl_at_verygood(data_dir: Path, qvh_gt: Path):
    from cover.report.tables import field_metrics_text

    table, _ = cover.load_labelled(
        data_dir / "qvhighlights/qd_detr/video_checkpoint_best_hl_val_preds.jsonl", qvh_gt)
    text = field_metrics_text(grounding_metrics(table).to_dict())
    assert text.endswith("HL-mAP 39.49, HIT@1 64.13 (VeryGood, 1550 rows)")


def test_golden_timechat_example_hit1(data_dir: Path, qvh_gt: Path):
    # timechat_repo_example_vhd/PROVENANCE.md: Hit@1 24.61 (Fair), 18.87 (VeryGood) over
    # the 1463 queries the file answers (saliency only, no windows).
    table, _ = cover.load_labelled(
        data_dir / "qvhighlights/timechat_repo_example_vhd/example_pred_file.json", qvh_gt,
        on_error="reject")
    m = highlight_metrics(table)
    assert m is not None and m.n == 1463
    assert (round(m.hit1["Fair"], 2), round(m.hit1["VeryGood"], 2)) == (24.61, 18.87)


def test_lean_and_full_readers_keep_the_same_labels(qvh_gt: Path):
    lean, full = read_ground_truth_lean(qvh_gt).table, read_ground_truth(qvh_gt).table
    assert lean.records is None and lean.truth_saliency is not None
    assert full.truth_saliency is not None
    assert np.array_equal(lean.truth_saliency.offsets, full.truth_saliency.offsets)
    assert np.array_equal(lean.truth_saliency.values, full.truth_saliency.values)


def test_golden_hl_on_the_public_test_ground_truth(data_dir: Path):
    # LA-DETR's test submission against highlight_test_with_gt.jsonl (registered as
    # qvh-test-gt for `cover data`); the evaluator's HL numbers are the ones the LA-DETR
    # repository committed beside it (results/ours/hl_test_metrics.json @ 61d3f59).
    from cover.io.datasets import QVH_TEST_GT
    from cover.io.fetch import REGISTRY

    assert REGISTRY["qvh-test-gt"].path == QVH_TEST_GT
    table, _ = cover.load_labelled(data_dir / "qvhighlights/la_detr/hl_test_submission.jsonl",
                                   data_dir / QVH_TEST_GT)
    hl = grounding_metrics(table).to_dict()["highlight"]
    got = [hl[f"HL-min-{lv}"][k] for lv in ("Fair", "Good", "VeryGood")
           for k in ("HL-mAP", "HL-Hit1")]
    assert hl["n"] == 1542
    assert [round(x, 2) for x in got] == [76.13, 76.52, 65.28, 75.23, 39.50, 63.10]


@SETTINGS
@given(st.data())
def test_all_rows_at_once_equal_the_row_by_row_definition(data):
    """HighlightSums works on a (rows, clips) grid: rows of different lengths, ties,
    labels past the last clip, predictions longer or shorter than the labelled clips
    give exactly the sums of label_matrix + average_precision row by row."""
    n = data.draw(st.integers(1, 6))
    durations = [data.draw(st.sampled_from([4.0, 7.0, 20.0, 31.0])) for _ in range(n)]
    labels, sal = [], []
    for t in durations:
        clips = int(t / 2)
        ids = data.draw(st.lists(st.integers(0, clips + 1), min_size=1, max_size=clips + 2,
                                 unique=True))
        labels.append([[i, *data.draw(st.tuples(*[st.integers(0, 4)] * 3))] for i in ids])
        m = data.draw(st.integers(1, clips + 3))
        sal.append([data.draw(st.integers(-2, 2)) / 2 for _ in range(m)])
    table = _table(labels, sal)
    table = replace(table, duration=np.array(durations))
    want_ap = dict.fromkeys(("Fair", "Good", "VeryGood"), 0.0)
    want_hit = dict.fromkeys(("Fair", "Good", "VeryGood"), 0)
    for i in range(n):
        scores = label_matrix(table.truth_saliency.row(i), durations[i])
        pred = np.asarray(sal[i], dtype=float)
        fitted = np.zeros(scores.shape[0])
        fitted[:min(fitted.size, pred.size)] = pred[:fitted.size]
        top = int(np.argmax(pred))
        for name, level in (("Fair", 2), ("Good", 3), ("VeryGood", 4)):
            positive = scores >= level
            want_hit[name] += int(top < scores.shape[0] and positive[top].any())
            want_ap[name] += float(average_precision(positive, fitted).sum())
    got = highlight_metrics(table)
    assert got is not None and got.n == n
    assert got.map == {k: 100.0 * v / (n * 3) for k, v in want_ap.items()}
    assert got.hit1 == {k: 100.0 * v / n for k, v in want_hit.items()}


def test_rows_in_grids_of_any_size_give_the_same_bits(qvh_gt: Path, data_dir: Path,
                                                      monkeypatch: pytest.MonkeyPatch):
    """HL-mAP ranks rows in groups of similar length, each group's (rows, clips) grid
    bounded (one long video no longer widens every row's grid: 1,550 rows beside one
    11-day video took 5.8 GB): any bound gives the same per-row values, so the same
    sums, down to one row a grid."""
    import cover.highlight_metrics as hm

    table, _ = cover.load_labelled(
        data_dir / "qvhighlights/qd_detr/video_checkpoint_best_hl_val_preds.jsonl", qvh_gt)
    table = table.take(np.arange(300))
    long = table.duration.copy()
    long[[3, 100]] = [40.0, 3600.0]  # a short video and an hour-long one among 150-s ones
    table = replace(table, duration=long)
    want = hm.highlight_rows(table)
    for cells in (1, 75 * 7, 75 * 100):
        monkeypatch.setattr(hm, "GRID_CELLS", cells)
        got = hm.highlight_rows(table)
        assert np.array_equal(got[0], want[0])
        for k in hm.HL_LEVELS:
            assert np.array_equal(got[1][k], want[1][k]) and np.array_equal(got[2][k], want[2][k])


def test_a_duration_of_too_many_label_clips_is_an_error_naming_the_row():
    """A duration in the wrong unit (1e12 s) is an error naming the row, and that the
    duration is its ground truth's (the row named is its prediction's), not an array of
    5e11 clips (MemoryError, or the process killed for memory)."""
    table = _table([[[0, 4, 4, 4]], [[1, 2, 3, 4]]], [[1.0, 0.5], [0.5, 1.0]])
    table = replace(table, duration=np.array([20.0, 1e12]))
    with pytest.raises(InputError, match=r"^<memory> \(qid=1\): HL-mAP's ranking of clips "
                                         r"over its duration of 1e\+12 s \(its ground "
                                         r"truth's\) would need more than "
                                         r"4,194,304 clips of 2 s"):
        highlight_metrics(table)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([1.0, 4.0, 31.0, 150.0, 3600.0, 86_400.0]), min_size=1,
                max_size=40), st.integers(1, 20_000))
def test_grid_groups_partition_the_rows_each_grid_within_its_bound(durations, cells):
    """Every row in exactly one group, in ascending order within it; a group's grid
    (rows x its widest row's clips) within the bound, unless the group is one row."""
    import cover.highlight_metrics as hm

    n = len(durations)
    table = replace(_table([[[0, 1, 1, 1]]] * n, [[1.0]] * n), duration=np.array(durations))
    rows = np.arange(n, dtype=np.int64)
    old, hm.GRID_CELLS = hm.GRID_CELLS, cells
    try:
        groups = hm._grid_groups(table, rows)
    finally:
        hm.GRID_CELLS = old
    assert sorted(np.concatenate(groups).tolist()) == rows.tolist()
    clips = np.maximum(np.floor(np.array(durations) / 2.0), 1.0)
    for g in groups:
        assert g.tolist() == sorted(g.tolist())
        assert g.size == 1 or g.size * clips[g].max() <= cells


def test_a_long_video_scores_as_the_row_by_row_definition():
    """One video of 20,000 label clips (11 hours) among short ones: its AP is the per-row
    definition's (the ranks scanned in blocks, not one step a rank)."""
    rng = np.random.default_rng(5)
    durations = [40_000.0, 150.0, 30.0]
    labels, sal = [], []
    for t in durations:
        clips = int(t / 2)
        ids = rng.choice(clips, size=min(clips, 3000), replace=False)
        labels.append([[i, *rng.integers(0, 5, size=3)] for i in ids])
        sal.append((rng.integers(-4, 5, size=clips) / 2).tolist())
    table = replace(_table(labels, sal), duration=np.array(durations))
    got = highlight_metrics(table)
    want = {k: 0.0 for k in ("Fair", "Good", "VeryGood")}
    for i, t in enumerate(durations):
        scores = label_matrix(table.truth_saliency.row(i), t)
        for name, level in (("Fair", 2), ("Good", 3), ("VeryGood", 4)):
            want[name] += float(average_precision(scores >= level,
                                                  np.asarray(sal[i], dtype=float)).sum())
    assert got is not None and got.map == {k: 100.0 * v / 9 for k, v in want.items()}
