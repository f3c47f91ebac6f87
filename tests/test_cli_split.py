"""``cover split``: a calibration/test split by source video, or an error saying why not."""

from __future__ import annotations

from pathlib import Path

import pytest

from cover.cli import main


@pytest.mark.parametrize("rows", [1, 3])
def test_queries_of_one_video_are_no_split(qvh_gt: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str],
                                           rows: int) -> None:
    """The first three queries of QVHighlights val share one source video: a split by
    video can only put them all on one side, which is no calibration/test split. It is
    an error naming the file and the counts, and no qid list is written."""
    gt = tmp_path / "gt.jsonl"
    gt.write_text("".join(qvh_gt.read_text().splitlines(keepends=True)[:rows]))
    assert main(["split", "--gt", str(gt), "--out-dir", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert (f"{gt}: cannot split {rows} quer{'y' if rows == 1 else 'ies'} from 1 source "
            "video into calibration and test: a split by source video needs at least 2 "
            "videos") in err
    assert "Traceback" not in err and not (tmp_path / "s").exists()


def test_two_videos_are_split_one_each_side(qvh_gt: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    lines = qvh_gt.read_text().splitlines(keepends=True)
    gt = tmp_path / "gt.jsonl"
    gt.write_text("".join(lines[:3] + lines[-1:]))  # one video, then another
    assert main(["split", "--gt", str(gt), "--out-dir", str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out
    assert "calibration 3 queries / 1 video, test 1 query / 1 video" in out or \
        "calibration 1 query / 1 video, test 3 queries / 1 video" in out
    cal = (tmp_path / "s" / "calibration_qids.txt").read_text().split()
    test = (tmp_path / "s" / "test_qids.txt").read_text().split()
    assert cal and test and len(cal) + len(test) == 4


def test_predictions_named_as_the_truth_give_the_truths_lists(
        qvh_gt: Path, qdetr_preds: Path, tmp_path: Path) -> None:
    """--preds names each query as the predictions do (cover.jobs.split): QD-DETR names
    QVHighlights' queries by their own qids, so the lists are the ground truth's."""
    assert main(["split", "--gt", str(qvh_gt), "--out-dir", str(tmp_path / "a")]) == 0
    assert main(["split", "--gt", str(qvh_gt), "--preds", str(qdetr_preds), "--out-dir",
                 str(tmp_path / "b")]) == 0
    for name in ("calibration_qids.txt", "test_qids.txt"):
        assert (tmp_path / "a" / name).read_text() == (tmp_path / "b" / name).read_text()


def test_a_list_is_never_written_onto_the_predictions(
        qvh_gt: Path, qdetr_preds: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The predictions are an input of the split: a list named like them is refused
    before anything is read or written, naming the flag."""
    out = tmp_path / "s"
    out.mkdir()
    preds = out / "test_qids.txt"
    preds.write_bytes(qdetr_preds.read_bytes())
    assert main(["split", "--gt", str(qvh_gt), "--preds", str(preds), "--out-dir",
                 str(out)]) == 2
    err = capsys.readouterr().err
    assert "--preds" in err and str(preds) in err and "Traceback" not in err
    assert preds.read_bytes() == qdetr_preds.read_bytes()
    assert not (out / "calibration_qids.txt").exists()


def test_rejected_predictions_are_said_and_their_queries_keep_the_truths_names(
        qvh_gt: Path, qdetr_preds: Path, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A prediction row that cannot be read is named on stderr (file, line), and its
    query is still split, under the ground truth's own name: no query is lost."""
    lines = qdetr_preds.read_text().splitlines(keepends=True)
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(["{broken\n", *lines[1:]]))
    assert main(["split", "--gt", str(qvh_gt), "--preds", str(preds), "--out-dir",
                 str(tmp_path / "b")]) == 0
    assert main(["split", "--gt", str(qvh_gt), "--out-dir", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    assert f"cover: 1 row(s) rejected in {preds}: malformed JSON" in err
    assert f"{preds}:1: malformed JSON" in err
    for name in ("calibration_qids.txt", "test_qids.txt"):
        assert (tmp_path / "a" / name).read_text() == (tmp_path / "b" / name).read_text()
