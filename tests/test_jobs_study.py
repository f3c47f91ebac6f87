"""`cover study`: every study over real grounders, tables of the paper's shape filled, and
the findings the docs state (golden checks on ../shared/data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cover.cli import main
from cover.errors import InputError
from cover.jobs.study import STUDIES
from cover.jobs.study_inputs import guess_dataset, input_pairs


def test_input_pairs_names_and_datasets() -> None:
    pairs = input_pairs([Path("d/qd_detr/a.jsonl"), Path("d/qd_detr/b.jsonl"),
                         Path("e/la_detr/p.jsonl")],
                        [Path("x/highlight_val_release.jsonl")], None, None)
    assert [p.name for p in pairs] == ["qd_detr/a", "qd_detr/b", "la_detr"]
    assert {p.dataset for p in pairs} == {"QVHighlights"}
    assert guess_dataset(Path("lighthouse/charades_test_release.jsonl")) == "Charades-STA"
    # a benchmark on another's videos is not that dataset (it was: Charades-STA)
    for path, name in (("d/charades_cd/momentdiff_repo/charades_test_ood.json",
                        "Charades-CD test-ood"),
                       ("d/charades_cd/momentdiff_repo/charades_test_iid.json",
                        "Charades-CD test-iid"),
                       ("d/activitynet_cd/momentdiff_repo/anet_test_ood_momentdiff.jsonl",
                        "ActivityNet-CD test-ood"),
                       ("x/anet_test_iid_momentdiff.jsonl", "ActivityNet-CD test-iid"),
                       ("d/charades_rf/ratsg_repo/charades_sta_test2.0.json", "Charades-RF"),
                       ("d/charades_sta_len_mom/momentdiff_repo/test_len_80.jsonl",
                        "Charades-STA-Len"),
                       ("d/charades_sta_len_mom/momentdiff_repo/test_mom_80.jsonl",
                        "Charades-STA-Mom"),
                       ("d/charades_sta/annotations/charades_sta_test.txt", "Charades-STA"),
                       ("d/activitynet_captions/annotations/val_2.json",
                        "ActivityNet-Captions")):
        assert guess_dataset(Path(path)) == name, path
    with pytest.raises(InputError, match="one --gt"):
        input_pairs([Path("a"), Path("b"), Path("c")], [Path("g1"), Path("g2")], None, None)
    with pytest.raises(InputError, match="results folder") as exc:
        input_pairs([Path("a/x.jsonl"), Path("a/x.jsonl")], [Path("g")], ["n", "n"], None)
    # plain text, no Python repr of a string or a list
    assert str(exc.value) == ("--preds a/x.jsonl and a/x.jsonl would share the results folder "
                              "n-g; give each --preds its own --name")


@pytest.mark.xdist_group("study_run")  # one worker computes the shared run
def test_study_all_fills_every_table(study_run: tuple[Path, dict]) -> None:
    out, man = study_run
    assert man["studies"] == [*STUDIES, "humans"]
    assert [p["id"] for p in man["pairs"]] == ["qd-detr-qvhighlights", "la-detr-qvhighlights",
                                               "la-detr-charades-sta"]
    keys = {t["key"] for t in man["tables"]}
    assert {"coverage", "efficiency", "margins", "two_param_change", "two_param_lambdas",
            "rcps", "conditional", "transfer_ks", "transfer", "calsize", "utility_corr",
            "utility_selective", "exchangeability", "exchangeability_online", "rcps_bounds",
            "transfer_positivity", "overview", "humans"} <= keys
    for t in man["tables"]:
        assert t["rows"], t["key"]
        assert all(len(r) == len(t["header"]) for r in t["rows"]), t["key"]
    # Anything not filled says which piece it needs: here only study 9, since none of
    # these grounders reports its own uncertainty.
    assert man["missing"] == [
        "Nominal region of the grounder's own uncertainty: needs a prediction file with "
        "start_std/end_std (e.g. `cover ensemble` of several checkpoints), not available"]
    md = (out / "tables.md").read_text()
    assert md.count("| ") > 100
    # It opens as the report does: the command, then the summary, misses first, then
    # the tables; the report's box, read back from the files written.
    from cover.report.build import summary_of
    from cover.report.demo_summary import summary_markdown

    heads = [ln for ln in md.splitlines() if ln.startswith("## ")]
    assert heads[:2] == ["## Summary", "## overview"]
    summary = md[md.index("## Summary\n\n") + 12:md.index("## overview")]
    assert summary.strip() == summary_markdown(summary_of(out)).strip()
    assert summary.startswith("**Where the guarantee falls short (")
    assert "| Grounder | Dataset | On target | Coverage at 0.90 |" in summary
    assert man["command"].startswith("cover study all --preds")


@pytest.mark.xdist_group("study_run")  # one worker computes the shared run
def test_findings_on_real_grounders(study_run: tuple[Path, dict]) -> None:
    out, _ = study_run

    def doc(pair: str, study: str) -> dict:
        return json.loads((out / pair / f"{study}.json").read_text())["data"]

    for pair in ("qd-detr-qvhighlights", "la-detr-qvhighlights", "la-detr-charades-sta"):
        cov = doc(pair, "coverage")
        at90 = [c for c in cov["cells"] if abs(c["target"] - 0.9) < 1e-9]
        assert all(c["band_lo"] <= c["coverage_mean"] <= c["band_hi"] for c in at90), pair
        # Hand-picked margins swing coverage far more than calibration's spread.
        assert doc(pair, "margins")["range"] > 0.3
        assert all(c["p_value"] > 0.05 for c in doc(pair, "exchangeability")["cells"])
        sizes = [c for c in doc(pair, "calsize")["cells"] if c["supported"]]
        assert sizes[0]["coverage_sd"] > sizes[-1]["coverage_sd"]
    # A 90% guarantee on QVHighlights costs most of the video.
    eff = doc("qd-detr-qvhighlights", "efficiency")
    norm90 = next(c for c in eff["cells"] if c["family"] == "norm" and c["target"] == 0.9)
    assert 0.8 < norm90["length_frac_mean"] < 0.95
    # QVHighlights pool has 190 videos: calibration sizes 200 and 400 are not supported.
    assert [c["supported"] for c in doc("qd-detr-qvhighlights", "calsize")["cells"]] == [
        True, True, True, False, False]
    tr = json.loads((out / "transfer-la-detr" / "transfer.json").read_text())["data"]
    assert set(tr["directions"]) == {"QVHighlights -> Charades-STA",
                                     "Charades-STA -> QVHighlights"}
    # No duration overlap at all between the two datasets: a positivity failure.
    assert all(s["source_rows_in_target_range"] == 0 for s in tr["support"].values())
    shift = {r["feature"]: r for r in tr["shift"]}
    assert shift["Video duration"]["ratio"] > 5
    # Every target row falls in a duration bucket with no source rows: pooled fallback,
    # so the bucketed correction equals unweighted transfer.
    for cells in tr["directions"].values():
        for c in cells:
            assert c["bucketed"] == c["unweighted"]
            assert c["positivity"]["unsupported"] == c["positivity"]["n_test"]
    # RCPS never violates its level on more than delta of the resamples, and costs length.
    for c in doc("qd-detr-qvhighlights", "rcps")["cells"]:
        assert c["violation_fraction"] <= 0.1
        assert c["length"] >= c["split_length"]
    # Annotators disagree: certifying one Charades-STA annotator costs most of the video.
    hum = json.loads((out / "humans" / "humans.json").read_text())["data"]["cells"]
    ch = [c for c in hum if c["dataset"] == "Charades-STA"]
    assert len(ch) == 5 and all(0.5 < c["norm"]["share"] < 0.9 for c in ch)


def test_cli_study_one_study_and_report(data_dir: Path, tmp_path: Path) -> None:
    q = data_dir / "qvhighlights"
    rc = main(["study", "margins", "--preds", str(q / "eatr" / "best_hl_val_preds.jsonl"),
               "--gt", str(q / "annotations" / "highlight_val_release.jsonl"),
               "--out", str(tmp_path / "r"), "--resamples", "5"])
    assert rc == 0
    assert (tmp_path / "r" / "eatr-qvhighlights" / "margins.json").is_file()
    assert (tmp_path / "r" / "report.html").is_file()
    assert main(["report", str(tmp_path / "r"), "-o", str(tmp_path / "again.html")]) == 0
    assert main(["report", str(tmp_path / "nothing"), "-o", str(tmp_path / "x.html")]) == 2


def test_cli_study_reads_other_formats_and_sets_aside_rows(data_dir: Path, tmp_path: Path) -> None:
    """A video-LLM example with refusals (empty answers), TimeIT ground truth without
    durations: --gt-durations and --on-error reject pass through to the reader, and the
    command that reproduces the run says so."""
    c = data_dir / "charades_sta"
    out = tmp_path / "tc"
    rc = main(["study", "coverage", "--preds",
               str(c / "timechat_repo_example" / "example_pred_file.json"), "--gt",
               str(c / "timechat_repo_example" / "example_gt_file.json"), "--gt-durations",
               str(c / "annotations" / "charades.json"), "--on-error", "reject",
               "--resamples", "5", "--out", str(out), "--no-report"])
    assert rc == 0
    man = json.loads((out / "manifest.json").read_text())
    assert man["pairs"][0]["problems"]["rejected"] > 0
    assert "--gt-durations" in man["command"] and "--on-error reject" in man["command"]
    cov = json.loads((out / man["pairs"][0]["studies"]["coverage"]).read_text())["data"]
    assert sum(v for k, v in cov["counts"]["norm"].items() if k.endswith("refused")) > 0


@pytest.mark.parametrize("n", [1, 2, 5, 20])
def test_too_few_rows_is_an_error_before_anything_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], n: int) -> None:
    """Every study and `cover validity` on a tiny input: one clear error naming the file,
    what the study needs and what the split gives; no traceback, no nan, no folder."""
    from cli_files import leftovers, snapshot, synthetic

    preds, gt = synthetic(tmp_path, n=n)
    before = snapshot(preds, gt)
    runs = [["study", s, "--out", str(tmp_path / s)] for s in (*STUDIES, "all")]
    runs.append(["validity", "validity", "--out", str(tmp_path / "validity")])
    for args in runs:
        name = args.pop(1) if args[0] == "validity" else args[1]
        assert main([*args, "--preds", str(preds), "--gt", str(gt), "--resamples", "2"]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and "nan" not in err and "Mean of empty" not in err
        assert f"{preds}: too few rows" in err, err
        if n < 5:  # three queries per video: one video only
            assert f"{n} row{'s' * (n > 1)} from 1 video" in err and "at least 2 videos" in err
        elif name == "exchangeability":
            assert "needs at least 100 test rows" in err and "smaller --cal-frac" in err
        else:
            need = "19" if name in ("coverage", "validity", "two-param", "all") else "9"
            assert f"needs at least {need} calibration rows in every resample" in err, err
            assert ("--alphas" in err) == (name in ("coverage", "validity", "all"))
        assert not (tmp_path / args[args.index("--out") + 1]).exists()
    assert snapshot(preds, gt) == before and leftovers(tmp_path) == []


def test_study_minimum_per_study(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """60 rows: studies at the headline alpha 0.1 run (no nan in any table), two-param
    (0.05 per side) and exchangeability (a 100-row window) say what they need."""
    from cli_files import synthetic

    preds, gt = synthetic(tmp_path, n=60)
    common = ["--preds", str(preds), "--gt", str(gt), "--resamples", "2", "--alphas", "0.2",
              "--no-report"]
    assert main(["study", "utility", "--out", str(tmp_path / "u"), *common]) == 0
    assert main(["study", "conditional", "--out", str(tmp_path / "c"), *common]) == 0
    for md in tmp_path.glob("*/*/*.md"):
        assert " nan " not in md.read_text() and "+nan" not in md.read_text(), md
    capsys.readouterr()
    assert main(["study", "two-param", "--out", str(tmp_path / "t"), *common]) == 2
    err = capsys.readouterr().err
    assert "too few rows for two-param: alpha 0.05 needs at least 19 calibration rows" in err
    assert "the calibration pool has 24 of the 60 rows (8 of 20 videos, --cal-frac 0.4)" in err
    assert "--resample-frac" in err and not (tmp_path / "t").exists()


@pytest.mark.parametrize("command", ["study", "validity"])
@pytest.mark.parametrize("flags", [["--resamples", "0"], ["--resamples", "1"],
                                   ["--split-seeds", "1"], ["--alphas", "0.1", "0.2", "0.10"]])
def test_resamples_below_two_and_a_repeated_alpha_name_the_flag(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str,
        flags: list[str]) -> None:
    """One resample gave "± 0.000" and one split seed "± n/a" for a spread neither can
    measure; an alpha given twice gave every table a repeated row: all are usage errors
    naming the flag."""
    from cli_files import synthetic

    preds, gt = synthetic(tmp_path, n=60)
    head = ["study", "coverage"] if command == "study" else ["validity"]
    with pytest.raises(SystemExit) as exc:
        main([*head, "--preds", str(preds), "--gt", str(gt), "--out", str(tmp_path / "o"),
              *flags])
    assert exc.value.code == 2
    over = {"--resamples": "resamples", "--split-seeds": "split seeds"}.get(flags[0])
    want = (f"argument {flags[0]}: must be a whole number >= 2 (the spread over {over} "
            f"needs two), got {flags[1]}" if over else "argument --alphas: 0.1 given twice")
    assert want in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_cli_study_split_seeds_section(data_dir: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """--split-seeds adds split_seeds.json per pair, a stacked table, the flag in the
    reproduce command and a report section whose caption says what the spread is."""
    q = data_dir / "qvhighlights"
    out = tmp_path / "r"
    assert main(["study", "conditional", "--preds", str(q / "eatr" / "best_hl_val_preds.jsonl"),
                 "--gt", str(q / "annotations" / "highlight_val_release.jsonl"), "--name",
                 "EaTR", "--out", str(out), "--resamples", "3", "--split-seeds", "4"]) == 0
    printed = capsys.readouterr().out
    assert "split alone moves the number" in printed and "coverage: Long" in printed
    doc = json.loads((out / "eatr-qvhighlights" / "split_seeds.json").read_text())["data"]
    assert doc["seeds"] == [0, 1, 2, 3] and doc["protocol_seed"] == 42
    assert {c["study"] for c in doc["cells"]} == {"conditional"}
    assert all(len(c["values"]) == 4 for c in doc["cells"])
    man = json.loads((out / "manifest.json").read_text())
    assert man["studies"] == ["conditional", "split-seeds"]
    assert "--split-seeds 4" in man["command"]
    html = (out / "report.html").read_text()
    assert "id=\"s-split-seeds\"" in html and "split alone moves the number" in html


def test_split_seeds_need_the_envelope_target(data_dir: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    q = data_dir / "qvhighlights"
    assert main(["validity", "--preds", str(q / "eatr" / "best_hl_val_preds.jsonl"),
                 "--gt", str(q / "annotations" / "highlight_val_release.jsonl"),
                 "--out", str(tmp_path / "v"), "--target", "windows",
                 "--split-seeds", "3"]) == 2
    err = capsys.readouterr().err
    assert "--split-seeds needs --target envelope" in err and "Traceback" not in err
    assert not (tmp_path / "v").exists()


@pytest.mark.parametrize("n", [1, -3, 2.5, True])
def test_the_api_takes_no_split_seed_count_the_command_line_refuses(tmp_path: Path,
                                                                    n: object) -> None:
    """One split seed has no spread (the CLI refuses it): the jobs refuse it too, before
    anything is read or written, as the library's spread does."""
    from cover.errors import InputError
    from cover.jobs.study import run_studies
    from cover.jobs.study_inputs import InputPair
    from cover.jobs.validity import run_validity
    from cover.studies import Protocol
    from cover.studies.seed_spread import split_spread

    missing = tmp_path / "none.jsonl"
    with pytest.raises(InputError, match=r"split_seeds must be 0 \(no spread\) or a whole "):
        run_validity(preds=[missing], gt=missing, out=tmp_path / "v",
                     split_seeds=n)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"split_seeds must be 0 \(no spread\) or a whole "):
        run_studies(studies=["coverage"], inputs=[InputPair(missing, missing, "g", "d")],
                    out=tmp_path / "s", protocol=Protocol(),
                    split_seeds=n)  # type: ignore[arg-type]
    assert not list(tmp_path.iterdir())
    if n == 1:
        with pytest.raises(ValueError, match="n_seeds must be >= 2"):
            split_spread(None, name="g", dataset="d", protocol=Protocol(), n_seeds=1,
                         families=["norm"])


def test_no_report_writes_tables_without_figures(tmp_path: Path) -> None:
    """--no-report skips report.html and the figures only it shows: every study's JSON and
    Markdown are there, no PNG, and the manifest lists no figure."""
    from cli_files import synthetic

    preds, gt = synthetic(tmp_path, n=90)
    out = tmp_path / "s"
    assert main(["study", "margins", "--preds", str(preds), "--gt", str(gt), "--out", str(out),
                 "--resamples", "2", "--no-report"]) == 0
    man = json.loads((out / "manifest.json").read_text())
    assert man["pairs"][0]["studies"]["margins"].endswith("margins.json")
    assert man["pairs"][0]["figures"] == {"margins": []} and man["comparisons"] == []
    assert not list(out.rglob("*.png")) and not (out / "report.html").exists()


def test_figures_change_no_number_nor_order(tmp_path: Path) -> None:
    """With figures the studies that have some run first (the figure worker draws
    meanwhile): every study's JSON and Markdown are the bytes of a run without figures,
    and the manifest lists the studies in the same order."""
    from cli_files import synthetic

    preds, gt = synthetic(tmp_path, n=240)
    runs = {}
    for name, extra in (("figs", []), ("plain", ["--no-report"])):
        out = tmp_path / name
        assert main(["study", "all", "--preds", str(preds), "--gt", str(gt), "--out", str(out),
                     "--resamples", "2", *extra]) == 0
        runs[name] = out
    man = {k: json.loads((v / "manifest.json").read_text()) for k, v in runs.items()}
    studies = list(man["plain"]["pairs"][0]["studies"])
    assert list(man["figs"]["pairs"][0]["studies"]) == studies
    assert studies == [s for s in STUDIES if s in studies] and len(studies) > 5
    assert list(man["figs"]["pairs"][0]["figures"]) == studies
    assert man["figs"]["tables"] == man["plain"]["tables"]
    pair = man["plain"]["pairs"][0]["id"]
    for rel in sorted(p.relative_to(runs["plain"]) for p in (runs["plain"] / pair).iterdir()):
        assert (runs["figs"] / rel).read_bytes() == (runs["plain"] / rel).read_bytes(), rel
    assert list((runs["figs"] / pair).glob("*.png"))


def test_study_reads_with_clip_and_strict_as_validity_does(tmp_path: Path) -> None:
    """--clip and --strict reach the reader of `cover study` (they were validity's only):
    a window reaching past the video is clipped by default and rejected with --strict, and
    the command that reproduces the run spells out what was not the default."""
    from cli_files import synthetic_rows, write_jsonl

    preds, gts = synthetic_rows(90)
    preds[4]["pred_relevant_windows"] = [[140.0, 170.0, 0.9]]  # T = 150
    p, g = write_jsonl(tmp_path / "p.jsonl", preds), write_jsonl(tmp_path / "g.jsonl", gts)
    common = ["study", "coverage", "--preds", str(p), "--gt", str(g), "--resamples", "2",
              "--alphas", "0.2", "--no-report", "--on-error", "reject"]
    mans = {}
    for name, extra in (("plain", []), ("strict", ["--strict", "--clip", "1"])):
        assert main([*common, *extra, "--out", str(tmp_path / name)]) == 0
        mans[name] = json.loads((tmp_path / name / "manifest.json").read_text())
    assert mans["plain"]["pairs"][0]["problems"]["rejected"] == 0
    assert mans["plain"]["pairs"][0]["problems"]["clipped"] >= 1
    assert mans["strict"]["pairs"][0]["problems"]["rejected"] == 1
    assert "--strict" not in mans["plain"]["command"] and "--clip" not in mans["plain"]["command"]
    assert mans["strict"]["command"].endswith("--clip 1 --strict --on-error reject")


@given(st.floats(min_value=1e-9, max_value=1e9, allow_nan=False))
def test_the_reproduce_command_gives_every_number_back_exactly(x: float) -> None:
    """Each number of the command that reproduces a study reads back as the run's own
    (six significant digits would change 0.1234567 or 1234567.5)."""
    from cover.jobs.study_inputs import number_text

    assert float(number_text(x)) == x
