"""``cover online``: replay orders, the injected grounder switch, outputs, clear errors;
and on the real QVHighlights stream, ACI's miss rate returns to alpha where split
conformal stays off."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cover.cli import main
from cover.data.table import GroundingTable
from cover.jobs.online import replay, stream_order


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _files(tmp_path: Path, n: int = 120, widen: float = 0.0, name: str = "preds"
           ) -> tuple[Path, Path]:
    rng = np.random.default_rng(0)
    preds, gts = [], []
    for i in range(n):
        s = float(rng.uniform(10, 90))
        e = s + float(rng.uniform(5, 40))
        preds.append({"qid": i, "vid": f"v{i}_0.0_150.0",
                      "pred_relevant_windows": [[max(s - widen, 0), min(e + widen, 150), 0.9]]})
        ts = max(0.0, s + float(rng.normal(0, 6)))
        gts.append({"qid": i, "vid": f"v{i}_0.0_150.0", "duration": 150,
                    "relevant_windows": [[ts, min(150.0, max(ts + 1, e + rng.normal(0, 6)))]]})
    return (_write_jsonl(tmp_path / f"{name}.jsonl", preds),
            _write_jsonl(tmp_path / "gt.jsonl", gts))


def test_stream_orders():
    t = GroundingTable.from_arrays(qid=[1, 2, 3, 4], duration=[30.0, 10.0, 20.0, 10.0],
                                   pred_start=[0.0, 0.0, np.nan, 0.0],
                                   pred_end=[5.0, 9.0, np.nan, 1.0])
    assert stream_order(t, "file").tolist() == [0, 1, 2, 3]
    assert stream_order(t, "reverse").tolist() == [3, 2, 1, 0]
    assert stream_order(t, "duration").tolist() == [1, 3, 2, 0]
    assert stream_order(t, "pred_length").tolist() == [3, 0, 1, 2]  # refusal last
    assert sorted(stream_order(t, "random", seed=1).tolist()) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="unknown stream order"):
        stream_order(t, "score")


def test_cli_writes_steps_summary_and_figure(tmp_path, capsys):
    preds, gt = _files(tmp_path)
    other, _ = _files(tmp_path, widen=30.0, name="wide")
    out = tmp_path / "out"
    assert main(["online", "--preds", str(preds), "--gt", str(gt), "--out-dir", str(out),
                 "--gamma", "0.05", "--order", "random", "--switch-preds", str(other),
                 "--switch-name", "wide grounder", "--window", "20"]) == 0
    steps = [json.loads(x) for x in (out / "online_steps.jsonl").read_text().splitlines()]
    summary = json.loads((out / "online_summary.json").read_text())
    assert len(steps) == summary["steps"] and summary["n_calibration"] + len(steps) == 120
    cut = summary["switch_step"]
    assert {s["grounder"] for s in steps[:cut]} == {"preds"}
    assert {s["grounder"] for s in steps[cut:]} == {"wide grounder"}
    assert [s["t"] for s in steps] == list(range(1, len(steps) + 1))
    assert summary["aci_miss_rate"] == pytest.approx(np.mean([s["miss"] for s in steps]))
    assert (out / "online_miss_rate.png").read_bytes()[:4] == b"\x89PNG"
    printed = capsys.readouterr().out
    assert "ACI guarantee" in printed and "online_miss_rate.png" in printed
    # the misses (or their absence) in words, right after what was replayed, and saved
    said = printed.splitlines()[1:1 + len(summary["misses"])]
    assert said == summary["misses"] and said[0].startswith(("Miss: ", "No miss: "))


def test_cli_errors(tmp_path, capsys):
    preds, gt = _files(tmp_path)
    short = _write_jsonl(tmp_path / "short.jsonl", [json.loads(x) for x in
                                                     preds.read_text().splitlines()[:5]])
    out = str(tmp_path / "o")
    assert main(["online", "--preds", str(preds), "--gt", str(gt), "--out-dir", out,
                 "--switch-preds", str(short)]) == 2
    assert "have no prediction there" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["online", "--preds", str(preds), "--gt", str(gt), "--out-dir", out,
              "--gamma", "2"])
    assert "gamma must be" in capsys.readouterr().err


def test_real_stream_switched_grounder(qvh_gt, data_dir):
    """Moment-DETR's SLS stream switched to QD-DETR's half way: every QD-DETR SLS score
    exceeds Moment-DETR's calibrated threshold, so split conformal misses every row after
    the switch; ACI's long-run miss rate stays within its bound and its last window is
    back at alpha."""
    from cover.io.labelled import load_labelled

    q = data_dir / "qvhighlights"
    a, _ = load_labelled(q / "moment_detr" / "sample_val_preds.jsonl", qvh_gt)
    b, _ = load_labelled(q / "qd_detr" / "video_checkpoint_best_hl_val_preds.jsonl", qvh_gt)
    from cover.data.splits import split_by_unit

    cal = split_by_unit(a.units, cal_frac=0.4, seed=42).calibration
    run = replay(a, calibration=cal, alpha="0.1", gamma="0.02", score="sls", switch_table=b)
    s = run.summary()
    assert s["steps"] == 927 and s["switch_step"] == 464
    assert s["split_miss_rate_after"] == 1.0 and s["split_miss_rate_before"] < 0.15
    assert abs(s["aci_miss_rate"] - 0.1) <= s["aci_bound"]
    assert abs(s["aci_miss_rate_after"] - 0.1) < 0.02
    assert s["aci_miss_rate_last_window"] == pytest.approx(0.1, abs=0.02)


def test_cli_reads_any_format_with_its_format_flags(data_dir, tmp_path, capsys):
    """A video-LLM's DisTime answers on Charades-STA against the Charades-STA text truth,
    its durations named by --gt-durations (the same flags as calibrate and validity):
    every test query is replayed, and a durations file that is not there is named."""
    c = data_dir / "charades_sta"
    preds = c / "distime" / "DisTime-InternVL2_5-8B_charades_test_results.json"
    args = ["online", "--preds", str(preds),
            "--gt", str(c / "annotations" / "charades_sta_test.txt"), "--no-figure",
            "--out-dir", str(tmp_path / "o")]
    assert main([*args, "--gt-durations", str(c / "annotations" / "charades.json")]) == 0
    summary = json.loads((tmp_path / "o" / "online_summary.json").read_text())
    assert summary["n_calibration"] + summary["steps"] == 3720
    capsys.readouterr()
    assert main([*args, "--gt-durations", str(tmp_path / "none.json")]) == 2
    assert "none.json" in capsys.readouterr().err


def test_online_reads_with_clip_and_strict(tmp_path, capsys):
    """--strict and --clip reach `cover online`'s reader as every other command's: a
    window reaching past the video is clipped and replayed by default, rejected with
    --strict (and the stream is one row shorter)."""
    preds, gt = _files(tmp_path)
    rows = [json.loads(x) for x in preds.read_text().splitlines()]
    rows[3]["pred_relevant_windows"] = [[140.0, 170.0, 0.9]]  # T = 150
    _write_jsonl(preds, rows)
    steps = {}
    for name, extra in (("plain", []), ("strict", ["--strict", "--on-error", "reject"])):
        out = tmp_path / name
        assert main(["online", "--preds", str(preds), "--gt", str(gt), "--out-dir", str(out),
                     "--clip", "1", "--no-figure", *extra]) == 0
        steps[name] = json.loads((out / "online_summary.json").read_text())
    total = {k: s["steps"] + s["n_calibration"] for k, s in steps.items()}
    assert total == {"plain": 120, "strict": 119}


def test_online_keeps_the_queries_of_short_videos(tmp_path):
    """--max-duration reaches `cover online`'s reader: only queries on videos of at most
    that many seconds are replayed."""
    preds, gt = _files(tmp_path)
    truth = [json.loads(x) for x in gt.read_text().splitlines()]
    for t in truth[:40]:
        t["duration"] = 300
    _write_jsonl(gt, truth)
    out = tmp_path / "short"
    assert main(["online", "--preds", str(preds), "--gt", str(gt), "--out-dir", str(out),
                 "--max-duration", "150", "--no-figure"]) == 0
    s = json.loads((out / "online_summary.json").read_text())
    assert s["steps"] + s["n_calibration"] == 80


def test_the_misses_come_first_in_plain_words(qvh_gt, data_dir):
    """QD-DETR's rows replayed by predicted length: the fixed split threshold misses 18.1%
    of the first half (463 rows) at alpha 0.1, beyond sampling noise (12.7%); ACI does
    not. A stream in file order misses nowhere, and says so."""
    from cover.data.splits import split_by_unit
    from cover.io.labelled import load_labelled

    t, _ = load_labelled(data_dir / "qvhighlights" / "qd_detr" /
                         "video_checkpoint_best_hl_val_preds.jsonl", qvh_gt)
    cal = split_by_unit(t.units, cal_frac=0.4, seed=42).calibration
    run = replay(t, calibration=cal, alpha="0.1", order="pred_length")
    assert run.misses("pred_length") == [
        "Miss: split conformal (one fixed threshold) missed 18.1% of the 463 rows in the "
        "first half (order=pred_length), above alpha = 0.1 by more than sampling noise "
        "allows (12.7%)."]
    calm = replay(t, calibration=cal, alpha="0.1", order="file").misses("file")
    assert calm == ["No miss: each rule's miss rate on each part of the stream (order=file) "
                    "lies within sampling noise of alpha = 0.1."]


def test_the_out_dir_is_a_results_folder_written_all_or_nothing(tmp_path, capsys,
                                                                  monkeypatch):
    """--out-dir is written as every results folder is: a folder holding files COVER did
    not write is refused before any reading; a previous run's folder is replaced whole;
    a run that fails while writing leaves the folder as it was (online wrote each file
    into the folder as it went)."""
    preds, gt = _files(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main(["online", "--preds", str(preds), "--gt", str(tmp_path / "absent.jsonl"),
                 "--out-dir", str(out)]) == 2
    assert "exists and is not a COVER results folder (it holds notes.txt)" in (
        capsys.readouterr().err)
    (out / "notes.txt").unlink()
    cmd = ["online", "--preds", str(preds), "--gt", str(gt), "--out-dir", str(out),
           "--no-figure"]
    assert main(cmd) == 0
    (out / "stale.png").write_bytes(b"old")  # a file of an earlier run goes with it
    first = (out / "online_summary.json").read_text()
    import cover.jobs.online as online

    def broken(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(online, "write_json", broken)
    with pytest.raises(OSError):
        online.run_online(preds=preds, gt=gt, out=out, figure=False)
    assert sorted(p.name for p in out.iterdir()) == [
        "online_steps.jsonl", "online_summary.json", "stale.png"]
    assert (out / "online_summary.json").read_text() == first
    assert not list(tmp_path.glob(".out.*.tmp"))
    monkeypatch.undo()
    assert main(cmd) == 0
    assert sorted(p.name for p in out.iterdir()) == ["online_steps.jsonl",
                                                     "online_summary.json"]


def test_a_switch_to_a_grounder_naming_queries_otherwise_replays_the_same_queries(
        data_dir: Path, tmp_path: Path) -> None:
    """DisTime (named by Charades-STA's line numbers) then TGN (named <vid>-<k>) on the
    same queries: the switch file's rows are the stream's queries under the stream's
    names (it stopped: "1092 streamed query id(s) have no prediction there"), and the
    one fixed threshold misses far above alpha after the switch."""
    d = data_dir / "charades_sta"
    out = tmp_path / "on"
    assert main(["online", "--preds",
                 str(d / "distime/DisTime-InternVL2_5-8B_charades_test_results.json"),
                 "--switch-preds", str(d / "tgn/TGN_predict_proposals_test_nms_0.55.json"),
                 "--gt", str(d / "annotations/charades_sta_test.txt"), "--gt-durations",
                 str(d / "annotations/charades.json"), "--no-figure", "--out", str(out)]) == 0
    doc = json.loads((out / "online_summary.json").read_text())
    steps = (out / "online_steps.jsonl").read_text().splitlines()
    assert len(steps) == 2184
    assert doc["steps"] == len(steps) and doc["switch_step"] == 1092
    assert doc["split_miss_rate_after"] > 0.3 > 0.15 > doc["split_miss_rate_before"]
    assert doc["aci_miss_rate_after"] < 0.15  # the adaptive rule keeps near alpha
