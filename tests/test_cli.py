"""The ``cover`` command end to end: real data, and bad input giving clear errors."""

from __future__ import annotations

import json

import pytest

import cover
from cli_files import synthetic, write_jsonl
from cover.cli import main
from cover.studies.conditional import conditional
from cover.studies.context import Pair
from cover.studies.protocol import Protocol


def test_split_calibrate_certify_evaluate_on_real_data(tmp_path, qvh_gt, qdetr_preds, capsys):
    assert main(["split", "--gt", str(qvh_gt), "--out-dir", str(tmp_path)]) == 0
    cal_q = tmp_path / "calibration_qids.txt"
    test_q = tmp_path / "test_qids.txt"
    assert len(cal_q.read_text().split()) == 623
    assert len(test_q.read_text().split()) == 927
    cal_json = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(qdetr_preds), "--gt", str(qvh_gt), "--qids",
                 str(cal_q), "--score", "sls", "--alpha", "0.1", "-o", str(cal_json)]) == 0
    regions = tmp_path / "regions.jsonl"
    assert main(["certify", "--calibrator", str(cal_json), "--preds", str(qdetr_preds),
                 "--qids", str(test_q), "--videos", str(qvh_gt), "-o", str(regions)]) == 0
    rows = [json.loads(x) for x in regions.read_text().splitlines()]
    assert len(rows) == 927
    # SLS: a row whose relevance never reaches the calibrated level has an empty region,
    # rejected with the reason (cover.row_status), never certified.
    status = [r["cover"]["status"] for r in rows]
    assert set(status) == {"certified", "rejected"} and status.count("rejected") < 30
    assert all(r["cover"]["region"] for r in rows if r["cover"]["status"] == "certified")
    assert all(r["cover"]["region"] == [] and r["cover"]["reason"].startswith("empty certified")
               for r in rows if r["cover"]["status"] == "rejected")
    assert all(set(r) >= {"qid", "vid", "pred_relevant_windows", "cover"} for r in rows)
    metrics = tmp_path / "metrics.json"
    assert main(["evaluate", "--regions", str(regions), "--gt", str(qvh_gt), "--json",
                 str(metrics)]) == 0
    got = json.loads(metrics.read_text())
    assert got["counts"]["rows"] == 927
    assert got["counts"]["ground_truth_not_certified"] == 623

    # The same numbers through the Python API.
    preds = cover.read_predictions(qdetr_preds).table
    gt = cover.read_ground_truth(qvh_gt).table
    table, _ = cover.attach_truth(preds, gt)
    split = cover.split_by_unit(table.units, cal_frac=0.4, seed=42)
    cal = cover.Calibrator(score="sls", alpha=0.1).fit(table.take(split.calibration))
    saved = json.loads(cal_json.read_text())["thresholds"]["all"]
    assert cal.threshold_ == pytest.approx(saved["value"])
    test = table.take(split.test)
    ev = cover.evaluate(cal.certify(test), test)
    assert got["marginal"]["coverage"] == pytest.approx(ev.marginal.coverage, abs=1e-12)
    assert got["marginal"]["mean_length_s"] == pytest.approx(ev.marginal.mean_length_s)
    assert got["reference"]["n_calibration"] == 623
    assert got["field_metrics"]["full"] == pytest.approx(
        cover.grounding_metrics(test).full.to_dict())


def test_certify_without_durations_names_the_fix(tmp_path, capsys):
    preds, gt = synthetic(tmp_path, saliency=False)
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "-o", str(cal)]) == 0
    code = main(["certify", "--calibrator", str(cal), "--preds", str(preds), "-o",
                 str(tmp_path / "r.jsonl")])
    err = capsys.readouterr().err
    assert code == 2
    assert "--videos" in err and "qid=0" in err and "preds.jsonl:1" in err


def test_certify_echoes_every_row_with_its_fate(tmp_path, capsys):
    preds, gt = synthetic(tmp_path, saliency=False)
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "-o", str(cal)]) == 0
    lines = preds.read_text().splitlines()
    refusal = json.dumps({"qid": "r1", "vid": "v0_0.0_150.0", "pred_relevant_windows": []})
    unknown = json.dumps({"qid": "u1", "vid": "nowhere", "pred_relevant_windows": [[1, 2, 1]]})
    bad = lines[:5] + ["{not json", refusal, unknown, ""] + lines[5:]
    mixed = write_jsonl(tmp_path / "mixed.jsonl", bad)
    out = tmp_path / "r.jsonl"
    code = main(["certify", "--calibrator", str(cal), "--preds", str(mixed), "--videos",
                 str(gt), "-o", str(out)])
    assert code == 2
    assert "mixed.jsonl:6" in capsys.readouterr().err
    code = main(["certify", "--calibrator", str(cal), "--preds", str(mixed), "--videos",
                 str(gt), "-o", str(out), "--on-error", "reject"])
    assert code == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == sum(1 for x in bad if x.strip())
    status = [r["cover"]["status"] for r in rows]
    assert status.count("rejected") == 2 and status.count("refused") == 1
    assert rows[5]["cover"]["raw"] == "{not json"
    assert rows[6]["cover"]["region"] == [[0.0, 150.0]]
    assert "no duration known" in rows[7]["cover"]["reason"]
    assert "certified 60, refused (whole video) 1, rejected 2" in capsys.readouterr().out


def test_too_small_calibration_set_warns_and_strict_refuses(tmp_path, capsys):
    preds, gt = synthetic(tmp_path, n=10, saliency=False)
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--alpha", "0.05",
                 "-o", str(cal)]) == 0
    err = capsys.readouterr().err
    assert "too few" in err and "need at least 19" in err
    assert json.loads(cal.read_text())["thresholds"]["all"]["value"] == "inf"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--alpha", "0.05",
                 "--strict", "-o", str(cal)]) == 2


@pytest.mark.parametrize("alpha", ["0", "1", "1.5", "-0.1", "nan", "abc"])
def test_alpha_outside_unit_interval_is_a_usage_error(tmp_path, alpha, capsys):
    preds, gt = synthetic(tmp_path, saliency=False)
    with pytest.raises(SystemExit) as exc:
        main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--alpha", alpha, "-o",
              str(tmp_path / "c.json")])
    assert exc.value.code == 2
    assert "alpha" in capsys.readouterr().err


@pytest.mark.parametrize("alpha", ["1/10", "1/3"])
def test_alpha_as_a_fraction_fits_and_says_so(tmp_path, alpha, capsys):
    """--alpha takes an exact fraction: the fit, the summary and the file agree (the
    summary's ties line read it as a float and the run ended in "could not convert
    string to float: '1/10'", exit 2, after the calibrator was written)."""
    from fractions import Fraction

    preds, gt = synthetic(tmp_path, saliency=False)
    cal = tmp_path / "c.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--alpha", alpha,
                 "-o", str(cal)]) == 0
    out = capsys.readouterr().out
    assert f"at alpha={alpha} on" in out and "1 - alpha + 1/(n+1)" in out, out
    assert Fraction(json.loads(cal.read_text())["alpha"]) == Fraction(alpha)


def test_tampered_calibrator_is_refused(tmp_path, capsys):
    preds, gt = synthetic(tmp_path, saliency=False)
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "-o", str(cal)]) == 0
    doc = json.loads(cal.read_text())
    doc["thresholds"]["all"]["value"] = 0.0
    cal.write_text(json.dumps(doc))
    code = main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--videos",
                 str(gt), "-o", str(tmp_path / "r.jsonl")])
    assert code == 2
    assert "checksum" in capsys.readouterr().err


def test_prediction_without_ground_truth_is_named(tmp_path, capsys):
    preds, gt = synthetic(tmp_path, saliency=False)
    extra = json.dumps({"qid": 999, "vid": "x_0_150", "pred_relevant_windows": [[1, 5, 1]]})
    with preds.open("a") as fh:
        fh.write(extra + "\n")
    code = main(["calibrate", "--preds", str(preds), "--gt", str(gt), "-o",
                 str(tmp_path / "c.json")])
    assert code == 2
    err = capsys.readouterr().err
    assert "qid=999" in err and "no ground truth" in err and "preds.jsonl:61" in err


def test_demo_without_data_says_what_to_do(tmp_path, capsys):
    code = main(["demo", "--out", str(tmp_path / "o"), "--data-dir", str(tmp_path / "none")])
    assert code == 2
    err = capsys.readouterr().err
    assert "--data-dir" in err and "highlight_val_release.jsonl" in err


@pytest.mark.xdist_group("demo")  # one worker runs the shared demo (tests/conftest.py)
def test_demo_calibration_bands_are_those_calibrate_prints(demo_run, qdetr_preds, qvh_gt,
                                                           tmp_path, capsys):
    """Each family's calibration band in the demo's evaluation (and its report) is the
    one `cover calibrate` prints for the demo's calibration queries: widened for queries
    that share a video (190 videos here). The demo printed the Beta interval alone under
    that name."""
    code, out, _, _ = demo_run
    assert code == 0
    evaluation = json.loads((out / "evaluation_alpha0.1.json").read_text())
    for fam in ("norm", "sec", "sls"):
        ref = evaluation[fam]["reference"]
        assert ref["calibration_band_name"] == "calibration band"
        assert ref["calibration_units"] == 190 and ref["calibration_design_effect"] >= 1.0
        capsys.readouterr()
        assert main(["calibrate", "--preds", str(qdetr_preds), "--gt", str(qvh_gt),
                     "--qids", str(out / "calibration_qids.txt"), "--score", fam,
                     "-o", str(tmp_path / f"{fam}.json")]) == 0
        said = capsys.readouterr().out
        lo, hi = ref["calibration_band"]
        assert (f"95% calibration band [{lo:.4f}, {hi:.4f}] (Beta(k, n+1-k), 190 source "
                f"videos, design effect {ref['calibration_design_effect']:.2f})") in said, fam


@pytest.mark.xdist_group("demo")  # one worker runs the shared demo (tests/conftest.py)
def test_demo_writes_table_json_figures_and_report(demo_run, data_dir):
    code, out, printed, said = demo_run
    assert code == 0
    # The row QD-DETR predicts past its video's end: its file named as its example names
    # it (one path a person can open, not a short one and then a long one).
    preds = data_dir / "qvhighlights" / "qd_detr" / "video_checkpoint_best_hl_val_preds.jsonl"
    assert f"cover: 1 row(s) clipped in {preds}: predicted interval clipped" in said
    assert f"  {preds}:271 (qid=9471): predicted interval clipped to [0, T]" in said
    assert "1-alpha" in printed and "NORM coverage" in printed and "0.90" in printed
    # The console opens as the reports do: the misses first, in plain words.
    assert printed.index("Where the guarantee falls short (2)") < printed.index(
        "What holds, and what it costs") < printed.index("1-alpha")
    assert "**" not in printed and "Long events" in printed
    doc = json.loads((out / "validity.json").read_text())
    assert len(doc["cells"]) == 18 and doc["rows"] == {"total": 1550, "pool": 623, "test": 927}
    for name in ("coverage_vs_target.png", "length_vs_target.png", "frontier.png"):
        png = (out / name).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20_000
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 3 and "<table>" in html
    report_md = (out / "report.md").read_text()
    assert "| 0.90 |" in report_md
    # The Markdown report opens like the HTML one: the summary, misses first.
    assert report_md.index("Where the guarantee falls short") < report_md.index(
        "What holds, and what it costs") < report_md.index("## Coverage validity")
    assert "<" not in report_md.split("## Coverage validity")[0]
    # validity.md, read alone, opens with the same misses, then its own table; its title
    # names the pair, so its summary opens "In short" alone.
    validity_md = (out / "validity.md").read_text()
    lead = report_md.split("\n\n", 1)[1].split("What this checks:")[0]
    pair = "QD-DETR (video) on QVHighlights val"
    assert lead.startswith(f"**In short: {pair}**\n")
    assert validity_md.startswith(f"# Coverage validity: {pair}\n\n**In short**\n")
    assert validity_md.split("\n\n", 1)[1].removeprefix("**In short**").startswith(
        lead.removeprefix(f"**In short: {pair}**"))
    assert validity_md.count(pair) == 2  # the title and the table's paragraph
    assert validity_md.index("Where the guarantee falls short (2)") < validity_md.index(
        "| 1-alpha |")
    for fam in ("norm", "sec", "sls"):
        cal = cover.Calibrator.load(out / "calibrators" / f"{fam}_alpha0.1.json")
        assert cal.n_ == 623
        assert len((out / "regions" / f"{fam}_alpha0.1_test.jsonl").read_text().splitlines()) \
            == 927


def test_ground_truth_without_prediction_suggests_qids(tmp_path, capsys):
    preds, gt = synthetic(tmp_path, saliency=False)
    lines = preds.read_text().splitlines()
    preds.write_text("\n".join(lines[:-3]) + "\n")
    code = main(["calibrate", "--preds", str(preds), "--gt", str(gt), "-o",
                 str(tmp_path / "c.json")])
    assert code == 2
    err = capsys.readouterr().err
    assert "3 ground-truth row(s) have no prediction" in err and "--qids" in err
    assert "gt.jsonl:58 (qid=57)" in err
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--on-error", "reject",
                 "-o", str(tmp_path / "c.json")]) == 0
    assert "3 row(s) rejected" in capsys.readouterr().err


def test_listed_qids_that_match_nothing_are_named(tmp_path, capsys):
    preds, gt = synthetic(tmp_path, saliency=False)
    qids = tmp_path / "q.txt"
    qids.write_text("1\n2\n\nnope\n")
    cal = tmp_path / "c.json"
    code = main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--qids", str(qids),
                 "-o", str(cal)])
    assert code == 2
    err = capsys.readouterr().err
    assert "q.txt:4 (qid=nope): qid not found" in err
    # the error's first line names the file its rows come from, the list beside the inputs
    assert f"1 bad row(s) in {preds} joined with {gt} and {qids}:" in err
    qids.write_text("\n".join(str(i) for i in range(30)) + "\n")
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--qids", str(qids),
                 "-o", str(cal)]) == 0
    qids.write_text("3\nghost\n")
    out = tmp_path / "r.jsonl"
    args = ["certify", "--calibrator", str(cal), "--preds", str(preds), "--videos", str(gt),
            "--qids", str(qids), "-o", str(out)]
    for how in ([], ["--in-memory"]):
        assert main([*args, *how]) == 2
        err = capsys.readouterr().err
        assert "q.txt:2 (qid=ghost): qid not found in" in err
        assert f"1 bad row(s) in {preds} and {qids}:" in err, how
    assert main([*args, "--on-error", "reject"]) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["qid"] for r in rows] == [3] and rows[0]["cover"]["status"] == "certified"
    assert "1 row(s) rejected" in capsys.readouterr().err


def test_validity_over_two_real_grounders(qdetr_table, tmp_path, data_dir, qvh_gt, qdetr_preds,
                                          capsys):
    eatr = data_dir / "qvhighlights" / "eatr" / "best_hl_val_preds.jsonl"
    out = tmp_path / "v"
    assert main(["validity", "--gt", str(qvh_gt), "--out", str(out), "--preds",
                 str(qdetr_preds), "--name", "QD-DETR", "--preds", str(eatr), "--name", "EaTR",
                 "--families", "norm", "sls", "--alphas", "0.1", "0.2", "--resamples",
                 "3"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("1-alpha") == 2
    # Each grounder's misses come first: on the console, in its validity.md, in the
    # overview and the report; the groups are the conditional study's on the run's split.
    assert printed.index("Where the guarantee falls short") < printed.index("1-alpha")
    md = (out / "qd-detr" / "validity.md").read_text()
    assert md.index("Where the guarantee falls short") < md.index("What this checks:") \
        < md.index("| 1-alpha |")
    doc = json.loads((out / "qd-detr" / "validity.json").read_text())
    table = qdetr_table
    groups = conditional(Pair("QD-DETR", "", table, Protocol(n_resamples=0))).to_dict()
    long_norm = next(c for c in groups["data"]["cells"] if c["half"] == "diagnostic"
                     and c["family"] == "norm" and c["stratum"] == "Long")
    assert 0 < long_norm["n"] < doc["rows"]["test"]
    assert f"Long events (the longest third of true moment lengths)**, {long_norm['n']} " \
        f"test queries: coverage NORM {long_norm['coverage']:.3f} at" in md  # no SEC: not run
    overview = (out / "overview.md").read_text()
    assert "| QD-DETR |" in overview and "| EaTR |" in overview and "SEC cov" not in overview
    assert overview.count("Where the guarantee falls short") == 2
    assert overview.index("**EaTR on QVHighlights**") < overview.index("| QD-DETR |")
    for name in ("qd-detr", "eatr"):
        doc = json.loads((out / name / "validity.json").read_text())
        assert doc["name"] in ("QD-DETR", "EaTR") and len(doc["cells"]) == 4
        assert (out / name / "coverage_vs_target.png").stat().st_size > 20_000
    html = (out / "report.html").read_text()
    assert html.count("<h2>") == 3 and html.count("data:image/png") == 6
    assert "What this checks" in html
    assert html.index("id='misses'") < html.index("<h2>")
    assert main(["validity", "--gt", str(qvh_gt), "--out", str(out), "--preds",
                 str(qdetr_preds), "--name", "a", "--name", "b"]) == 2
    assert "one --name per --preds" in capsys.readouterr().err


def test_validity_split_seeds_writes_the_spread(tmp_path, qvh_gt, qdetr_preds, capsys):
    """`cover validity --split-seeds`: console table, split_seeds.json/.md and a report
    section; seed 42's value is validity.json's, the paper's number is placed."""
    out = tmp_path / "v"
    assert main(["validity", "--gt", str(qvh_gt), "--out", str(out), "--preds",
                 str(qdetr_preds), "--name", "QD-DETR", "--families", "norm",
                 "--resamples", "5", "--split-seeds", "5"]) == 0
    printed = capsys.readouterr().out
    assert "split-seed spread" in printed.lower() and "0.879 (p" in printed
    doc = json.loads((out / "split_seeds.json").read_text())["data"]
    val = json.loads((out / "validity.json").read_text())
    cell = next(c for c in doc["cells"] if c["quantity"] == "coverage"
                and abs(c["target"] - 0.9) < 1e-9)
    ref = next(c for c in val["cells"] if abs(c["target"] - 0.9) < 1e-9)
    assert cell["protocol_value"] == ref["coverage_mean"] and len(cell["values"]) == 5
    assert "| QD-DETR | QVHighlights | coverage | NORM | 0.90 |" in (
        out / "split_seeds.md").read_text()
    assert "split-seed spread" in (out / "report.html").read_text()


def test_rows_clipped_in_both_files_are_said_of_the_join(tmp_path, capsys) -> None:
    """A labelled read (validity, study, online) whose clipped rows are in both files
    names the join, then each file's count (it named the predictions alone, although
    most rows were the ground truth's)."""
    from cli_files import synthetic_rows
    from cover.jobs.validity import labelled

    preds, gts = synthetic_rows(12, saliency=False)
    preds[0]["pred_relevant_windows"] = [[140.0, 160.0, 0.9]]
    for g in gts[1:3]:
        g["relevant_windows"] = [[140.0, 155.0]]
    p = write_jsonl(tmp_path / "p.jsonl", preds)
    g = write_jsonl(tmp_path / "g.jsonl", gts)
    labelled(p, g)
    err = capsys.readouterr().err
    assert f"cover: 3 row(s) clipped in {p} joined with {g} (" in err, err
    assert f"1 in {p}" in err and f"2 in {g}" in err
