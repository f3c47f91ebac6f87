"""Every ground-truth and prediction file in ../shared/data loads in the format its
PROVENANCE.md describes, with the row and video counts it states."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cover.data.units import split_units
from cover.io import formats
from cover.io.charades_rf import no_moment_qids
from cover.io.qvhighlights import read_durations, read_ground_truth

# (path, format, rows kept, videos, rows rejected as annotation noise, ends past T)
GROUND_TRUTH = [
    ("lighthouse/charades_test_release.jsonl", "moment-detr-gt", 3720, 1334, 0, 0),
    ("lighthouse/charades_train_release.jsonl", "moment-detr-gt", 12404, None, 0, 0),
    ("lighthouse/tacos_test_release.jsonl", "moment-detr-gt", 4001, 25, 0, 0),
    ("lighthouse/tacos_val_release.jsonl", "moment-detr-gt", 4436, 27, 0, 0),
    ("lighthouse/tacos_train_release.jsonl", "moment-detr-gt", 9790, 75, 0, 0),
    ("lighthouse/activitynet_val_release.jsonl", "moment-detr-gt", 17505, 4917, 0, 5),
    ("qvhighlights/annotations/highlight_train_release.jsonl", "moment-detr-gt", 7218, None,
     0, None),
    ("qvhighlights/annotations/highlight_val_release.jsonl", "moment-detr-gt", 1550, None, 0,
     None),
    ("qvhighlights/annotations/highlight_test_with_gt.jsonl", "moment-detr-gt", 1542, None, 0,
     None),
    ("charades_sta/detr_tvr_format/charades_sta_test_tvr_format.jsonl", "moment-detr-gt", 3720,
     1334, 0, 0),
    ("charades_sta/annotations/charades_sta_test.txt", "charades-sta", 3720, 1334, 0, 562),
    ("charades_sta/annotations/charades_sta_train.txt", "charades-sta", 12408, 5338, 0, 1802),
    ("activitynet_captions/annotations/train.json", "activitynet-captions", 37419, 10009, 2,
     None),
    ("activitynet_captions/annotations/val_1.json", "activitynet-captions", 17505, 4917, 0, 5),
    ("activitynet_captions/annotations/val_2.json", "activitynet-captions", 17031, 4885, 0, 1),
    ("tacos/annotations/train.json", "tacos", 9790, 75, 0, None),
    ("tacos/annotations/val.json", "tacos", 4436, 27, 0, None),
    ("tacos/annotations/test.json", "tacos", 4001, 25, 0, None),
    ("charades_cd/momentdiff_repo/charades_train.json", "charades-cd", 11071, 4564, 0, None),
    ("charades_cd/momentdiff_repo/charades_val.json", "charades-cd", 859, 333, 0, None),
    ("charades_cd/momentdiff_repo/charades_test_iid.json", "charades-cd", 823, 333, 0, 151),
    ("charades_cd/momentdiff_repo/charades_test_ood.json", "charades-cd", 3375, 1442, 0, 348),
    ("activitynet_cd/momentdiff_repo/anet_test_iid_momentdiff.jsonl", "moment-detr-gt", 3443,
     None, 0, None),
    # 2 reversed windows (the ActivityNet train ones) rejected: 13576 + 2 = 13578 rows
    ("activitynet_cd/momentdiff_repo/anet_test_ood_momentdiff.jsonl", "moment-detr-gt", 13576,
     None, 2, None),
    # qids restart part-way: the repeats are rejected as duplicates (see by-line below)
    ("charades_sta_len_mom/momentdiff_repo/test_len_80.jsonl", "moment-detr-gt", 788, None, 197,
     None),
    ("charades_sta_len_mom/momentdiff_repo/test_mom_80.jsonl", "moment-detr-gt", 1038, None, 259,
     None),
    # answerable half only; the 1860 no-answer queries are counted below
    ("charades_rf/ratsg_repo/charades_sta_test2.0.json", "charades-rf", 1860, None, 0, None),
    ("charades_rf/ratsg_repo/charades_sta_val2.0.json", "charades-rf", 1860, None, 0, None),
]


@pytest.mark.parametrize(("rel", "fmt", "rows", "videos", "rejected", "past_end"), GROUND_TRUTH,
                         ids=[g[0] for g in GROUND_TRUTH])
def test_every_ground_truth_file_loads_with_provenance_counts(
        data_dir: Path, rel: str, fmt: str, rows: int, videos: int | None, rejected: int,
        past_end: int | None) -> None:
    got = formats.read(data_dir / rel, "ground_truth", options=formats.Options(on_error="reject"))
    t = got.loaded.table
    assert got.format == fmt
    assert len(t) == rows
    # every row set aside counts, also where a document's rows share a line
    assert got.loaded.n_rejected == rejected
    assert sum(p.action == "rejected" for p in got.loaded.problems) == rejected
    if videos is not None:
        assert np.unique(t.vid).size == videos
    if past_end is not None:
        e = t.require_truth().ends
        assert int((e > t.duration[t.require_truth().rows] + 1e-9).sum()) == past_end
    if fmt != "moment-detr-gt" or not rel.startswith("qvhighlights"):
        # the split unit of every non-QVHighlights dataset is its video id itself
        assert (split_units(t.vid) == t.vid).all()


@pytest.mark.parametrize(("name", "rows"), [("len", 985), ("mom", 1297)])
def test_momentdiff_len_mom_by_line_keeps_every_row(data_dir: Path, name: str,
                                                    rows: int) -> None:
    got = formats.read(data_dir / f"charades_sta_len_mom/momentdiff_repo/test_{name}_80.jsonl",
                       "ground_truth", format="moment-detr-gt-by-line")
    assert len(got.loaded.table) == rows and not got.native_qids
    assert (got.loaded.table.qid == np.arange(rows).astype(str)).all()


def test_activitynet_train_reversed_windows_are_rejected_by_name(data_dir: Path) -> None:
    path = data_dir / "activitynet_captions/annotations/train.json"
    got = formats.read(path, "ground_truth", options=formats.Options(on_error="reject"))
    bad = [p for p in got.loaded.problems if p.action == "rejected"]
    assert {p.qid for p in bad} == {"v_0bosp4-pyTM_3", "v_rhOtqArO-3Y_5"}
    assert all(p.problem == "a true window has start > end" and p.line == 1 for p in bad)
    with pytest.raises(Exception, match="2 bad row"):
        formats.read(path, "ground_truth")


@pytest.mark.parametrize("split", ["test", "val"])
def test_charades_rf_sets_no_answer_queries_aside_counted(data_dir: Path, split: str) -> None:
    got = formats.read(data_dir / f"charades_rf/ratsg_repo/charades_sta_{split}2.0.json",
                       "ground_truth")
    assert len(no_moment_qids(got.loaded)) == 1860
    assert len(got.loaded.table) + len(no_moment_qids(got.loaded)) == 3720
    assert np.unique(got.loaded.table.vid).size + 0 <= (1035 if split == "test" else 998)


@pytest.mark.parametrize("split", ["train", "val", "test"])
def test_tacos_seconds_equal_lighthouse(data_dir: Path, split: str) -> None:
    """frame / fps with the file's fps reproduces Lighthouse's seconds (which also clip
    ends to the duration)."""
    ours = formats.read(data_dir / f"tacos/annotations/{split}.json", "ground_truth").loaded.table
    lh = read_ground_truth(data_dir / f"lighthouse/tacos_{split}_release.jsonl").table
    assert (ours.qid == lh.qid).all() and (ours.query == lh.query).all()
    np.testing.assert_allclose(ours.duration, lh.duration, rtol=0, atol=1e-9)
    tr, lt = ours.require_truth(), lh.require_truth()
    np.testing.assert_allclose(tr.starts, lt.starts, atol=1e-9)
    np.testing.assert_allclose(np.minimum(tr.ends, ours.duration), lt.ends, atol=1e-9)


def test_charades_sta_text_equals_lighthouse_after_clipping(data_dir: Path) -> None:
    from cover.io.charades_sta import read_charades_sta

    ours = read_charades_sta(data_dir / "charades_sta/annotations/charades_sta_test.txt",
                             qid_offset=12404).table
    lh = read_ground_truth(data_dir / "lighthouse/charades_test_release.jsonl").table
    assert (ours.qid == lh.qid).all() and (ours.vid == lh.vid).all()
    assert (ours.query == lh.query).all() and (ours.duration == lh.duration).all()
    tr = ours.require_truth()
    assert (tr.starts == lh.require_truth().starts).all()
    assert (np.minimum(tr.ends, ours.duration) == lh.require_truth().ends).all()


def test_qvhighlights_unlabelled_test_split_loads_as_durations(data_dir: Path) -> None:
    vid, dur = read_durations(data_dir / "qvhighlights/annotations/highlight_test_release.jsonl")
    assert vid.size > 0 and (dur > 0).all()
    with pytest.raises(Exception, match="durations file"):
        formats.detect(data_dir / "qvhighlights/annotations/highlight_test_release.jsonl",
                       "ground_truth")


PREDICTIONS = [
    ("charades_sta/la_detr/hl_test_submission.jsonl", "moment-detr", 3720, 3720),
    ("charades_sta/timechat_repo_example/example_pred_file.json", "timechat-tvg", 500, 220),
    ("qvhighlights/timechat_repo_example_vhd/example_pred_file.json", "timechat-vhd", 1463, 0),
    ("qvhighlights/qd_detr/video_checkpoint_best_hl_val_preds.jsonl", "moment-detr", 1550, 1550),
]


@pytest.mark.parametrize(("rel", "fmt", "rows", "with_window"), PREDICTIONS,
                         ids=[p[0] for p in PREDICTIONS])
def test_prediction_files_detected(data_dir: Path, rel: str, fmt: str, rows: int,
                                   with_window: int) -> None:
    got = formats.read(data_dir / rel, "predictions")
    assert got.format == fmt
    assert len(got.loaded.table) == rows
    assert int(got.loaded.table.has_interval.sum()) == with_window


def test_timechat_vhd_is_saliency_only_with_clip_counts(data_dir: Path) -> None:
    got = formats.read(data_dir / "qvhighlights/timechat_repo_example_vhd/example_pred_file.json",
                       "predictions").loaded.table
    gt = read_ground_truth(data_dir / "qvhighlights/annotations/highlight_val_release.jsonl").table
    j = np.searchsorted(gt.qid[np.argsort(gt.qid)], got.qid)
    order = np.argsort(gt.qid)[j]
    assert (gt.vid[order] == got.vid).all()  # v_ prefix and .mp4 removed
    assert (got.relevance.lengths == np.ceil(gt.duration[order] / 2)).all()
    all_zero = np.add.reduceat(np.abs(got.relevance.values), got.relevance.offsets[:-1]) == 0
    assert int(all_zero.sum()) == 675


def test_timeit_ground_truth_equals_charades_text(data_dir: Path) -> None:
    charades_json = data_dir / "charades_sta/annotations/charades.json"
    timeit = formats.read(data_dir / "charades_sta/timechat_repo_example/example_gt_file.json",
                          "ground_truth", options=formats.Options(durations=charades_json))
    text = formats.read(data_dir / "charades_sta/annotations/charades_sta_test.txt",
                        "ground_truth")
    assert timeit.format == "timeit-gt"
    a, b = timeit.loaded.table, text.loaded.table
    assert (a.qid == b.qid).all() and (a.vid == b.vid).all() and (a.query == b.query).all()
    assert (a.require_truth().ends == b.require_truth().ends).all()


def test_durations_file_is_not_ground_truth(data_dir: Path) -> None:
    with pytest.raises(Exception, match=r"unrecognised format.*durations file"):
        formats.detect(data_dir / "charades_sta/annotations/charades.json", "ground_truth")
