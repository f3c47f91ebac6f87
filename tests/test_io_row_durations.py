"""The one reading of ``--videos`` (:mod:`cover.io.row_durations`): a durations file by
vid; a ground truth by vid where each video has one length, else by qid; by qid for rows
that name no vid; the same index for the API as for the command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cover.cli import main
from cover.errors import InputError
from cover.io import read_row_durations

UAG_GT = "oops_uag/annotations/uag_oops_dataset_v1_start_time_fixed.json"
UAG_ANSWERS = "oops_uag/hasnat79_uag/video_llama2_pred_uag_oops_dataset_v1_null_fixed.json"


def test_a_durations_file_is_read_by_vid_and_rows_naming_none_fall_back_to_it(tmp_path):
    videos = tmp_path / "videos.jsonl"
    videos.write_text(json.dumps({"vid": "a", "duration": 30.0}) + "\n")
    for named in (True, False):  # no ground truth to look a query up in: by vid
        got = read_row_durations(videos, vid_named=named)
        assert got.truth_format is None and got.index.by == "vid"
        assert got.index.texts()[0].tolist() == ["a"]


def test_a_file_that_is_neither_is_the_durations_readers_error(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\n")
    with pytest.raises(InputError, match=str(bad)):
        read_row_durations(bad)


def test_a_ground_truth_with_one_length_a_video_is_read_by_vid(data_dir: Path):
    text = data_dir / "charades_sta/annotations/charades_sta_test.txt"
    got = read_row_durations(text)
    assert (got.truth_format, got.index.by) == ("charades-sta", "vid")
    vids, t = got.index.texts()
    doc = json.loads((data_dir / "charades_sta/annotations/charades.json").read_text())
    assert np.array_equal(t, [doc[v]["duration"] for v in vids.tolist()])
    # rows that name no vid look their query up instead
    by_qid = read_row_durations(text, vid_named=False)
    assert by_qid.index.by == "qid" and by_qid.index.vid.size == 3720


def test_clips_of_one_video_of_several_lengths_are_read_by_qid(data_dir: Path):
    gt = data_dir / UAG_GT
    got = read_row_durations(gt)
    assert (got.truth_format, got.index.by) == ("uag-oops", "qid")
    qids, t = got.index.texts()
    doc = json.loads(gt.read_text())
    assert np.array_equal(t, [doc[q]["end_time"] for q in qids.tolist()])  # the clip's


def test_the_api_certifies_with_the_index_the_command_reads(data_dir: Path, tmp_path: Path,
                                                           capsys) -> None:
    """cover.stream.certify_jsonl given read_row_durations' index writes the bytes
    `cover certify --videos` writes, on a file whose durations are by qid."""
    from cover.calibrate import Calibrator
    from cover.stream import certify_jsonl

    gt, preds = data_dir / UAG_GT, tmp_path / "preds.jsonl"
    assert main(["parse-answers", str(data_dir / UAG_ANSWERS), "-o", str(preds)]) == 0
    cal = tmp_path / "cal.json"  # the join gives each row its clip's length
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt),
                 "--on-error", "reject", "-o", str(cal)]) == 0
    cli, api = tmp_path / "cli.jsonl", tmp_path / "api.jsonl"
    assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--videos",
                 str(gt), "--on-error", "reject", "-o", str(cli)]) == 0
    capsys.readouterr()
    certify_jsonl(Calibrator.load(cal), preds, api, videos=read_row_durations(gt).index,
                  videos_source=str(gt))
    assert api.read_bytes() == cli.read_bytes()
