"""UAG-OOPS ground truth, Oops! onset files and the four answer files (real data)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cover.errors import InputError
from cover.io.uag_oops import (
    authors_seconds,
    read_oops_onsets,
    read_uag_answers,
    read_uag_ground_truth,
)
from cover.ragged import segment_min

ANSWER_FILES = {  # file -> (text field, rows whose authors' parse has a null; PROVENANCE.md)
    "videochat2_pred_uag_oops_dataset_v1_null_fixed.json": ("videochat2_pred", 124),
    "video_llama2_pred_uag_oops_dataset_v1_null_fixed.json": ("video_llama2_pred", 15),
    "finetuned_videollama_pred_x_uag_oops_dataset_v1_null_fixed.json": ("video_llama2_pred", 8),
    "llama3_pred_x_blip2_text_rep_x_uag_oops_dataset_v1_null_fixed.json": ("llama3_pred", 8),
}


@pytest.fixture(scope="module")
def uag(data_dir: Path) -> Path:
    d = data_dir / "oops_uag"
    if not d.is_dir():
        pytest.skip("oops_uag data not staged")
    return d


def test_ground_truth_both_versions(uag: Path) -> None:
    fixed = read_uag_ground_truth(uag / "annotations/uag_oops_dataset_v1_start_time_fixed.json")
    with pytest.raises(InputError, match="saw no failure"):
        read_uag_ground_truth(uag / "annotations/uag_oops_dataset_v1.json")
    v1 = read_uag_ground_truth(uag / "annotations/uag_oops_dataset_v1.json", on_error="reject")
    # the held-out annotator saw no failure in 69 clips; one onset is 1 ms past the clip end
    assert len(v1.table) + len(v1.rejected) == 1589 and len(v1.rejected) == 70
    assert sum("saw no failure" in p.problem for p in v1.problems) == 69
    assert not fixed.problems
    for g in (fixed, v1):
        t = g.table
        s, e = t.truth_envelope()
        assert np.array_equal(e, t.duration)  # the window ends at the clip's end
        assert (s <= e).all() and t.query is not None and t.line is not None
    assert len(fixed.table) == 1589 and np.isin(v1.table.qid, fixed.table.qid).all()
    # vid is the source compilation: the clip name without its index
    assert fixed.table.qid[0].startswith(fixed.table.vid[0])
    assert np.unique(fixed.table.vid).size == 93
    assert int(fixed.table.line[0]) == 2  # line of the first entry in the pretty-printed file


def test_onsets_match_the_ground_truth(uag: Path) -> None:
    three = read_oops_onsets(uag / "annotations/oops_transition_times.json")
    held = read_oops_onsets(uag / "annotations/oops_heldout_transition_times.json")
    assert (len(three), len(held)) == (10961, 4791)
    fixed = read_uag_ground_truth(uag / "annotations/uag_oops_dataset_v1_start_time_fixed.json")
    v1 = read_uag_ground_truth(uag / "annotations/uag_oops_dataset_v1.json", on_error="reject")
    clips = fixed.table.qid
    w = three.take_clips(clips)
    h = held.take_clips(clips)
    assert (w.onsets.lengths == 3).all() and np.isfinite(w.onsets.values).all()
    first = segment_min(w.onsets.values, w.onsets.offsets)
    assert np.allclose(first, fixed.table.truth_envelope()[0])
    assert np.allclose(w.length, fixed.table.duration)
    # three valid worker onsets for every clip; the 4th annotator's is the older GT
    assert np.isnan(h.onsets.values).sum() == 69
    hv = held.take_clips(v1.table.qid)
    assert np.allclose(hv.onsets.values, v1.table.truth_envelope()[0])
    with pytest.raises(InputError, match="missing"):
        held.take_clips(np.array(["no such clip"]))


@pytest.mark.parametrize("name", sorted(ANSWER_FILES))
def test_answer_files(uag: Path, name: str) -> None:
    a = read_uag_answers(uag / "hasnat79_uag" / name)
    field, nulls = ANSWER_FILES[name]
    assert len(a) == 1589 and a.model_field == field
    assert int((~(np.isfinite(a.authors_start) & np.isfinite(a.authors_end))).sum()) == nulls
    fixed = read_uag_ground_truth(uag / "annotations/uag_oops_dataset_v1_start_time_fixed.json")
    j = np.argsort(fixed.table.qid)[np.searchsorted(np.sort(fixed.table.qid), a.clip)]
    assert np.array_equal(fixed.table.qid[j], a.clip)
    assert np.allclose(fixed.table.truth_envelope()[0][j], a.gt_start)


def test_authors_seconds() -> None:
    assert authors_seconds("00:00:04") == 4.0
    assert authors_seconds("0:05") == 5.0
    assert authors_seconds("1:02:03.5") == 3723.5
    assert authors_seconds("2.125") == 2.125
    assert np.isnan(authors_seconds(None)) and np.isnan(authors_seconds("soon"))


def test_keyed_json_errors(tmp_path: Path) -> None:
    p = tmp_path / "bad.json"
    p.write_text("[1, 2]")
    with pytest.raises(InputError, match="keyed by clip name"):
        read_uag_ground_truth(p)
    p.write_text(json.dumps({"a": {"start_time": 3, "end_time": 2}, "b": 5}))
    with pytest.raises(InputError, match="start_time > end_time"):
        read_uag_ground_truth(p)
    got = read_uag_ground_truth(p, on_error="reject")
    assert len(got.table) == 0 and len(got.problems) == 2


def test_ground_truth_is_detected_and_answer_files_are_not(uag: Path) -> None:
    from cover.io import formats

    for name in ("uag_oops_dataset_v1.json", "uag_oops_dataset_v1_start_time_fixed.json"):
        f, _ = formats.detect(uag / "annotations" / name, "ground_truth")
        assert f.name == "uag-oops"
    with pytest.raises(InputError, match="unrecognised format"):
        formats.detect(uag / "hasnat79_uag" / next(iter(ANSWER_FILES)), "ground_truth")


def test_parsed_answers_calibrate_certify_evaluate_from_the_command_line(
        uag: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """cover parse-answers -> calibrate -> certify -> evaluate, the ground truth given as
    the UAG-OOPS file itself (the answer files' end_time is the clip length)."""
    from cover.cli import main

    gt = uag / "annotations" / "uag_oops_dataset_v1_start_time_fixed.json"
    preds = tmp_path / "videochat2.jsonl"
    assert main(["parse-answers", str(uag / "hasnat79_uag" / next(iter(ANSWER_FILES))),
                 "--duration-field", "end_time", "-o", str(preds), "--samples", "0"]) == 0
    clips = sorted(read_uag_ground_truth(gt).table.qid.tolist())
    cal_q, test_q = tmp_path / "cal.txt", tmp_path / "test.txt"
    cal_q.write_text("\n".join(clips[::2]) + "\n")
    test_q.write_text("\n".join(clips[1::2]) + "\n")
    cal, regions, out = tmp_path / "cal.json", tmp_path / "regions.jsonl", tmp_path / "m.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--qids", str(cal_q),
                 "--on-error", "reject", "-o", str(cal)]) == 0
    assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--qids",
                 str(test_q), "--on-error", "reject", "-o", str(regions)]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--regions", str(regions), "--gt", str(gt), "--json",
                 str(out)]) == 0
    assert f"{gt}: uag-oops (1589 rows)" in capsys.readouterr().err
    got = json.loads(out.read_text())
    assert got["counts"]["rows"] + got["counts"]["rejected_at_certify"] == len(clips[1::2])
    assert got["counts"]["rows"] > 780
    assert got["counts"]["ground_truth_not_certified"] == len(clips[::2])
    assert got["refusal_rate"] > 0.05  # unparseable answers are whole-video regions
    assert 0.85 < got["marginal"]["coverage"] < 0.95
