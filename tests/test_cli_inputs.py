"""Bad input, case by case, through the command line: each gives a message naming file,
line and qid, leaves every input byte-identical and the previous output intact, and
``--on-error reject`` sets the row aside with its reason (every row accounted for)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from cli_files import leftovers, snapshot, synthetic, synthetic_rows, write_jsonl
from cover.cli import main
from cover.io.qvhighlights import read_predictions


@pytest.fixture
def setup(tmp_path: Path) -> dict[str, Path]:
    preds, gt = synthetic(tmp_path)
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "-o", str(cal)]) == 0
    out = tmp_path / "out.jsonl"
    out.write_text('{"previous": "output"}\n')
    return {"preds": preds, "gt": gt, "cal": cal, "out": out}


def _certify(f: dict[str, Path], preds: Path, *extra: str) -> list[str]:
    return ["certify", "--calibrator", str(f["cal"]), "--preds", str(preds), "--videos",
            str(f["gt"]), "-o", str(f["out"]), *extra]


def _bad_file(tmp_path: Path, edit: Any, name: str = "bad.jsonl") -> Path:
    """The synthetic predictions with row 4 (line 4, qid 3) changed by ``edit``; ``edit``
    returns a dict (written as JSON) or bytes (written as they are)."""
    preds, _ = synthetic_rows()
    lines = [json.dumps(r).encode() for r in preds]
    new = edit(dict(preds[3]))
    lines[3] = new if isinstance(new, bytes) else json.dumps(new).encode()
    path = tmp_path / name
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


CASES = {
    "latin-1 byte": (lambda r: json.dumps(r).encode().replace(b'"q3"', b'"caf\xe9"'),
                     "not UTF-8 text (byte 0xe9"),
    "qid written as a float": (lambda r: r | {"qid": 3.0},
                               "qid 3.0 is written as a float; write it as 3"),
    "qid an object": (lambda r: r | {"qid": {"id": 3}}, "qid must be an integer or a string"),
    "qid a boolean": (lambda r: r | {"qid": True}, "qid must be an integer or a string"),
    "qid padded": (lambda r: r | {"qid": " 3"}, "has leading or trailing spaces"),
    "bound a string": (lambda r: r | {"pred_relevant_windows": [["12.5", 30, 0.9]]},
                       'holds the string "12.5" where a number is expected'),
    "bound a boolean": (lambda r: r | {"pred_relevant_windows": [[True, 30, 0.9]]},
                        "holds true where a number is expected"),
    "saliency a string": (lambda r: r | {"pred_saliency_scores": ["0.5"] * 75},
                          'holds the string "0.5"'),
    "prediction after the video": (lambda r: r | {"pred_relevant_windows": [[160, 170, 1]]},
                                   "lies wholly outside the video [0, 150]"),
    "prediction before the video": (lambda r: r | {"pred_relevant_windows": [[-9, -1, 1]]},
                                    "lies wholly outside the video"),
    "huge integer": (lambda r: r | {"pred_relevant_windows": [[10**400, 2, 1]]},
                     "non-finite number"),
    "malformed JSON": (lambda r: json.dumps(r).encode()[:-5], "malformed JSON"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_row_is_named_and_nothing_is_lost(setup, tmp_path, case, capsys):
    edit, words = CASES[case]
    bad = _bad_file(tmp_path, edit)
    inputs = [bad, setup["gt"], setup["cal"]]
    before = snapshot(*inputs, setup["out"])
    assert main(_certify(setup, bad)) == 2
    err = capsys.readouterr().err
    assert "bad.jsonl:4" in err and words in err, err
    if "qid" not in case and "JSON" not in case and "latin" not in case:
        assert "(qid=3)" in err
    assert "Traceback" not in err and "np.str_" not in err
    assert snapshot(*inputs, setup["out"]) == before
    assert leftovers(tmp_path) == []

    assert main(_certify(setup, bad, "--on-error", "reject")) == 0
    rows = [json.loads(x) for x in setup["out"].read_text().splitlines()]
    assert len(rows) == 60  # rows in == certified + refused + rejected
    assert rows[3]["cover"]["status"] == "rejected" and words in rows[3]["cover"]["reason"]
    assert sum(r["cover"]["status"] == "certified" for r in rows) == 59
    assert snapshot(*inputs) == {k: v for k, v in before.items() if k != setup["out"]}


@pytest.mark.parametrize("name", ["preds.jsonl.gz", "preds.jsonl"])
def test_gzip_input_is_read_by_its_bytes_not_its_name(setup, tmp_path, name, capsys):
    assert main(_certify(setup, setup["preds"])) == 0
    expected = [json.loads(x)["cover"] for x in setup["out"].read_text().splitlines()]
    packed = tmp_path / "gz" / name
    packed.parent.mkdir()
    packed.write_bytes(gzip.compress(setup["preds"].read_bytes()))
    assert main(_certify(setup, packed)) == 0
    got = [json.loads(x)["cover"] for x in setup["out"].read_text().splitlines()]
    assert got == expected
    truncated = tmp_path / "gz" / "cut.jsonl.gz"
    truncated.write_bytes(packed.read_bytes()[:200])
    assert main(_certify(setup, truncated)) == 2
    assert "cut.jsonl.gz: damaged or truncated gzip file" in capsys.readouterr().err


@pytest.mark.parametrize("clip", ["0", "-2", "nan", "inf"])
def test_clip_must_be_positive(setup, clip, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["calibrate", "--preds", str(setup["preds"]), "--gt", str(setup["gt"]), "--clip",
              clip, "-o", str(setup["out"])])
    assert exc.value.code == 2
    assert "--clip: must be a finite number > 0" in capsys.readouterr().err
    assert setup["out"].read_text() == '{"previous": "output"}\n'
    with pytest.raises(ValueError, match="clip must be a finite number of seconds > 0"):
        read_predictions(setup["preds"], clip=float(clip))


def test_a_family_without_its_input_is_an_error_at_calibrate(tmp_path, capsys):
    preds, gt = synthetic(tmp_path, saliency=False)
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--score", "sls",
                 "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "preds.jsonl: score family sls needs a relevance signal (pred_saliency_scores)" in err
    assert "none of the 60 rows has one; choose another family (norm, sec)" in err
    assert not out.exists()


def test_validity_skips_a_family_without_input_with_one_line(tmp_path, capsys):
    preds, gt = synthetic(tmp_path, n=90, saliency=False)
    out = tmp_path / "v"
    assert main(["validity", "--preds", str(preds), "--gt", str(gt), "--out", str(out),
                 "--families", "norm", "sls", "--alphas", "0.2", "--resamples", "2"]) == 0
    err = capsys.readouterr().err
    skip = [ln for ln in err.splitlines() if "skipping SLS" in ln]
    assert len(skip) == 1 and "needs a relevance signal" in skip[0]
    doc = json.loads((out / "validity.json").read_text())
    assert {c["family"] for c in doc["cells"]} == {"norm"}


def test_validity_keeps_same_named_files_apart(tmp_path, capsys):
    rows, gts = synthetic_rows(n=90)
    for folder, shift in (("qd_detr", 0.0), ("eatr", 5.0)):
        (tmp_path / folder).mkdir()
        moved = [r | {"pred_relevant_windows": [[min(w[0] + shift, 149.0), min(w[1] + shift,
                                                                              150.0), w[2]]
                                                for w in r["pred_relevant_windows"]]}
                 for r in rows]
        write_jsonl(tmp_path / folder / "best_hl_val_preds.jsonl", list(moved))
    gt = write_jsonl(tmp_path / "gt.jsonl", list(gts))
    out = tmp_path / "v"
    args = ["validity", "--gt", str(gt), "--out", str(out), "--families", "norm", "--alphas",
            "0.2", "--resamples", "2"]
    for folder in ("qd_detr", "eatr"):
        args += ["--preds", str(tmp_path / folder / "best_hl_val_preds.jsonl")]
    assert main(args) == 0
    # named as a study names them: by folder (the grounder), one name per grounder
    a = json.loads((out / "qd-detr" / "validity.json").read_text())
    b = json.loads((out / "eatr" / "validity.json").read_text())
    assert a["name"] == "qd_detr" and b["name"] == "eatr"
    assert a["point_iou"] != b["point_iou"]
    html = (out / "report.html").read_text()
    assert "qd_detr" in html and "eatr" in html
    # two files of one folder: the file's stem joins the folder's name
    write_jsonl(tmp_path / "eatr" / "latest.jsonl", list(rows))
    assert main([*args, "--preds", str(tmp_path / "eatr" / "latest.jsonl")]) == 0
    names = {json.loads(f.read_text())["name"] for f in out.glob("*/validity.json")}
    assert names == {"qd_detr", "eatr/best_hl_val_preds", "eatr/latest"}
    # The same display name twice: suffixed, never overwritten.
    assert main([*args, "--name", "x", "--name", "x"]) == 0
    assert (out / "x" / "validity.json").exists() and (out / "x-2" / "validity.json").exists()


def test_validity_takes_qids_and_on_error(tmp_path, capsys):
    rows, gts = synthetic_rows(n=120)
    preds = write_jsonl(tmp_path / "p.jsonl", list(rows[:90]) + ["{broken"])
    gt = write_jsonl(tmp_path / "gt.jsonl", list(gts))
    qids = tmp_path / "q.txt"
    qids.write_text("".join(f"{i}\n" for i in range(90)))
    out = tmp_path / "v"
    args = ["validity", "--preds", str(preds), "--gt", str(gt), "--out", str(out),
            "--families", "norm", "--alphas", "0.2", "--resamples", "2"]
    assert main(args) == 2
    assert "p.jsonl:91" in capsys.readouterr().err
    assert main([*args, "--qids", str(qids), "--on-error", "reject"]) == 0
    assert json.loads((out / "validity.json").read_text())["rows"]["total"] == 90
    md = (out / "validity.md").read_text()
    # The summary first (what this run found, misses first), then what it checks.
    paras = md.split("\n\n")
    assert paras[1] == f"**{tmp_path.name} on gt** (90 queries, 54 in the test split)."
    checks = next(p for p in paras if p.startswith("What this checks: COVER widens each"))
    assert paras.index(checks) > 2
    # No cell at the 0.90 target (alpha 0.2 only): no headline, and no empty heading for it.
    assert "What holds" not in md
    # It says what a marginal guarantee can miss, and where this run looked for it.
    assert "marginal, on average over all queries" in checks
    assert "conditional study of NORM and SEC on the same split" in checks


def test_validity_without_matplotlib_writes_everything_else(tmp_path, monkeypatch, capsys):
    import sys

    preds, gt = synthetic(tmp_path, n=90)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    out = tmp_path / "v"
    assert main(["validity", "--preds", str(preds), "--gt", str(gt), "--out", str(out),
                 "--families", "norm", "--alphas", "0.2", "--resamples", "2"]) == 0
    err = capsys.readouterr().err
    assert "skipping figures: figures need matplotlib: pip install 'cover-grounding[plot]'" in err
    assert "Traceback" not in err
    assert (out / "validity.json").exists() and (out / "report.html").exists()
    assert not list(out.glob("*.png"))


def _regions(setup: dict[str, Path], tmp_path: Path) -> list[dict[str, Any]]:
    assert main(_certify(setup, setup["preds"])) == 0
    return [json.loads(x) for x in setup["out"].read_text().splitlines()]


@pytest.mark.parametrize(("edit", "words"), [
    (lambda r: r["cover"].update(region=[[10.0, 200.0]]),
     "cover.region reaches outside [0, cover.duration]"),
    (lambda r: r["cover"].update(region=[[-5.0, 20.0]]),
     "cover.region reaches outside [0, cover.duration]"),
    (lambda r: r.update(qid=1), "duplicate qid (first seen on line 2)"),
    (lambda r: r["cover"].pop("duration"), "missing field: cover.duration"),
], ids=["past-end", "before-start", "duplicate", "no-duration"])
def test_evaluate_validates_regions(setup, tmp_path, edit, words, capsys):
    rows = _regions(setup, tmp_path)
    edit(rows[4])
    regions = write_jsonl(tmp_path / "r.jsonl", list(rows))
    metrics = tmp_path / "m.json"
    metrics.write_text("{}")
    before = snapshot(regions, setup["gt"], metrics)
    assert main(["evaluate", "--regions", str(regions), "--gt", str(setup["gt"]), "--json",
                 str(metrics)]) == 2
    err = capsys.readouterr().err
    assert "r.jsonl:5 (qid=" in err and words in err
    assert snapshot(regions, setup["gt"], metrics) == before
    assert main(["evaluate", "--regions", str(regions), "--gt", str(setup["gt"]), "--json",
                 str(metrics), "--on-error", "reject"]) == 0
    doc = json.loads(metrics.read_text())
    assert doc["counts"]["rows"] == 59 and doc["counts"]["rejected_here"] == 1


def test_evaluate_band_holds_the_test_noise_and_stays_in_unit_interval(setup, tmp_path, capsys):
    _regions(setup, tmp_path)
    metrics = tmp_path / "m.json"
    assert main(["evaluate", "--regions", str(setup["out"]), "--gt", str(setup["gt"]), "--json",
                 str(metrics)]) == 0
    ref = json.loads(metrics.read_text())["reference"]
    assert ref["test_sd"] > 0
    assert ref["band_lo"] < ref["calibration_band"][0]
    assert min(ref["band_hi"], 1.0) == ref["band_hi"]
    assert 0.0 <= ref["band_lo"] <= ref["expected"] <= ref["band_hi"] <= 1.0
    assert "this test sample's own sd" in capsys.readouterr().out


def test_evaluating_calibration_rows_warns(setup, tmp_path, capsys):
    # The calibrator was fitted on all 60 rows; certifying them all and evaluating is the
    # mistake of forgetting --qids.
    rows = _regions(setup, tmp_path)
    assert all(r["cover"].get("in_calibration") is True for r in rows)
    assert "60 of the 60 rows certified are rows the calibrator was fitted on" in \
        capsys.readouterr().err
    metrics = tmp_path / "m.json"
    assert main(["evaluate", "--regions", str(setup["out"]), "--gt", str(setup["gt"]), "--json",
                 str(metrics)]) == 0
    assert "60 of the 60 rows evaluated were calibration rows" in capsys.readouterr().err
    assert json.loads(metrics.read_text())["counts"]["in_calibration"] == 60


def test_held_out_rows_do_not_warn(tmp_path, capsys):
    preds, gt = synthetic(tmp_path)
    cal_q, test_q = tmp_path / "cal.txt", tmp_path / "test.txt"
    cal_q.write_text("".join(f"{i}\n" for i in range(30)))
    test_q.write_text("".join(f"{i}\n" for i in range(30, 60)))
    cal, out = tmp_path / "cal.json", tmp_path / "r.jsonl"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--qids", str(cal_q),
                 "-o", str(cal)]) == 0
    assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--videos",
                 str(gt), "--qids", str(test_q), "-o", str(out)]) == 0
    assert main(["evaluate", "--regions", str(out), "--gt", str(gt)]) == 0
    assert "calibration rows" not in capsys.readouterr().err


def test_digest_only_calibrator_still_warns(tmp_path, monkeypatch, capsys):
    import cover.data.fitted_on as calibrator

    monkeypatch.setattr(calibrator, "KEEP_QIDS_MAX", 10)  # as if fitted on > 5000 rows
    preds, gt = synthetic(tmp_path)
    cal, out = tmp_path / "cal.json", tmp_path / "r.jsonl"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "-o", str(cal)]) == 0
    assert json.loads(cal.read_text())["fitted_on"]["qids"] is None
    assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--videos",
                 str(gt), "-o", str(out)]) == 0
    assert main(["evaluate", "--regions", str(out), "--gt", str(gt)]) == 0
    assert "exactly the rows the calibrator was fitted on (same qid digest)" in \
        capsys.readouterr().err


# ---------------------------------------------------------------------------------
# Golden checks on the real QVHighlights files


def test_real_prediction_files_pass_the_strict_readers_whole(data_dir):
    """Strictness costs no real row: all eight val prediction files read and join with
    every row kept (only a handful of windows clipped to the video)."""
    from cover.io.datasets import QVH_VAL_GT, QVH_VAL_PREDICTIONS
    from cover.io.labelled import load_labelled

    for rel in QVH_VAL_PREDICTIONS.values():
        loaded = read_predictions(data_dir / rel)
        assert len(loaded.table) == 1550 and loaded.n_rejected == 0
        table, problems = load_labelled(data_dir / rel, data_dir / QVH_VAL_GT)
        assert len(table) == 1550
        assert {p.action for p in problems} <= {"clipped"} and len(problems) <= 2


def test_real_file_gzipped_reads_the_same(data_dir, qdetr_preds, tmp_path):
    packed = tmp_path / "preds.jsonl"  # gzip under a plain name: recognised by its bytes
    packed.write_bytes(gzip.compress(qdetr_preds.read_bytes()))
    a, b = read_predictions(qdetr_preds).table, read_predictions(packed).table
    assert a.qid.tolist() == b.qid.tolist() and a.line.tolist() == b.line.tolist()
    assert a.pred_start.tolist() == b.pred_start.tolist()
    assert a.relevance.values.tolist() == b.relevance.values.tolist()


def test_real_evaluation_on_calibration_rows_warns(qvh_gt, qdetr_preds, tmp_path, capsys):
    assert main(["split", "--gt", str(qvh_gt), "--out-dir", str(tmp_path)]) == 0
    cal, out = tmp_path / "cal.json", tmp_path / "all.jsonl"
    assert main(["calibrate", "--preds", str(qdetr_preds), "--gt", str(qvh_gt), "--qids",
                 str(tmp_path / "calibration_qids.txt"), "-o", str(cal)]) == 0
    assert main(["certify", "--calibrator", str(cal), "--preds", str(qdetr_preds), "--videos",
                 str(qvh_gt), "-o", str(out)]) == 0  # forgot --qids: every row certified
    capsys.readouterr()
    metrics = tmp_path / "m.json"
    assert main(["evaluate", "--regions", str(out), "--gt", str(qvh_gt), "--json",
                 str(metrics)]) == 0
    assert "623 of the 1550 rows evaluated were calibration rows" in capsys.readouterr().err
    doc = json.loads(metrics.read_text())
    assert doc["counts"]["in_calibration"] == 623
    ref = doc["reference"]
    assert ref["n_calibration"] == 623 and 0 < ref["band_lo"] < ref["calibration_band"][0]
    assert ref["calibration_band"][1] < ref["band_hi"] <= 1.0


@pytest.mark.parametrize("path", [[], ["--in-memory"]], ids=["streamed", "in-memory"])
def test_no_rows_left_names_both_files_and_why(tmp_path, capsys, path):
    preds_rows, gt_rows = synthetic_rows(6)
    for r in gt_rows:  # the ground truth of other queries: nothing joins
        r["qid"] = int(r["qid"]) + 1000
    preds = write_jsonl(tmp_path / "preds.jsonl", list(preds_rows))
    gt = write_jsonl(tmp_path / "gt.jsonl", list(gt_rows))
    code = main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--on-error", "reject",
                 "-o", str(tmp_path / "c.json"), *path])
    err = capsys.readouterr().err
    assert code == 2
    assert "no calibration rows left" in err and "preds.jsonl" in err and "gt.jsonl" in err
    assert "rejected" in err and "Traceback" not in err
    assert not (tmp_path / "c.json").exists()
