"""``cover compare``: two real QVHighlights grounders (skips without the data), two rules
on one file, and the dropped-query accounting on synthetic files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_files import leftovers, snapshot, synthetic, synthetic_rows, write_jsonl
from cover.cli import main
from cover.errors import InputError


def _by_metric(doc: dict) -> dict[str, dict]:
    return {m["metric"]: m for m in doc["metrics"]}


def test_qd_detr_vs_moment_detr_on_qvhighlights(data_dir: Path, qvh_gt: Path,
                                                qdetr_preds: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    mdetr = data_dir / "qvhighlights" / "moment_detr" / "sample_val_preds.jsonl"
    before = snapshot(qdetr_preds, mdetr, qvh_gt)
    out, page = tmp_path / "cmp.json", tmp_path / "cmp.html"
    assert main(["compare", str(qdetr_preds), str(mdetr), "--gt", str(qvh_gt), "--json",
                 str(out), "--html", str(page)]) == 0
    console = capsys.readouterr()
    doc = json.loads(out.read_text())
    q = doc["queries"]
    assert (q["common"], q["only_a"], q["only_b"]) == (1550, 0, 0)
    assert (q["calibration"], q["test"], q["videos_test"]) == (623, 927, 284)
    m = _by_metric(doc)
    # Golden-ish: the split (seed 42) and both grounders fixed, so are these.
    assert m["coverage"]["a"] == pytest.approx(0.907, abs=5e-4)
    assert m["coverage"]["b"] == pytest.approx(0.933, abs=5e-4)
    assert m["R1@0.7"]["diff"] == pytest.approx(12.08, abs=0.01)
    assert m["mIoU"]["diff"] == pytest.approx(8.46, abs=0.01)
    assert m["mIoU"]["verdict"] == "qd_detr better"
    assert m["coverage"]["verdict"] == "moment_detr higher"
    for r in doc["metrics"]:
        assert r["bounds"][0] <= r["ci_lo"] <= r["diff"] <= r["ci_hi"] <= r["bounds"][1]
    assert "no query dropped" in console.err
    assert "95% CI (videos)" in console.out and "qd_detr better" in console.out
    html = page.read_text()
    assert "class='summary'" in html and "calibration band" in html
    # A's calibration band is the one `cover calibrate` prints for this split's 623
    # calibration queries (the demo's split): widened for the 190 videos they share.
    band = doc["a"]["calibration_band"]
    assert band["name"] == "calibration band"
    assert (band["lo"], band["hi"]) == pytest.approx((0.8717, 0.9267), abs=5e-5)
    # Each side's coverage against its test band (the calibration band plus the test
    # sample's own noise, clustered by video), as cover evaluate tests it: Moment-DETR's
    # 0.933 lies above its band on this split, and the console says so first.
    ta, tb = doc["a"]["test_band"], doc["b"]["test_band"]
    assert ta["lo"] <= ta["coverage"] <= ta["hi"] and tb["coverage"] > tb["hi"]
    assert ta["lo"] < band["lo"] and band["hi"] < ta["hi"]  # wider than the calibration band
    first = console.out.splitlines()[0]
    assert first == (f"off its band: moment_detr (NORM, split) coverage 0.933 is above its 95% "
                     f"test band [{tb['lo']:.3f}, {tb['hi']:.3f}]: more coverage than asked, "
                     "paid for in length"), console.out
    assert console.out.splitlines()[1].startswith("A = qd_detr")
    assert "<b>Off its band</b>: moment_detr (NORM, split) coverage 0.933" in html
    assert f"test band [{tb['lo']:.3f}, {tb['hi']:.3f}] (coverage 0.933)" in html
    assert snapshot(qdetr_preds, mdetr, qvh_gt) == before
    assert leftovers(tmp_path) == []


def test_two_rules_on_one_file_differ_only_in_the_regions(tmp_path: Path) -> None:
    preds, gt = synthetic(tmp_path, n=120)
    out = tmp_path / "cmp.json"
    assert main(["compare", str(preds), "--gt", str(gt), "--score-b", "sec",
                 "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["a"]["score"] == "norm" and doc["b"]["score"] == "sec"
    assert doc["a"]["name"] != doc["b"]["name"]
    for r in doc["metrics"]:
        if r["metric"].startswith("R1") or r["metric"] == "mIoU":
            # Same grounder: the point metrics are the same query by query.
            assert (r["diff"], r["ci_lo"], r["ci_hi"]) == (0.0, 0.0, 0.0)
            assert r["verdict"] == "no clear difference"


def test_nothing_to_compare_is_an_error(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    preds, gt = synthetic(tmp_path)
    assert main(["compare", str(preds), "--gt", str(gt)]) == 2
    assert "nothing to compare: give a second prediction file B" in capsys.readouterr().err


def test_queries_only_one_file_predicts_are_dropped_and_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows, gts = synthetic_rows(90)
    gt = write_jsonl(tmp_path / "gt.jsonl", list(gts))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a = write_jsonl(tmp_path / "a" / "preds.jsonl", list(rows))
    b = write_jsonl(tmp_path / "b" / "preds.jsonl", list(rows[:84]))
    # B has no prediction for qids 84..89: those queries are compared on neither side,
    # and the run names them.
    out = tmp_path / "cmp.json"
    code = main(["compare", str(a), str(b), "--gt", str(gt), "--json", str(out),
                 "--on-error", "reject"])
    err = capsys.readouterr().err
    assert code == 0, err
    q = json.loads(out.read_text())["queries"]
    assert (q["common"], q["only_a"], q["only_b"]) == (84, 6, 0)
    assert f"6 only in {a} (qid 84, 85, 86, 87, 88, ...)" in err


def test_sides_names_each_side_and_says_what_differs_when_names_agree():
    from cover.jobs.compare import sides

    a, b = sides("qd/preds.jsonl", "md/preds.jsonl", "norm", None, "mondrian", None)
    assert (a.name, b.name) == ("qd", "md")
    assert (b.score, b.rule, b.groups) == ("norm", "mondrian", "pred_length")  # A's choices
    # two files of one folder (QD-DETR's checkpoints): named apart by their files, as a
    # study names them (both were "qd NORM/split")
    a, b = sides("qd/video_preds.jsonl", "qd/audio_preds.jsonl", "norm", None, "split", None)
    assert (a.name, b.name) == ("qd/video_preds", "qd/audio_preds")
    a, b = sides("qd/preds.jsonl", None, "norm", "sec", "split", None)
    assert (a.name, b.name) == ("qd NORM/split", "qd SEC/split")
    assert b.preds == a.preds
    a, b = sides("qd/preds.jsonl", None, "norm", "sec", "split", None, name_b="other")
    assert (a.name, b.name) == ("qd", "other")
    with pytest.raises(InputError, match="nothing to compare"):
        sides("qd/preds.jsonl", None, "norm", None, "split", "split")


def test_compare_keeps_the_queries_of_short_videos_as_validity_does(tmp_path: Path,
                                                                    capsys) -> None:
    """--max-duration (the paper's ActivityNet protocol keeps videos of at most 150 s)
    reaches compare's reader as validity's and study's: only those queries are compared."""
    preds, gts = synthetic_rows(120)
    for g in gts[:60]:  # the first 20 videos last 300 s
        g["duration"] = 300
    p, g = write_jsonl(tmp_path / "p.jsonl", preds), write_jsonl(tmp_path / "g.jsonl", gts)
    docs = {}
    for name, extra in (("all", []), ("short", ["--max-duration", "150"])):
        out = tmp_path / f"{name}.json"
        assert main(["compare", str(p), "--gt", str(g), "--score-b", "sec", "--json",
                     str(out), *extra]) == 0
        docs[name] = json.loads(out.read_text())["queries"]
    assert docs["all"]["common"] == 120 and docs["short"]["common"] == 60


def test_grounders_naming_queries_otherwise_pair_by_the_ground_truth(
        data_dir: Path, tmp_path: Path) -> None:
    """DisTime (joined on vid and query text, named by Charades-STA's line numbers) and
    TGN (named <vid>-<k>) predict the same 3,720 queries: they pair by the ground
    truth's qids (they shared 0, by their own names). Golden: each side's R1@0.5 on the
    2,184 test queries is the one `cover study` and `cover evaluate` give for it."""
    d = data_dir / "charades_sta"
    out = tmp_path / "cmp.json"
    assert main(["compare", str(d / "distime/DisTime-InternVL2_5-8B_charades_test_results.json"),
                 str(d / "tgn/TGN_predict_proposals_test_nms_0.55.json"), "--gt",
                 str(d / "annotations/charades_sta_test.txt"), "--gt-durations",
                 str(d / "annotations/charades.json"), "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    q = doc["queries"]
    assert (q["common"], q["only_a"], q["only_b"], q["test"]) == (3720, 0, 0, 2184)
    r1 = _by_metric(doc)["R1@0.5"]
    assert (r1["a"], r1["b"]) == pytest.approx((61.17, 34.89), abs=0.005)
