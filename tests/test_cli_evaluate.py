"""``cover evaluate --gt`` in any ground-truth format, joined like ``cover calibrate``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from cover.cli import main
from cover.data.table import GroundingTable
from cover.io.content_join import known_vids
from cover.io.order_join import join_truth
from cover.ragged import Ragged


def _halves(tmp_path: Path, qids: list[str]) -> tuple[Path, Path]:
    cal, test = tmp_path / "cal_qids.txt", tmp_path / "test_qids.txt"
    cal.write_text("\n".join(qids[::2]) + "\n")
    test.write_text("\n".join(qids[1::2]) + "\n")
    return cal, test


def _evaluate(tmp_path: Path, regions: Path, gt: Path, name: str) -> dict:
    out = tmp_path / f"{name}.json"
    assert main(["evaluate", "--regions", str(regions), "--gt", str(gt), "--json",
                 str(out)]) == 0
    return json.loads(out.read_text())


def test_la_detr_charades_text_truth_gives_the_lighthouse_numbers(data_dir: Path,
                                                                   tmp_path: Path) -> None:
    preds = data_dir / "charades_sta/la_detr/hl_test_submission.jsonl"
    lighthouse = data_dir / "lighthouse/charades_test_release.jsonl"
    text = data_dir / "charades_sta/annotations/charades_sta_test.txt"
    qids = [str(json.loads(x)["qid"]) for x in preds.read_text().splitlines()]
    cal_q, test_q = _halves(tmp_path, qids)
    cal, regions = tmp_path / "cal.json", tmp_path / "regions.jsonl"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(lighthouse), "--qids",
                 str(cal_q), "-o", str(cal)]) == 0
    assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--qids",
                 str(test_q), "--videos", str(lighthouse), "-o", str(regions)]) == 0
    a = _evaluate(tmp_path, regions, lighthouse, "lighthouse")
    b = _evaluate(tmp_path, regions, text, "text")
    assert a["counts"]["rows"] == b["counts"]["rows"] == 1860
    assert b["counts"]["ground_truth_not_certified"] == 1860
    assert b["marginal"]["coverage"] == a["marginal"]["coverage"]
    assert 0.87 < a["marginal"]["coverage"] < 0.93
    assert b["field_metrics"] == a["field_metrics"]


def test_timechat_regions_join_any_truth(data_dir: Path, tmp_path: Path, capsys) -> None:
    """Regions certified from TimeChat predictions (vid ``X.mp4``, qid = line index)
    evaluate against the Lighthouse jsonl (other qids) as against the text file."""
    preds = data_dir / "charades_sta/timechat_repo_example/example_pred_file.json"
    lighthouse = data_dir / "lighthouse/charades_test_release.jsonl"
    text = data_dir / "charades_sta/annotations/charades_sta_test.txt"
    qids = sorted(json.loads(preds.read_text()), key=int)
    cal_q, test_q = _halves(tmp_path, qids)
    cal, regions = tmp_path / "cal.json", tmp_path / "regions.jsonl"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(text), "--qids", str(cal_q),
                 "--on-error", "reject", "-o", str(cal)]) == 0
    assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--qids",
                 str(test_q), "--videos", str(lighthouse), "--on-error", "reject", "-o",
                 str(regions)]) == 0
    a = _evaluate(tmp_path, regions, text, "text")
    capsys.readouterr()
    b = _evaluate(tmp_path, regions, lighthouse, "lighthouse")
    err = capsys.readouterr().err
    assert "moment-detr-gt (3720 rows)" in err
    n = a["counts"]["rows"]
    assert f"joined on (vid, query text): {n} of {n} regions matched (0 by qid)" in err
    assert b["counts"]["rows"] == n and n + a["counts"]["rejected_at_certify"] == 250
    assert a["marginal"] == b["marginal"]


def test_evaluate_takes_the_gt_format_flags(tmp_path: Path) -> None:
    gt = tmp_path / "gt.csv"
    gt.write_text("id,video,T,s,e\nq1,v1,60,10,20\nq2,v2,60,30,40\n")
    regions = tmp_path / "regions.jsonl"
    block = {"status": "certified", "refused": False, "duration": 60.0, "score": "norm",
             "rule": "split", "alpha": 0.1, "threshold": 1.0, "k": 1, "n_calibration": 1}
    regions.write_text("\n".join(json.dumps(
        {"qid": q, "vid": f"{v}.mp4", "cover": {**block, "region": r}})
        for q, v, r in (("q1", "v1", [[5, 25]]), ("q2", "v2", [[0, 35]]))) + "\n")
    out = tmp_path / "m.json"
    assert main(["evaluate", "--regions", str(regions), "--gt", str(gt), "--gt-columns",
                 "qid=id,vid=video,duration=T,start=s,end=e", "--json", str(out)]) == 0
    got = json.loads(out.read_text())
    assert got["counts"]["rows"] == 2
    assert got["marginal"]["coverage"] == 0.5


def _table(qid: list[str], vid: list[str], query: list[str]) -> GroundingTable:
    n = len(qid)
    return GroundingTable(qid=np.array(qid), vid=np.array(vid), pred_start=np.zeros(n),
                          pred_end=np.ones(n), duration=np.full(n, 10.0),
                          relevance=Ragged(np.empty(0), np.zeros(n + 1, dtype=np.int64)),
                          query=np.array(query, dtype=object))


def test_known_vids_strips_extension_and_prefix_only_when_that_names_a_video() -> None:
    known = np.array(["A1", "abc", "v_x"])
    got = known_vids(np.array(["A1.mp4", "v_abc.mp4", "v_x", "B.mkv", "abc"]), known)
    assert got.tolist() == ["A1", "abc", "v_x", "B.mkv", "abc"]


def test_join_truth_rekeys_only_when_content_matches_more() -> None:
    preds = _table(["0", "1"], ["a", "b"], ["Walk.", "run"])
    gt = _table(["10", "11"], ["a", "b"], ["walk", "run"])
    got = join_truth(preds, gt)
    assert (got.agree, got.matched, got.how) == (0, 2, "(vid, query text)")
    assert got.gt.qid.tolist() == ["0", "1"]
    same = join_truth(preds, preds)
    assert same.gt is preds and (same.agree, same.matched) == (2, 0)


def _certified_synthetic(tmp_path: Path, n: int = 60) -> tuple[Path, Path, Path, Path]:
    """``n`` synthetic rows: a calibrator at alpha 0.1 on the first half, the others
    certified as JSON lines, and a second calibrator at alpha 0.3."""
    from cli_files import synthetic, write_jsonl

    preds, gt = synthetic(tmp_path, n=n, saliency=False)
    rows = [json.loads(x) for x in preds.read_text().splitlines()]
    cal_p = write_jsonl(tmp_path / "cal_preds.jsonl", list(rows[:n // 2]))
    test_p = write_jsonl(tmp_path / "test_preds.jsonl", list(rows[n // 2:]))
    cal, cal3 = tmp_path / "cal.json", tmp_path / "cal3.json"
    regions = tmp_path / "regions.jsonl"
    for path, alpha in ((cal, "0.1"), (cal3, "0.3")):
        assert main(["calibrate", "--preds", str(cal_p), "--gt", str(gt), "--score", "sec",
                     "--alpha", alpha, "--on-error", "reject", "-o", str(path)]) == 0
    assert main(["certify", "--calibrator", str(cal), "--preds", str(test_p), "--videos",
                 str(gt), "-o", str(regions)]) == 0
    return gt, cal, cal3, regions


def _certified_from_csv(tmp_path: Path, cal: Path, out: str) -> Path:
    """The test rows of :func:`_certified_synthetic` as a CSV table (top-1 start and end),
    certified by ``cal`` into ``out`` (its suffix picks the format)."""
    lines = [json.loads(x) for x in (tmp_path / "test_preds.jsonl").read_text().splitlines()]
    csv_in = tmp_path / "test.csv"
    csv_in.write_text("qid,vid,duration,start,end\n" + "".join(
        f"{r['qid']},{r['vid']},150,{r['pred_relevant_windows'][0][0]},"
        f"{r['pred_relevant_windows'][0][1]}\n" for r in lines))
    regions = tmp_path / out
    assert main(["certify", "--calibrator", str(cal), "--preds", str(csv_in), "--columns",
                 "qid=qid,vid=vid,duration=duration,start=start,end=end", "-o",
                 str(regions)]) == 0
    return regions


def _tamper(regions: Path, line: int, change: dict, qid: object = None) -> Path:
    rows = [json.loads(x) for x in regions.read_text().splitlines()]
    rows[line - 1]["cover"].update(change)
    if qid is not None:
        rows[line - 1]["qid"] = qid
    out = regions.with_name("tampered.jsonl")
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def test_regions_rules_hold_on_every_path(tmp_path: Path, capsys) -> None:
    """`"refused": "yes"`, certified-but-refused, a qid with a NUL that would join another
    qid: a row problem naming file, line and field, streamed and whole, JSON lines and
    Parquet; with --on-error reject the row is set aside."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    gt, _, _, regions = _certified_synthetic(tmp_path)
    first_qid = json.loads(regions.read_text().splitlines()[0])["qid"]
    cases = [
        ({"refused": "yes"}, None, 'cover.refused must be true or false, got "yes"'),
        ({"status": "certified", "refused": True}, None,
         'cover.status is "certified" but cover.refused is true'),
        ({}, f"{first_qid}\x00", f'qid "{first_qid}\\u0000" contains a NUL character'),
    ]
    for change, qid, want in cases:
        bad = _tamper(regions, 3, change, qid)
        before = bad.read_bytes()
        for flags in ([], ["--in-memory"], ["--batch-rows", "7"]):
            capsys.readouterr()
            assert main(["evaluate", "--regions", str(bad), "--gt", str(gt), *flags]) == 2
            err = capsys.readouterr().err
            assert f"{bad}:3" in err and want in err, (flags, err)
            assert "{'" not in err and "Traceback" not in err
            assert main(["evaluate", "--regions", str(bad), "--gt", str(gt), "--on-error",
                         "reject", *flags]) == 0
        assert bad.read_bytes() == before
    # Parquet regions: the same rules through the same reader.
    rows = [json.loads(x) for x in regions.read_text().splitlines()]
    rows[2]["cover"]["status"] = "certified"
    rows[2]["cover"]["refused"] = True
    rows[4]["qid"] = f"{first_qid}\x00"
    keep = ("status", "region", "refused", "duration", "threshold")
    table = pa.table({"qid": [str(r["qid"]) for r in rows], "vid": [r["vid"] for r in rows],
                      "cover": [{k: r["cover"][k] for k in keep} for r in rows]})
    meta = {b"cover.calibrator": json.dumps({k: rows[0]["cover"].get(k) for k in (
        "score", "rule", "alpha", "k", "n_calibration")}).encode()}
    pq.write_table(table.replace_schema_metadata(meta), tmp_path / "r.parquet")
    for flags in ([], ["--in-memory"]):
        capsys.readouterr()
        assert main(["evaluate", "--regions", str(tmp_path / "r.parquet"), "--gt", str(gt),
                     "--on-error", "reject", *flags]) == 0
        err = capsys.readouterr().err
        assert 'cover.status is "certified" but cover.refused is true' in err, err
        assert "contains a NUL character" in err


def test_regions_rows_naming_no_vid_are_on_their_querys_video(tmp_path: Path,
                                                                capsys) -> None:
    """A regions row without a vid (certified from a layout naming none) takes its
    query's video from the truth, by qid, streamed or whole, JSON lines or Parquet: the
    metrics of the same rows with their vids, clusters included. A row naming another
    video than its query's is still rejected. Before, every such row was rejected (its
    vid, its qid, differed from the truth's)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    gt, _, _, regions = _certified_synthetic(tmp_path)
    rows = [json.loads(x) for x in regions.read_text().splitlines()]
    want = _evaluate(tmp_path, regions, gt, "with_vids")
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps({k: v for k, v in r.items()
                                        if k != "vid" or i % 2}) + "\n"
                            for i, r in enumerate(rows)))
    keep = ("status", "region", "refused", "duration", "threshold")
    meta = {b"cover.calibrator": json.dumps({k: rows[0]["cover"].get(k) for k in (
        "score", "rule", "alpha", "k", "n_calibration")}).encode()}
    pq.write_table(pa.table({"qid": [str(r["qid"]) for r in rows],
                             "cover": [{k: r["cover"][k] for k in keep} for r in rows]}
                            ).replace_schema_metadata(meta), tmp_path / "bare.parquet")
    n_bare = {bare: (len(rows) + 1) // 2, tmp_path / "bare.parquet": len(rows)}
    for path, n in n_bare.items():
        for flags in ([], ["--in-memory"], ["--batch-rows", "7"]):
            out = tmp_path / "m.json"
            capsys.readouterr()
            assert main(["evaluate", "--regions", str(path), "--gt", str(gt), "--json",
                         str(out), *flags]) == 0, (path, flags)
            assert (f"{path}: the rows name no vid; took it from {gt} for {n} rows (by qid)"
                    in capsys.readouterr().err)
            got = json.loads(out.read_text())
            for part in ("marginal", "reference", "counts"):
                assert got[part] == want[part], (path, flags, part)
    rows[0]["vid"] = "another_video"
    wrong = tmp_path / "wrong.jsonl"
    wrong.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "vid" or i < 2})
                             + "\n" for i, r in enumerate(rows)))
    assert main(["evaluate", "--regions", str(wrong), "--gt", str(gt)]) == 2
    assert "wrong.jsonl:1 (qid=" in (err := capsys.readouterr().err)
    assert "vid differs from ground truth ('another_video' vs " in err


def test_csv_regions_against_another_calibrator_are_refused(tmp_path: Path, capsys) -> None:
    """CSV regions carry no alpha: a calibrator whose thresholds are not theirs (another
    alpha) is a row problem on every path, and `"yes"` is not a refusal."""
    gt, cal, cal3, _ = _certified_synthetic(tmp_path)
    regions = _certified_from_csv(tmp_path, cal, "regions.csv")
    for flags in ([], ["--in-memory"], ["--batch-rows", "5"]):
        assert main(["evaluate", "--regions", str(regions), "--gt", str(gt), "--calibrator",
                     str(cal), *flags]) == 0
        capsys.readouterr()
        assert main(["evaluate", "--regions", str(regions), "--gt", str(gt), "--calibrator",
                     str(cal3), *flags]) == 2
        err = capsys.readouterr().err
        assert f"{regions}:2" in err and "is not a threshold of the calibrator" in err, err
        assert str(cal3) in err
    text = regions.read_text().splitlines()
    text[1] = text[1].replace(",false,", ",yes,")
    assert ",yes," in text[1]
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(text) + "\n")
    for flags in ([], ["--in-memory"]):
        capsys.readouterr()
        assert main(["evaluate", "--regions", str(bad), "--gt", str(gt), *flags]) == 2
        err = capsys.readouterr().err
        assert f"{bad}:2" in err and 'cover.refused must be true or false, got "yes"' in err


def test_batch_rows_zero_names_the_flag(tmp_path: Path, capsys) -> None:
    import pytest

    for cmd in (["evaluate", "--regions", "r.jsonl", "--gt", "g.jsonl"],
                ["certify", "--calibrator", "c.json", "--preds", "p.jsonl", "-o", "o.jsonl"]):
        with pytest.raises(SystemExit):
            main([*cmd, "--batch-rows", "0"])
        err = capsys.readouterr().err
        assert "argument --batch-rows: must be a whole number >= 1, got 0" in err
        assert "batch_lines" not in err and "batch_rows" not in err


def test_csv_regions_of_a_conditional_calibrator_pass_the_threshold_check(tmp_path: Path,
                                                                          capsys) -> None:
    """`--rule conditional` gives each row its own threshold (from its covariates), none
    of a list the calibrator holds: its CSV regions evaluate with --calibrator on every
    path, with the coverage of the same rows certified to JSON lines."""
    from cli_files import synthetic, write_jsonl

    preds, gt = synthetic(tmp_path, n=120, saliency=False)
    rows = [json.loads(x) for x in preds.read_text().splitlines()]
    cal_p = write_jsonl(tmp_path / "cal_preds.jsonl", list(rows[:60]))
    test_p = write_jsonl(tmp_path / "test_preds.jsonl", list(rows[60:]))
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(cal_p), "--gt", str(gt), "--score", "norm",
                 "--rule", "conditional", "--alpha", "0.2", "--on-error", "reject", "-o",
                 str(cal)]) == 0
    csv_in = tmp_path / "test.csv"
    csv_in.write_text("qid,vid,duration,start,end\n" + "".join(
        f"{r['qid']},{r['vid']},150,{r['pred_relevant_windows'][0][0]},"
        f"{r['pred_relevant_windows'][0][1]}\n" for r in rows[60:]))
    regions, jsonl = tmp_path / "regions.csv", tmp_path / "regions.jsonl"
    assert main(["certify", "--calibrator", str(cal), "--preds", str(csv_in), "--columns",
                 "qid=qid,vid=vid,duration=duration,start=start,end=end", "-o",
                 str(regions)]) == 0
    assert main(["certify", "--calibrator", str(cal), "--preds", str(test_p), "--videos",
                 str(gt), "-o", str(jsonl)]) == 0
    assert len({line.split(",")[-4] for line in regions.read_text().splitlines()[1:]}) > 10
    ref = _evaluate(tmp_path, jsonl, gt, "ref")
    for flags in ([], ["--in-memory"], ["--batch-rows", "7"]):
        out = tmp_path / "csv.json"
        capsys.readouterr()
        assert main(["evaluate", "--regions", str(regions), "--gt", str(gt), "--calibrator",
                     str(cal), "--json", str(out), *flags]) == 0, capsys.readouterr().err
        got = json.loads(out.read_text())
        assert got["counts"]["rows"] == 60 and got["counts"]["rejected_here"] == 0
        assert (got["marginal"], got["alpha"]) == (ref["marginal"], ref["alpha"])


def test_tgn_proposals_calibrate_certify_evaluate_as_the_study_fits(
        data_dir: Path, tmp_path: Path) -> None:
    """TGN writes ten scored proposals and no saliency, and names its queries <vid>-<k>
    where Charades-STA numbers them by line: `cover split --preds` writes the lists in
    TGN's names, so the one pair of lists serves calibrate, certify and evaluate, from
    the command line alone. SLS on the relevance built from the proposals, calibrated,
    certified on held-out videos and evaluated, gives the regions of the study's fit
    (the labelled table read with the flag, fitted as is), a coverage near 1 - alpha,
    and, read through TGN's layout, the field's metrics of the study's table."""
    from cover.calibrate import Calibrator
    from cover.io import formats
    from cover.io.labelled import read_labelled

    preds = data_dir / "charades_sta/tgn/TGN_predict_proposals_test_nms_0.55.json"
    gt = data_dir / "charades_sta/annotations/charades_sta_test.txt"
    videos = data_dir / "charades_sta/annotations/charades.json"
    by_gt = tmp_path / "by_gt"
    assert main(["split", "--gt", str(gt), "--out-dir", str(by_gt)]) == 0
    assert main(["split", "--gt", str(gt), "--preds", str(preds), "--out-dir",
                 str(tmp_path)]) == 0
    cal_q, test_q = tmp_path / "calibration_qids.txt", tmp_path / "test_qids.txt"
    cal, regions, metrics = tmp_path / "cal.json", tmp_path / "r.jsonl", tmp_path / "m.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--qids", str(cal_q),
                 "--score", "sls", "--alpha", "0.3", "--relevance-from", "proposals",
                 "-o", str(cal)]) == 0
    assert json.loads(cal.read_text())["relevance"] == "proposals"
    cal_t = read_labelled(preds, gt, qids=cal_q, relevance_from="proposals").table
    test_t = read_labelled(preds, gt, qids=test_q, relevance_from="proposals").table
    # the split of the ground truth's own lists (the same videos, as many queries), in
    # TGN's names
    truth = formats.read(gt, "ground_truth").loaded.table
    vid_of = dict(zip(truth.qid.tolist(), truth.vid.tolist(), strict=True))
    for mine, theirs, n in ((cal_q, by_gt / "calibration_qids.txt", 1536),
                            (test_q, by_gt / "test_qids.txt", 2184)):
        named, own = mine.read_text().splitlines(), theirs.read_text().splitlines()
        assert len(named) == len(own) == n
        assert {q.rsplit("-", 1)[0] for q in named} == {vid_of[q] for q in own}
    assert sorted(test_t.qid.tolist()) == sorted(test_q.read_text().splitlines())
    assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--videos",
                 str(videos), "--qids", str(test_q), "-o", str(regions)]) == 0
    # TGN's proposals, echoed as certify read them ("value": [{timestamp, score}, ...]),
    # are the base prediction read through the layout (--format).
    assert main(["evaluate", "--regions", str(regions), "--gt", str(gt), "--relevance-from",
                 "proposals", "--format", "tgn-proposals", "--json", str(metrics)]) == 0
    study = Calibrator(score="sls", alpha="0.3").fit(cal_t)
    assert Calibrator.load(cal).threshold_ == study.threshold_
    want = dict(zip(test_t.qid.tolist(), study.certify(test_t).intervals.to_lists(),
                    strict=True))
    rows = [json.loads(x) for x in regions.read_text().splitlines()]
    assert len(rows) == len(want) == 2184
    assert {r["qid"]: r["cover"]["region"] or [] for r in rows} == want
    m = json.loads(metrics.read_text())
    assert m["counts"]["rows"] == 2184
    assert 0.65 < m["marginal"]["coverage"] < 0.75  # alpha = 0.3
    # the field's metrics of the study's table on the same queries
    from cover.grounding_metrics import grounding_metrics

    want = grounding_metrics(test_t).to_dict()["full"]
    assert m["field_metrics"]["full"] == pytest.approx(want, rel=1e-12)


def test_rows_rejected_in_either_file_are_reported_as_the_evaluation_input(tmp_path: Path,
                                                                           capsys) -> None:
    """A bad region row and a bad ground-truth row: one report of the evaluation input,
    each row named with its own file (the report was headed by the regions file alone),
    streamed and read whole alike."""
    gt, _, _, regions = _certified_synthetic(tmp_path)
    bad = _tamper(regions, 3, {"region": [[50.0, 10.0]]})
    rows = [json.loads(x) for x in gt.read_text().splitlines()]
    target = json.loads(regions.read_text().splitlines()[4])["qid"]
    hit = next(i for i, r in enumerate(rows) if r["qid"] == target)
    rows[hit]["relevant_windows"] = [[60.0, 20.0]]
    gt_bad = tmp_path / "gt_bad.jsonl"
    gt_bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    said = []
    capsys.readouterr()
    for flags in ([], ["--in-memory"], ["--batch-rows", "2"]):
        assert main(["evaluate", "--regions", str(bad), "--gt", str(gt_bad), "--on-error",
                     "reject", *flags]) == 0
        err = capsys.readouterr().err
        said.append([ln for ln in err.splitlines()
                     if (ln.startswith("cover: ") and " rejected in " in ln)
                     or ln.startswith("  ")])
    head = said[0][0]
    # the region row of the rejected truth row has no ground truth left: rejected too
    assert head.startswith(f"cover: 3 row(s) rejected in evaluation input (2 in {bad}, "
                           f"1 in {gt_bad}): "), head
    assert f"its ground-truth row in {gt_bad} was rejected (1)" in head, head
    assert any(f"{bad}:3" in ln for ln in said[0])
    assert any(f"{gt_bad}:{hit + 1}" in ln for ln in said[0])
    assert said[1] == said[0] == said[2]


def test_a_json_document_given_as_regions_is_named_before_the_truth_is_read(tmp_path: Path,
                                                                           capsys) -> None:
    """A calibrator (one JSON object over many lines) given as --regions is refused as
    what it is, not as one bad row a line; the ground truth is not read first (it does
    not exist here)."""
    cal = tmp_path / "calibrator.json"
    cal.write_text(json.dumps({"schema": "cover.calibrator", "alpha": 0.1}, indent=2))
    assert main(["evaluate", "--regions", str(cal), "--gt", str(tmp_path / "no.jsonl")]) == 2
    err = capsys.readouterr().err
    assert f"{cal}: one JSON object written over many lines, not the JSON lines" in err
    assert "bad row" not in err
    # the library's streamed read refuses it the same way (the job asks it first)
    from cover.errors import InputError
    from cover.stream.evaluate import _batch_readers

    with pytest.raises(InputError, match="one JSON object written over many lines"):
        next(_batch_readers(cal, 16, None, None))
    from cover.io import read_regions  # the whole-file reader of the API as well

    with pytest.raises(InputError, match="one JSON object written over many lines"):
        read_regions(cal, on_error="reject")


def test_no_row_left_to_evaluate_is_an_error_not_a_coverage_of_nan(tmp_path: Path,
                                                                   capsys) -> None:
    """Regions with no row to evaluate (every row rejected at certify, every row rejected
    here, a JSON array of none; JSON lines and Parquet, streamed and read whole): exit 2
    with the counts in words and no JSON written, never "coverage nan" and exit 0 (as
    calibrate refuses to fit on no row)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    gt, _, _, regions = _certified_synthetic(tmp_path)
    rows = [json.loads(x) for x in regions.read_text().splitlines()]
    at_certify = tmp_path / "at_certify.jsonl"
    at_certify.write_text("".join(json.dumps(r | {"cover": r["cover"] | {
        "status": "rejected", "region": None, "reason": "bad"}}) + "\n" for r in rows))
    here = tmp_path / "here.jsonl"
    here.write_text("".join(json.dumps(r | {"cover": r["cover"] | {"region": [[9.0, 1.0]]}})
                            + "\n" for r in rows))
    none = tmp_path / "none.json"
    none.write_text("[]")
    keep = ("status", "region", "refused", "duration", "threshold")
    meta = {b"cover.calibrator": json.dumps({k: rows[0]["cover"].get(k) for k in (
        "score", "rule", "alpha", "k", "n_calibration")}).encode()}
    table = pa.table({"qid": [str(r["qid"]) for r in rows], "vid": [r["vid"] for r in rows],
                      "cover": [{k: None if k == "region" else r["cover"][k] for k in keep}
                                | {"status": "rejected"} for r in rows]})
    pq.write_table(table.replace_schema_metadata(meta), tmp_path / "r.parquet")
    n, truth = len(rows), len(gt.read_text().splitlines())
    cases = [(at_certify, f"{n} row(s) rejected at certify (no region), 0 row(s) rejected "
                          f"here; {truth} ground-truth row(s) had no region"),
             (here, f"0 row(s) rejected at certify (no region), {n} row(s) rejected here "
                    "(a region component has start > end"),
             (none, f"0 row(s) rejected at certify (no region), 0 row(s) rejected here; "
                    f"{truth} ground-truth row(s) had no region"),
             (tmp_path / "r.parquet", f"{n} row(s) rejected at certify (no region)")]
    out = tmp_path / "metrics.json"
    for path, why in cases:
        for flags in ([], ["--in-memory"], ["--batch-rows", "7"]):
            capsys.readouterr()
            assert main(["evaluate", "--regions", str(path), "--gt", str(gt), "--on-error",
                         "reject", "--json", str(out), *flags]) == 2, (path, flags)
            cap = capsys.readouterr()
            assert (f"cover: error: no rows left to evaluate in {path} joined with {gt}: "
                    f"{why}") in cap.err, (path, flags, cap.err)
            assert "nan" not in cap.out + cap.err and not out.exists(), (path, flags)


@pytest.mark.parametrize("policy", ["whole-video", "drop", "miss"])
def test_a_summary_of_refused_rows_says_what_was_not_measured(tmp_path: Path, capsys,
                                                              policy: str) -> None:
    """Every row refused: the non-refused metrics are "none", and under --refusal-policy
    drop the marginal coverage is "not measured" and the test band not tested, in words
    (it printed "coverage nan ... is OUTSIDE its 95% test band" and counted the rows
    evaluated as 0 on the first line and as all of them on the last)."""
    gt, _, _, regions = _certified_synthetic(tmp_path)
    rows = [json.loads(x) for x in regions.read_text().splitlines()]
    refused = tmp_path / "refused.jsonl"
    refused.write_text("".join(json.dumps(r | {"cover": r["cover"] | {
        "status": "refused", "refused": True,
        "region": [[0.0, r["cover"]["duration"]]]}}) + "\n" for r in rows))
    out = tmp_path / "metrics.json"
    capsys.readouterr()
    assert main(["evaluate", "--regions", str(refused), "--gt", str(gt), "--refusal-policy",
                 policy, "--json", str(out)]) == 0
    said = capsys.readouterr().out
    n = len(rows)
    assert "nan" not in said.lower(), said
    assert "non-refused: none (every row evaluated was refused)" in said
    assert said.startswith(f"{refused}: {n} rows evaluated (sec, alpha=0.1)"), said
    assert f"rows: {n} evaluated" in said
    doc = json.loads(out.read_text())
    assert doc["non_refused"]["coverage"] is None and doc["counts"]["rows"] == n
    if policy == "drop":
        assert (f"the marginal counts 0 of them (--refusal-policy drop leaves the {n} "
                "refused out)") in said
        assert "coverage: not measured" in said and "reference: not tested" in said
        assert doc["marginal"]["coverage"] is None
    else:
        assert f"coverage {1.0 if policy == 'whole-video' else 0.0:.4f}" in said
        assert "its 95% test band" in said


def test_compact_regions_do_not_make_up_the_grounders_iou(tmp_path: Path, capsys) -> None:
    """--compact regions hold no predicted window: the base grounder's point-IoU is "not
    known" (null in the JSON), not 0.000 (what every row without a prediction scores),
    while the echoed regions of the same rows give it; the coverage is the same."""
    from cli_files import synthetic

    preds, gt = synthetic(tmp_path, n=60, saliency=False)
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--score", "sec",
                 "--on-error", "reject", "-o", str(cal)]) == 0
    got = {}
    for name, flags in (("echo", []), ("compact", ["--compact"])):
        regions, out = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.json"
        assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--videos",
                     str(gt), "--on-error", "reject", "-o", str(regions), *flags]) == 0
        capsys.readouterr()
        assert main(["evaluate", "--regions", str(regions), "--gt", str(gt), "--json",
                     str(out)]) == 0
        got[name] = (json.loads(out.read_text()), capsys.readouterr().out)
    (echo, _), (compact, said) = got["echo"], got["compact"]
    assert echo["point_iou"] > 0 and compact["point_iou"] is None
    assert "base grounder point-IoU not known (no row carries a predicted window" in said
    assert compact["marginal"] == echo["marginal"]


def test_regions_of_another_layout_give_the_base_iou_on_every_format(tmp_path: Path,
                                                                     capsys) -> None:
    """One table's rows (start, end: no pred_relevant_windows) as CSV, JSON lines and
    Parquet, each certified into its own format and the tables into JSON lines too:
    evaluate reads the base grounder's window from start and end on every format,
    streamed and whole, with the same numbers (JSON lines and Parquet said "not known",
    and a table certified into JSON lines kept no start or end). A row whose prediction
    has another name is read where --columns says (windows=, or start= and end=, field
    paths); any other --columns, or --calibrator, is refused for JSON lines before the
    ground truth is read."""
    pa_csv = pytest.importorskip("pyarrow.csv")
    pq = pytest.importorskip("pyarrow.parquet")
    gt, cal, _, _ = _certified_synthetic(tmp_path)
    _certified_from_csv(tmp_path, cal, "regions.csv")
    table = pa_csv.read_csv(tmp_path / "test.csv",
                            convert_options=pa_csv.ConvertOptions(column_types={
                                "qid": "string", "vid": "string"}))
    pq.write_table(table, tmp_path / "test.parquet")
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in table.to_pylist()))
    got = {}
    for kind, out in (("csv", "csv"), ("jsonl", "jsonl"), ("parquet", "parquet"),
                      ("csv", "jsonl"), ("parquet", "jsonl")):  # the last two: read whole
        regions = tmp_path / f"regions-{kind}.{out}"
        assert main(["certify", "--calibrator", str(cal), "--preds",
                     str(tmp_path / f"test.{kind}"), "--columns",
                     "qid=qid,vid=vid,duration=duration,start=start,end=end", "-o",
                     str(regions)]) == 0
        more = ["--calibrator", str(cal)] if out == "csv" else []
        for flags in ([], ["--in-memory"], ["--batch-rows", "7"]):
            js = tmp_path / "ev.json"
            assert main(["evaluate", "--regions", str(regions), "--gt", str(gt), "--json",
                         str(js), *more, *flags]) == 0
            doc = json.loads(js.read_text())
            got[kind, out, *flags] = (doc["point_iou"], doc["field_metrics"], doc["marginal"])
    first = got["csv", "csv"]
    assert first[0] is not None and first[1]["full"]["n"] == 30, first
    assert all(v == first for v in got.values()), got
    # A layout whose prediction is under another name (Shuffling Videos' "timestamp":
    # [s, e]): not known by itself, read where --columns says, with the same numbers.
    rows = [json.loads(x) for x in (tmp_path / "test.jsonl").read_text().splitlines()]
    for r in rows:
        r["timestamp"] = [r.pop("start"), r.pop("end")]
        r["windows"] = [[*r["timestamp"], 1.0]]
    (tmp_path / "ts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    regions = tmp_path / "regions-ts.jsonl"
    assert main(["certify", "--calibrator", str(cal), "--preds", str(tmp_path / "ts.jsonl"),
                 "--columns", "qid=qid,vid=vid,duration=duration,windows=windows", "-o",
                 str(regions)]) == 0
    for flags in ([], ["--columns", "start=timestamp.0,end=timestamp.1"],
                  ["--columns", "windows=windows"]):
        for more in ([], ["--in-memory"]):
            js = tmp_path / "ev.json"
            rows = [json.loads(x) for x in regions.read_text().splitlines()]
            if not flags:
                for r in rows:
                    r.pop("windows")
                bare = tmp_path / "bare.jsonl"
                bare.write_text("".join(json.dumps(r) + "\n" for r in rows))
            assert main(["evaluate", "--regions", str(bare if not flags else regions),
                         "--gt", str(gt), "--json", str(js), *flags, *more]) == 0
            doc = json.loads(js.read_text())
            if not flags:
                assert doc["point_iou"] is None and doc["field_metrics"] is None
            else:
                assert (doc["point_iou"], doc["field_metrics"], doc["marginal"]) == first
    capsys.readouterr()
    missing = tmp_path / "no-truth.jsonl"
    for flag, value, said in (
            ("--columns", "vid=v,start=start,end=end",
             "--columns: unknown field(s) vid; expected some of qid, windows, start, end, "
             "scores"),
            ("--columns", "start=a", "for JSON-lines regions, name the base grounder's "
             "prediction: windows=SOURCE (and scores=SOURCE), or start=SOURCE,end=SOURCE"),
            ("--format", "tgn-proposals", f"{regions.with_name('regions.csv')}: --format is "
             "for JSON-lines regions"),
            ("--calibrator", str(cal), f"{regions}: --calibrator is for CSV")):
        where = regions.with_name("regions.csv") if flag == "--format" else regions
        assert main(["evaluate", "--regions", str(where), "--gt", str(missing), flag,
                     value]) == 2
        err = capsys.readouterr().err
        assert said in err and "no-truth" not in err, err


def test_the_band_evaluate_cannot_widen_is_named_the_beta_band(tmp_path: Path,
                                                               capsys) -> None:
    """The regions say n and k, not how the calibration queries share videos: evaluate's
    reference names its interval the Beta band and says why (it called it the calibration
    band, which `cover calibrate` prints widened), and claims no design effect for it."""
    gt, _, _, regions = _certified_synthetic(tmp_path)
    out = tmp_path / "ev.json"
    capsys.readouterr()
    assert main(["evaluate", "--regions", str(regions), "--gt", str(gt), "--json",
                 str(out)]) == 0
    said = capsys.readouterr().out
    assert said.splitlines()[1].startswith("coverage "), said  # inside its band: no miss line
    assert re.search(r"\(Beta band \[0\.\d{4}, 0\.\d{4}\] from n = 30, Beta sd 0\.\d{4}: the "
                     r"calibration band before its widening for calibration queries that "
                     r"share a video, which the regions cannot count \(cover calibrate prints "
                     r"it\); this test sample's own sd", said), said
    ref = json.loads(out.read_text())["reference"]
    assert ref["calibration_band_name"] == "Beta band"
    assert ref["calibration_design_effect"] is None and ref["calibration_units"] is None


@pytest.mark.parametrize("region, said", [
    ("whole", "ABOVE (more coverage than asked, paid for in length; e.g. from calibration "
              "scores tied at the threshold, which cover calibrate counts)"),
    ("point", "BELOW (fewer true moments covered than promised)")])
def test_a_coverage_off_its_band_says_which_side_and_what_that_means(
        tmp_path: Path, capsys, region: str, said: str) -> None:
    """Above the test band is more coverage than asked, paid for in length (ties at the
    threshold give it: TGN's SLS at alpha 0.1 covers every test query), below it fewer
    true moments are covered than promised: the two are not one word ("OUTSIDE"), and
    their words are the study's."""
    gt, _, _, regions = _certified_synthetic(tmp_path, n=600)  # a band short of 1
    rows = [json.loads(x) for x in regions.read_text().splitlines()]
    for r in rows:
        t = r["cover"]["duration"]
        r["cover"]["region"] = [[0.0, t]] if region == "whole" else [[t / 2, t / 2 + 1e-3]]
    regions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    assert main(["evaluate", "--regions", str(regions), "--gt", str(gt)]) == 0
    lines = capsys.readouterr().out.splitlines()
    ref = next(ln for ln in lines if ln.startswith("reference"))
    assert f" is {said} its 95% test band [" in ref, ref
    # The miss first: the line after the header says it, in the same words.
    side = said.split(" ")[0].lower()
    assert lines[1].startswith(("falls short: " if side == "below" else "off its band: ")
                               + "coverage "), lines[:3]
    assert f" is {side} its 95% test band [" in lines[1]
    assert lines[1].endswith(said.split("(", 1)[1].split(";")[0].rstrip(")")), lines[1]
    assert lines[2].startswith("coverage ")


def test_a_prediction_file_given_as_regions_is_named_as_one(qdetr_preds: Path, qvh_gt: Path,
                                                            capsys) -> None:
    """QD-DETR's predictions given as --regions: one message naming the file and what to
    do, under either --on-error, where it listed all 1550 rows as bad, each for the
    block certify writes on every row."""
    for on_error in ("raise", "reject"):
        assert main(["evaluate", "--regions", str(qdetr_preds), "--gt", str(qvh_gt),
                     "--on-error", on_error]) == 2
        err = capsys.readouterr().err
        assert err.strip().splitlines()[-1] == (
            f"cover: error: {qdetr_preds}: no row has a cover.region list, which `cover "
            "certify` writes on every row: a prediction file? Certify it first and give its "
            "output as --regions"), on_error
        assert "bad row(s)" not in err


def test_a_prediction_file_given_as_gt_is_named_with_what_evaluate_takes(
        qdetr_preds: Path, capsys) -> None:
    """Predictions given as --gt: evaluate says what --gt and --regions take. It said
    "give it as --preds", a flag evaluate does not have."""
    assert main(["evaluate", "--regions", str(qdetr_preds), "--gt", str(qdetr_preds)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"cover: error: {qdetr_preds}: this is a predictions file (moment-detr), not ground "
        "truth: --gt takes the ground truth; predictions are certified first and the output "
        "given as --regions")


def test_distime_qvhighlights_certified_and_evaluated_through_its_layout(
        data_dir: Path, tmp_path: Path, capsys) -> None:
    """DisTime's QVHighlights list names no vid and writes its qid as QVHighlight_<n>.
    Given the ground truth as --videos, certify finds each row's duration by its qid
    (the ground truth's query names its video); evaluate takes each row's video from the
    truth by qid and detects the layout from the first row: the field's metrics of the
    study's table on the same queries, clustered by source video. Certify rejected every
    row (no video '<qid>' in the ground truth) and evaluate every row (vid differs)."""
    from cover.grounding_metrics import grounding_metrics
    from cover.io.labelled import read_labelled

    preds = data_dir / "qvhighlights/distime/DisTime-InternVL2_5-8B_qvh_val_results.json"
    gt = data_dir / "qvhighlights/annotations/highlight_val_release.jsonl"
    assert main(["split", "--gt", str(gt), "--out-dir", str(tmp_path)]) == 0
    split_said = capsys.readouterr().out
    cal_q, test_q = tmp_path / "calibration_qids.txt", tmp_path / "test_qids.txt"
    cal, regions, metrics = tmp_path / "cal.json", tmp_path / "r.jsonl", tmp_path / "m.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--qids", str(cal_q),
                 "-o", str(cal)]) == 0
    capsys.readouterr()
    assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--videos",
                 str(gt), "--qids", str(test_q), "-o", str(regions)]) == 0
    said = capsys.readouterr()
    assert "certified 927, refused (whole video) 0, rejected 0 of 927" in said.out
    assert (f"{preds}: the rows name no vid; each row's duration is its query's in {gt} "
            "(moment-detr-gt, by qid)") in said.err
    assert main(["evaluate", "--regions", str(regions), "--gt", str(gt), "--json",
                 str(metrics)]) == 0  # the layout detected from the first row, and named
    err = capsys.readouterr().err
    assert (f"{regions}: rows of the distime-list layout; each row's base prediction read "
            "as it reads it (--format distime-list)") in err
    assert f"{regions}: the rows name no vid; took it from {gt} for 927 rows (by qid)" in err
    got = json.loads(metrics.read_text())
    assert got["counts"]["rows"] == 927
    test_t = read_labelled(preds, gt, qids=test_q).table
    assert got["field_metrics"]["full"] == pytest.approx(
        grounding_metrics(test_t).to_dict()["full"], rel=1e-12)
    # each row on its own video: the test band's clusters are the split's source videos
    assert f"test 927 queries / {got['reference']['test_units']} videos" in split_said


def test_a_rejected_truth_row_keeps_its_place_in_a_join_by_order(data_dir: Path,
                                                                  tmp_path: Path, capsys,
                                                                  monkeypatch) -> None:
    """Shuffling Videos on ActivityNet-CD names each query <vid>-<k>; the ground truth
    has two rows whose window runs backwards (rejected), the 4th of ten queries of
    v_0bosp4-pyTM and the 6th of nine of v_rhOtqArO-3Y. Evaluate joins by order within
    each video as calibrate does, the rejected rows holding their places: every region
    meets its own query's truth, a region on a rejected row's place is told so, and the
    join is named for what it is. The video's later queries met the truth of the next
    one and its last none, under a message naming the join on (vid, query text). Rows
    named by their place, which the truth does not name so, are read whole at once: the
    stream read their first batch, found the join needed every row, and read it again."""
    import cover.io.regions_batch as regions_batch

    reads: list[int] = []
    real = regions_batch.load_regions
    monkeypatch.setattr(regions_batch, "load_regions",
                        lambda *a, **k: reads.append(1) or real(*a, **k))
    preds = data_dir / "activitynet_cd/shuffling_videos_mdc/prediction_results_test_ood.json"
    gt = data_dir / "activitynet_cd/momentdiff_repo/anet_test_ood_momentdiff.jsonl"
    videos = {"v_0bosp4-pyTM": 10, "v_rhOtqArO-3Y": 9}  # their queries, certified alone
    qids = tmp_path / "qids.txt"
    qids.write_text("".join(f"{v}-{k}\n" for v, n in videos.items() for k in range(n)))
    cal, regions, out = tmp_path / "cal.json", tmp_path / "r.jsonl", tmp_path / "m.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--qids", str(qids),
                 "--on-error", "reject", "-o", str(cal)]) == 0
    assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--qids",
                 str(qids), "-o", str(regions)]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--regions", str(regions), "--gt", str(gt), "--on-error",
                 "reject", "--json", str(out)]) == 0
    err = capsys.readouterr().err
    assert "joined on order within each video: 17 of 19 regions matched (0 by qid)" in err
    assert f"its ground-truth row in {gt} was rejected (2)" in err
    assert f"(qid=v_0bosp4-pyTM-3): its ground-truth row in {gt} was rejected" in err
    assert "no ground truth for this qid" not in err
    assert len(reads) == 1  # one batch, read once
    # the field's metrics of the regions are those of the labelled join calibrate reads
    from cover.grounding_metrics import grounding_metrics
    from cover.io.labelled import read_labelled

    labelled = read_labelled(preds, gt, qids=qids, on_error="reject").table
    assert len(labelled) == json.loads(out.read_text())["counts"]["rows"] == 17
    assert json.loads(out.read_text())["field_metrics"]["full"] == pytest.approx(
        grounding_metrics(labelled).to_dict()["full"], rel=1e-12)
