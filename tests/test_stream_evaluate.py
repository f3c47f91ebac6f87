"""Streamed ``cover evaluate``: the whole-file numbers and text, for any batch size."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import cover
import cover.metric_sums
from cover.cli import main
from cover.grounding_metrics import GroundingSums, grounding_metrics
from cover.metrics import EvaluationSums, evaluate

N_CAL = 600
PQ_COLUMNS = "qid=qid,vid=vid,duration=duration,windows=pred_relevant_windows," \
             "saliency=pred_saliency_scores,query=query"


@pytest.fixture(scope="module")
def rows(qdetr_preds):
    return [json.loads(x) for x in qdetr_preds.read_text().splitlines()]


def _test_lines(rows: list[dict]) -> list[str]:
    """The held-out rows, with refusals (no window; no saliency) and a line that is not
    JSON, so certify refuses and rejects some."""
    out = []
    for i, r in enumerate(rows[N_CAL:]):
        r = dict(r)
        if i % 97 == 5:
            r["pred_relevant_windows"] = []
        if i % 89 == 7:
            r.pop("pred_saliency_scores")
        out.append(json.dumps(r))
    out.insert(400, "{not json")
    return out


@pytest.fixture(scope="module", params=["norm", "sls"])
def certified(qdetr_table, request, rows, qdetr_preds, qvh_gt, tmp_path_factory):
    """Regions of QD-DETR's held-out QVHighlights rows, certified by a calibrator fitted on
    the first 600: echoed JSON lines, --compact JSON lines, and Parquet."""
    score = request.param
    d = tmp_path_factory.mktemp(f"ev_{score}")
    table = qdetr_table
    cal_t = table.select_qids(np.array([str(r["qid"]) for r in rows[:N_CAL]]))
    cover.Calibrator(score=score, alpha=0.1).fit(cal_t).save(d / "cal.json")
    preds = d / "preds.jsonl"
    preds.write_text("\n".join(_test_lines(rows)) + "\n")
    base = ["certify", "--calibrator", str(d / "cal.json"), "--videos", str(qvh_gt),
            "--on-error", "reject"]
    assert main([*base, "--preds", str(preds), "-o", str(d / "echo.jsonl")]) == 0
    assert main([*base, "--preds", str(preds), "--compact", "-o",
                 str(d / "compact.jsonl")]) == 0
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    dur = {json.loads(x)["qid"]: float(json.loads(x)["duration"])
           for x in qvh_gt.read_text().splitlines()}
    recs = [json.loads(x) for x in _test_lines(rows) if x.startswith('{"')]
    pq.write_table(pa.table({
        "qid": [r["qid"] for r in recs], "vid": [r["vid"] for r in recs],
        "query": [r["query"] for r in recs],
        "duration": [dur[r["qid"]] for r in recs],
        "pred_relevant_windows": [r["pred_relevant_windows"] for r in recs],
        "pred_saliency_scores": [r.get("pred_saliency_scores") for r in recs]}),
        d / "preds.parquet")
    assert main([*base, "--preds", str(d / "preds.parquet"), "--columns", PQ_COLUMNS,
                 "-o", str(d / "regions.parquet")]) == 0
    return d


def _evaluate(regions: Path, gt: Path, capsys, *flags: str) -> tuple[dict, str]:
    """The metrics JSON and the printed text of one run (stderr in ``_evaluate.err``)."""
    out = regions.parent / "metrics.json"
    capsys.readouterr()
    assert main(["evaluate", "--regions", str(regions), "--gt", str(gt), "--json", str(out),
                 "--on-error", "reject", *flags]) == 0
    printed = capsys.readouterr()
    _evaluate.err = printed.err  # type: ignore[attr-defined]
    return json.loads(out.read_text()), printed.out


# Rows kept for the batches of one row: refusals of both kinds (held-out rows 5, 7, 96,
# 102), the line that was not JSON (400, JSON lines only) and rows around them. A row a
# batch costs a fixed few milliseconds, so this runs on ~170 rows, not the 950.
ONE_ROW_BATCHES = np.r_[0:130, 380:420]


def _rows_of(regions: Path, keep: np.ndarray) -> Path:
    """The same regions file with only the rows ``keep`` (lines, or Parquet rows with the
    file's schema and metadata)."""
    out = regions.with_name(f"some-{regions.name}")
    if regions.suffix == ".parquet":
        pq = pytest.importorskip("pyarrow.parquet")
        table = pq.read_table(regions)
        pq.write_table(table.take(keep[keep < table.num_rows]), out)
    else:
        lines = regions.read_text().splitlines()
        out.write_text("".join(lines[i] + "\n" for i in keep if i < len(lines)))
    return out


@pytest.mark.parametrize(("name", "batches"), [("echo.jsonl", ("1", "7", "97", None)),
                                               ("compact.jsonl", ("97",)),
                                               ("regions.parquet", ("1", "97"))])
def test_streamed_equals_in_memory(rows, certified, qvh_gt, capsys, name, batches):
    regions = certified / name
    whole, text = _evaluate(regions, qvh_gt, capsys, "--in-memory")
    c = whole["counts"]
    assert c["rows"] == len(rows) - N_CAL and c["refused"] > 0
    assert c["rejected_at_certify"] == (1 if name.endswith("jsonl") else 0)
    assert whole["field_metrics"] is not None or name == "compact.jsonl"
    assert whole["reference"]["n_calibration"] == N_CAL
    for b in batches:  # None: the default batch size (one batch here)
        if b == "1":  # every row its own batch, on a file of fewer rows (see above)
            some = _rows_of(regions, ONE_ROW_BATCHES)
            some_whole, some_text = _evaluate(some, qvh_gt, capsys, "--in-memory")
            assert some_whole["counts"]["refused"] > 0
            assert some_whole["counts"]["rejected_at_certify"] == c["rejected_at_certify"]
            got, got_text = _evaluate(some, qvh_gt, capsys, "--batch-rows", "1")
            assert "streamed in 170 batch(es)" in _evaluate.err  # type: ignore[attr-defined]
            assert got == some_whole and got_text == some_text
            continue
        got, got_text = _evaluate(regions, qvh_gt, capsys,
                                  *(("--batch-rows", b) if b is not None else ()))
        assert got == whole, f"batches of {b}"
        assert got_text == text
        if b is not None:  # --in-memory reads the same batches and joins them
            assert _evaluate(regions, qvh_gt, capsys, "--in-memory", "--batch-rows", b) == (
                whole, text), f"in memory, batches of {b}"


def test_parquet_regions_score_as_the_json_lines(certified, qvh_gt, capsys):
    """The same predictions certified to Parquet and to JSON lines evaluate the same
    (the line that was not JSON exists only in the JSON lines)."""
    a, _ = _evaluate(certified / "regions.parquet", qvh_gt, capsys)
    b, _ = _evaluate(certified / "echo.jsonl", qvh_gt, capsys)
    b["counts"]["rejected_at_certify"] -= 1
    assert a == b


def _bad_regions(certified: Path) -> Path:
    """The echoed regions with a broken line, a repeated row in a later batch and a
    region reaching past the video, in that order, in three different batches."""
    lines = (certified / "echo.jsonl").read_text().splitlines()
    row = json.loads(lines[700])
    row["cover"]["region"] = [[0.0, row["cover"]["duration"] + 5.0]]
    lines[700] = json.dumps(row)
    lines.insert(500, lines[10])
    lines.insert(300, '{"qid": 123, "broken')
    bad = certified / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    return bad


def test_bad_rows_are_rejected_as_in_memory(certified, qvh_gt, capsys):
    bad = _bad_regions(certified)
    whole, text = _evaluate(bad, qvh_gt, capsys, "--in-memory")
    assert whole["counts"]["rejected_here"] == 3
    got, got_text = _evaluate(bad, qvh_gt, capsys, "--batch-rows", "97")
    assert got == whole and got_text == text
    # the repeat in a later batch is found across the batches joined in memory too
    assert _evaluate(bad, qvh_gt, capsys, "--in-memory", "--batch-rows", "97") == (whole, text)


def _error(capsys, *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 2
    err = capsys.readouterr().err
    return err[err.index("cover: error: "):]


def test_a_broken_line_stops_with_the_same_message(certified, qvh_gt, capsys):
    bad = _bad_regions(certified)
    messages = [_error(capsys, "evaluate", "--regions", str(bad), "--gt", str(qvh_gt), *flags)
                for flags in (["--in-memory"], ["--batch-rows", "97"])]
    assert messages[0] == messages[1]
    assert messages[0].startswith(f"cover: error: 3 bad row(s) in {bad}:")
    assert f"{bad}:301 (qid=123): malformed JSON" in messages[0]
    assert "duplicate qid (first seen on line 11)" in messages[0]
    # Every row its own batch, on the lines that hold the three (rows a batch cost time).
    some = _rows_of(bad, np.r_[0:20, 295:305, 495:505, 695:710])
    messages = [_error(capsys, "evaluate", "--regions", str(some), "--gt", str(qvh_gt),
                       *flags) for flags in (["--in-memory"], ["--batch-rows", "1"])]
    assert messages[0] == messages[1]
    assert messages[0].startswith(f"cover: error: 3 bad row(s) in {some}:")
    assert f"{some}:26 (qid=123): malformed JSON" in messages[0]
    assert "duplicate qid (first seen on line 11)" in messages[0]


def test_mixed_calibrators_name_the_row_in_a_later_batch(certified, qvh_gt, capsys):
    lines = (certified / "echo.jsonl").read_text().splitlines()
    row = json.loads(lines[600])
    row["cover"]["alpha"] = 0.2
    lines[600] = json.dumps(row)
    mixed = certified / "mixed.jsonl"
    mixed.write_text("\n".join(lines) + "\n")
    messages = [_error(capsys, "evaluate", "--regions", str(mixed), "--gt", str(qvh_gt),
                       *flags) for flags in (["--in-memory"], ["--batch-rows", "50"])]
    assert messages[0] == messages[1]
    assert f"{mixed}:601 (qid={row['qid']}): cover.alpha is 0.2 but 0.1 on line 1" \
        in messages[0]


def test_evaluating_the_calibration_rows_warns_in_both_paths(rows, certified, qvh_gt,
                                                             tmp_path, capsys):
    """Rows marked cover.in_calibration, and (marks removed) the same qid digest as the
    calibration set, are counted and warned about by both paths."""
    preds = tmp_path / "cal_preds.jsonl"
    preds.write_text("\n".join(json.dumps(r) for r in rows[:N_CAL]) + "\n")
    marked = tmp_path / "cal_regions.jsonl"
    assert main(["certify", "--calibrator", str(certified / "cal.json"), "--videos",
                 str(qvh_gt), "--preds", str(preds), "-o", str(marked)]) == 0
    unmarked = tmp_path / "unmarked.jsonl"
    lines = [json.loads(x) for x in marked.read_text().splitlines()]
    for r in lines:
        assert r["cover"].pop("in_calibration") is True
    unmarked.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    for regions, why in ((marked, "600 of the 600 rows evaluated were calibration rows"),
                         (unmarked, "the 600 rows evaluated are exactly the rows")):
        for flags in (["--in-memory"], ["--batch-rows", "64"]):
            out = regions.parent / "metrics.json"
            capsys.readouterr()
            assert main(["evaluate", "--regions", str(regions), "--gt", str(qvh_gt),
                         "--json", str(out), *flags]) == 0
            assert f"cover: warning: {why}" in capsys.readouterr().err
            assert json.loads(out.read_text())["counts"]["in_calibration"] == N_CAL


# ---- the sums: any batching gives the one-shot numbers, bit for bit -------------------
def _table(seed: int, n: int, refuse: float) -> cover.GroundingTable:
    rng = np.random.default_rng(seed)
    ts = rng.uniform(0, 120, n)
    ps = ts + rng.normal(0, 6, n)
    ps[rng.random(n) < refuse] = np.nan
    t = cover.GroundingTable.from_arrays(
        qid=np.arange(n), vid=(np.arange(n) // 3).astype(str), duration=150.0,
        pred_start=np.clip(ps, 0, 140), pred_end=np.clip(ps + rng.uniform(1, 30, n), 0, 150),
        truth=(ts, np.minimum(ts + rng.uniform(1, 40, n), 150.0)))
    return t


def _same(a: object, b: object) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**16), n=st.integers(0, 120), chunk=st.integers(1, 40),
       cuts=st.lists(st.integers(0, 120), max_size=8), refuse=st.sampled_from([0.0, 0.2]),
       policy=st.sampled_from(["whole-video", "miss", "drop"]))
def test_sums_over_any_batching_equal_the_one_shot_metrics(seed, n, chunk, cuts, refuse,
                                                            policy):
    table = _table(seed, n, refuse)
    cal = cover.Calibrator(score="norm", alpha=0.2).fit(_table(seed + 1, 40, 0.0))
    regions = cal.certify(table)
    bounds = [0, *sorted(c for c in cuts if c <= n), n]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cover.metric_sums, "CHUNK", chunk)  # chunk edges inside the batches
        whole = evaluate(regions, table, refusal_policy=policy, calibration=(40, 33))
        field = grounding_metrics(table)
        sums = EvaluationSums(refusal_policy=policy, units=True)
        gsums = GroundingSums()
        for a, b in itertools.pairwise(bounds):
            rows = np.arange(a, b)
            sums.add(regions.take(rows), table.take(rows))
            gsums.add(table.take(rows))
        streamed = sums.finish((40, 33))
        assert _same(streamed.to_dict(), whole.to_dict())
        assert _same(gsums.finish().to_dict(), field.to_dict())


def test_a_row_without_truth_is_rejected_without_reading_whole(certified, qvh_gt, capsys):
    lines = (certified / "echo.jsonl").read_text().splitlines()
    row = json.loads(lines[200])
    row["qid"], row["query"] = 99_999_999, "a query no video has"
    lines[200] = json.dumps(row)
    odd = certified / "odd.jsonl"
    odd.write_text("\n".join(lines) + "\n")
    whole, text = _evaluate(odd, qvh_gt, capsys, "--in-memory")
    assert whole["counts"]["rejected_here"] == 1
    got, got_text = _evaluate(odd, qvh_gt, capsys, "--batch-rows", "100")
    assert "streamed in 10 batch(es)" in _evaluate.err  # type: ignore[attr-defined]
    assert got == whole and got_text == text


def test_regions_keyed_by_position_are_joined_on_content_as_in_memory(data_dir, tmp_path,
                                                                      capsys):
    """TimeChat's qids are positions: the join on (vid, query text) needs every row, so
    the regions are read whole, with the numbers of --in-memory."""
    preds = data_dir / "charades_sta/timechat_repo_example/example_pred_file.json"
    lighthouse = data_dir / "lighthouse/charades_test_release.jsonl"
    text = data_dir / "charades_sta/annotations/charades_sta_test.txt"
    cal, regions = tmp_path / "cal.json", tmp_path / "regions.jsonl"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(text), "--on-error",
                 "reject", "-o", str(cal)]) == 0
    assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--videos",
                 str(lighthouse), "--on-error", "reject", "-o", str(regions)]) == 0
    whole, text = _evaluate(regions, lighthouse, capsys, "--in-memory")
    got, got_text = _evaluate(regions, lighthouse, capsys)
    assert "reading it whole to choose the join" in _evaluate.err  # type: ignore
    assert got == whole and got_text == text
    assert _evaluate(regions, lighthouse, capsys, "--batch-rows", "50") == (whole, text)
    assert _evaluate(regions, lighthouse, capsys, "--in-memory", "--batch-rows", "50") == (
        whole, text)


def test_a_bom_regions_file_streams_as_it_reads_whole(certified, qvh_gt, capsys, tmp_path):
    """A byte-order mark before the first line (saved by a Windows editor) is skipped by
    the streamed reader as by the whole-file one."""
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + (certified / "echo.jsonl").read_bytes())
    whole, text = _evaluate(bom, qvh_gt, capsys, "--in-memory")
    got, got_text = _evaluate(bom, qvh_gt, capsys, "--batch-rows", "97")
    plain, _ = _evaluate(certified / "echo.jsonl", qvh_gt, capsys)
    assert got == whole == plain and got_text == text


def test_a_json_array_and_diagnostics_are_the_streamed_evaluation(certified, qvh_gt,
                                                                  capsys):
    """A JSON array file is read as one batch of the same code, and ``--diagnostics``
    streams: the JSON of the same rows as JSON lines, with the diagnostics added, the
    same whether read whole or in batches of 7 (batch sizes and ``--in-memory`` on
    their own: :func:`test_streamed_equals_in_memory`)."""
    if "sls" in certified.name:
        pytest.skip("the path does not depend on the score: NORM's regions suffice")
    echo = certified / "echo.jsonl"
    array = certified / "array.json"
    array.write_text("[" + ",".join(echo.read_text().splitlines()) + "]")
    ref, text = _evaluate(echo, qvh_gt, capsys)
    got, got_text = _evaluate(array, qvh_gt, capsys)
    assert "streamed in" not in _evaluate.err  # type: ignore[attr-defined]
    assert got == ref and got_text == text.replace(str(echo), str(array))
    names = "duration,pred_length,grounder_score"
    got, got_text = _evaluate(echo, qvh_gt, capsys, "--diagnostics", names, "--batch-rows", "7")
    assert "streamed in 136 batch(es)" in _evaluate.err  # type: ignore[attr-defined]
    assert (got, got_text) == _evaluate(echo, qvh_gt, capsys, "--diagnostics", names,
                                        "--in-memory")
    assert 0 < got.pop("diagnostics")["rows"] <= ref["counts"]["rows"]
    assert got == ref
    assert got_text.startswith(text[:text.index("rows: ")])
    assert "conditional diagnostics over duration, pred_length, grounder_score" in got_text


@settings(max_examples=20, deadline=None)
@given(st.lists(st.sampled_from(["ok", "bad_duration", "no_region"]), min_size=1,
                max_size=5), st.integers(1, 3))
def test_a_repeated_qid_is_judged_alike_in_any_batch_size(kinds, batch):
    """A certified row repeated, some copies damaged: streamed in any batch size, every
    repeat is rejected naming the qid's first line, the metrics and the messages are the
    whole read's (a damaged first row still holds its qid)."""
    import contextlib
    import io
    import tempfile

    from cli_files import synthetic

    with tempfile.TemporaryDirectory() as folder:
        d = Path(folder)
        preds, gt = synthetic(d, n=12, saliency=False)
        cal, regions = d / "c.json", d / "r.jsonl"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(
                io.StringIO()):
            assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "-o",
                         str(cal)]) == 0
            assert main(["certify", "--calibrator", str(cal), "--preds", str(preds),
                         "--videos", str(gt), "-o", str(regions)]) == 0
        lines = regions.read_text().splitlines()
        row = json.loads(lines[0])
        copies = []
        for k in kinds:
            r = json.loads(json.dumps(row))
            if k == "bad_duration":
                r["cover"]["duration"] = -1
            elif k == "no_region":
                del r["cover"]["region"]
            copies.append(json.dumps(r))
        src = d / "rep.jsonl"
        src.write_text("\n".join([*copies, *lines[1:]]) + "\n")

        def run(*flags: str) -> tuple[dict, list[str]]:
            out, err = io.StringIO(), io.StringIO()
            metrics = d / "m.json"
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                assert main(["evaluate", "--regions", str(src), "--gt", str(gt), "--json",
                             str(metrics), "--on-error", "reject", *flags]) == 0
            return json.loads(metrics.read_text()), [
                ln for ln in err.getvalue().splitlines() if str(src) in ln
                and "streamed in" not in ln and "(rows)" not in ln and " rows)" not in ln]

        whole, streamed = run("--in-memory"), run("--batch-rows", str(batch))
        assert streamed == whole
        # (a row without a region is rejected for it before the duplicate rule: it holds
        # no qid, so a later copy repeats the first copy that has one)
        first = 1 + next((i for i, k in enumerate(kinds) if k != "no_region"), 0)
        assert all(f"(first seen on line {first})" in ln for ln in whole[1]
                   if "duplicate qid" in ln)


@pytest.fixture(scope="module")
def small_certified(tmp_path_factory) -> tuple[Path, Path]:
    """40 synthetic rows: a calibrator on the first 20, the other 20 certified; the
    certified lines and the whole ground truth."""
    from cli_files import synthetic_rows, write_jsonl

    d = tmp_path_factory.mktemp("evaluate_damage")
    preds, gts = synthetic_rows(40, seed=3, saliency=False)
    cal_p = write_jsonl(d / "cal.jsonl", list(preds[:20]))
    test_p = write_jsonl(d / "test.jsonl", list(preds[20:]))
    gt = write_jsonl(d / "gt.jsonl", list(gts))
    assert main(["calibrate", "--preds", str(cal_p), "--gt", str(gt), "--qids",
                 str(write_jsonl(d / "q.txt", [str(r["qid"]) for r in preds[:20]])),
                 "--alpha", "0.3", "-o", str(d / "cal.json")]) == 0
    assert main(["certify", "--calibrator", str(d / "cal.json"), "--preds", str(test_p),
                 "--videos", str(gt), "-o", str(d / "regions.jsonl")]) == 0
    return d / "regions.jsonl", gt


_REGION_DAMAGE = {
    "reversed": lambda r: r["cover"].update(region=[[50.0, 10.0]]),
    "bad_duration": lambda r: r["cover"].update(duration=-3),
    "refused_mismatch": lambda r: r["cover"].update(status="refused"),
    "no_block": lambda r: r.pop("cover"),
    "repeat": lambda r: r.update(qid=0),
    "unknown_qid": lambda r: r.update(qid=999),
    # a block field that is a list or an object (a status of that kind crashed the bulk read)
    "status_list": lambda r: r["cover"].update(status=[r["cover"]["status"]]),
    "threshold_object": lambda r: r["cover"].update(threshold={"value": 1.0}),
    "alpha_list": lambda r: r["cover"].update(alpha=[0.1]),
}
_TRUTH_DAMAGE = {
    "reversed": lambda r: r.update(relevant_windows=[[60.0, 20.0]]),
    "outside": lambda r: r.update(relevant_windows=[[160.0, 170.0]]),
    "shorter": lambda r: r.update(duration=120),
}


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.none(), st.sampled_from(sorted(_REGION_DAMAGE)), st.just("json")),
                min_size=20, max_size=20),
       st.lists(st.one_of(st.none(), st.sampled_from(sorted(_TRUTH_DAMAGE))), min_size=40,
                max_size=40),
       st.sampled_from(["raise", "reject"]), st.integers(1, 3))
@example(region_damage=[None] * 18 + ["bad_duration", "json"], truth_damage=[None] * 40,
         on_error="raise", batch=1)  # read whole, the reader found the broken line first
@example(region_damage=[None, "status_list"] + [None] * 18, truth_damage=[None] * 40,
         on_error="reject", batch=3)
def test_damaged_inputs_get_one_outcome_streamed_or_whole(small_certified, tmp_path, capsys,
                                                          region_damage, truth_damage,
                                                          on_error, batch):
    """Certified lines and ground truth damaged at random: streamed in batches of 1-3
    rows or read whole, evaluate prints the same lines and writes the same metrics, or
    stops with the same error, under --on-error raise and reject alike."""
    regions, gt = small_certified
    lines = []
    for line, how in zip(regions.read_text().splitlines(), region_damage, strict=True):
        row = json.loads(line)
        if how in _REGION_DAMAGE:
            _REGION_DAMAGE[how](row)
        lines.append("{broken" if how == "json" else json.dumps(row))
    truth = []
    for line, how in zip(gt.read_text().splitlines(), truth_damage, strict=True):
        row = json.loads(line)
        if how is not None:
            _TRUTH_DAMAGE[how](row)
        truth.append(json.dumps(row))
    bad_regions, bad_truth = tmp_path / "r.jsonl", tmp_path / "g.jsonl"
    bad_regions.write_text("\n".join(lines) + "\n")
    bad_truth.write_text("\n".join(truth) + "\n")

    def run(*flags: str) -> tuple[int, str, str, bytes | None]:
        out = tmp_path / "e.json"
        out.unlink(missing_ok=True)
        rc = main(["evaluate", "--regions", str(bad_regions), "--gt", str(bad_truth),
                   "--on-error", on_error, "--json", str(out), *flags])
        cap = capsys.readouterr()
        err = "\n".join(ln for ln in cap.err.splitlines()  # how each file was read
                        if not ln.startswith((f"{bad_regions}: ", f"{bad_truth}: ")))
        return rc, cap.out, err, out.read_bytes() if out.exists() else None

    whole = run("--in-memory")
    assert run("--batch-rows", str(batch)) == whole


@pytest.fixture(scope="module")
def small_parquet(small_certified, tmp_path_factory) -> tuple[Path, Path]:
    """The 20 certified rows of ``small_certified`` certified again from a Parquet file
    (qids as text) into Parquet regions, and the ground truth."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    regions, gt = small_certified
    d = tmp_path_factory.mktemp("evaluate_parquet_damage")
    recs = [json.loads(x) for x in regions.read_text().splitlines()]
    pq.write_table(pa.table({
        "qid": [str(r["qid"]) for r in recs], "vid": [r["vid"] for r in recs],
        "query": [r["query"] for r in recs],
        "pred_relevant_windows": [r["pred_relevant_windows"] for r in recs]}),
        d / "preds.parquet")
    assert main(["certify", "--calibrator", str(regions.parent / "cal.json"), "--preds",
                 str(d / "preds.parquet"), "--columns",
                 "qid=qid,vid=vid,query=query,windows=pred_relevant_windows",
                 "--videos", str(gt), "-o", str(d / "regions.parquet")]) == 0
    return d / "regions.parquet", gt


def _dur(c: dict) -> float:
    return float(c["duration"])


_PARQUET_DAMAGE = {
    "null_block": lambda r: r.update(cover=None),
    "null_status": lambda r: r["cover"].update(status=None),
    "rejected": lambda r: r["cover"].update(status="rejected", reason="x"),
    "abstained": lambda r: r["cover"].update(status="abstained", reason="not sure"),
    "unknown_status": lambda r: r["cover"].update(status="maybe"),
    "refused_mismatch": lambda r: r["cover"].update(status="refused", refused=False),
    "null_refused": lambda r: r["cover"].update(refused=None),
    "null_region": lambda r: r["cover"].update(region=None),
    "wide_region": lambda r: r["cover"].update(region=[[1.0, 2.0, 3.0]]),
    "past_end": lambda r: r["cover"].update(region=[[0.0, _dur(r["cover"]) + 5.0]]),
    "null_duration": lambda r: r["cover"].update(duration=None),
    "null_threshold": lambda r: r["cover"].update(threshold=None),
    "in_calibration": lambda r: r["cover"].update(in_calibration=True),
    "repeat": lambda r: r.update(qid="20"),
    "blank_qid": lambda r: r.update(qid=" " + r["qid"]),
    "nan_window": lambda r: r.update(pred_relevant_windows=[[math.nan, 5.0, 0.9]]),
}


def _parquet_outcomes(small_parquet, tmp_path, capsys, damage: dict[int, str],
                      on_error: str, batch: int) -> tuple[tuple, tuple]:
    """``damage`` (row -> kind) done to the Parquet regions; the outcome read whole and
    streamed in batches of ``batch`` rows: exit code, printed lines, messages, metrics."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    regions, gt = small_parquet
    table = pq.read_table(regions)
    rows = table.to_pylist()
    for i, how in damage.items():
        _PARQUET_DAMAGE[how](rows[i])
    bad = tmp_path / "r.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), bad)

    def run(*flags: str) -> tuple[int, str, str, bytes | None]:
        out = tmp_path / "e.json"
        out.unlink(missing_ok=True)
        rc = main(["evaluate", "--regions", str(bad), "--gt", str(gt), "--on-error", on_error,
                   "--json", str(out), *flags])
        cap = capsys.readouterr()
        err = "\n".join(ln for ln in cap.err.splitlines()  # how each file was read
                        if not ln.startswith((f"{bad}: ", f"{gt}: ")))
        return rc, cap.out, err, out.read_bytes() if out.exists() else None

    return run("--in-memory"), run("--batch-rows", str(batch))


@pytest.mark.parametrize("how", [None, *sorted(_PARQUET_DAMAGE)])
def test_each_damage_of_parquet_regions_alone_gets_one_outcome(small_parquet, tmp_path,
                                                               capsys, how):
    """One damaged row in a batch of otherwise clean rows (the batch a bulk read would
    take), read whole or streamed: the same outcome, under --on-error reject."""
    whole, streamed = _parquet_outcomes(small_parquet, tmp_path, capsys,
                                        {} if how is None else {9: how}, "reject", 4)
    assert streamed == whole


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.integers(0, 19), st.sampled_from(sorted(_PARQUET_DAMAGE)),
                       max_size=4),
       st.sampled_from(["raise", "reject"]), st.integers(1, 7))
def test_damaged_parquet_regions_get_one_outcome_streamed_or_whole(small_parquet, tmp_path,
                                                                   capsys, damage, on_error,
                                                                   batch):
    """Parquet regions damaged at random in their ``cover`` struct, ids and windows:
    streamed (each batch read in bulk when clean, by its records otherwise) or read whole
    (by the records), evaluate prints the same lines and writes the same metrics, or stops
    with the same error."""
    whole, streamed = _parquet_outcomes(small_parquet, tmp_path, capsys, damage, on_error,
                                        batch)
    assert streamed == whole


@pytest.fixture(scope="module")
def bad_read_per_row(certified):
    """:func:`_bad_regions` and what the per-row reader gives it (read once: every
    example below compares against it)."""
    from cover.io.jsonl import read_json_rows
    from cover.io.regions_jsonl import regions_from_rows

    bad = _bad_regions(certified)
    return bad, regions_from_rows(read_json_rows(bad))


@settings(max_examples=12, deadline=None)
@given(batch=st.integers(1, 400))
def test_batches_collected_in_memory_are_the_file_read_whole(bad_read_per_row, batch):
    """The in-memory read (every batch read as the stream reads it, then joined) gives
    what the per-row reader gives the whole file: rows, regions, marks, set-aside rows
    and their messages, on real certified QVHighlights lines with a broken line, a qid
    repeated in a later batch and a region past its video."""
    from cover.stream.evaluate import _batch_readers

    bad, ref = bad_read_per_row
    got = next(_batch_readers(bad, batch, None, None, whole=True))()
    assert got.table.qid.tolist() == ref.table.qid.tolist()
    assert got.table.line.tolist() == ref.table.line.tolist()
    assert got.regions.intervals.to_lists() == ref.regions.intervals.to_lists()
    for k in ("duration", "refused", "threshold"):
        assert np.array_equal(getattr(got.regions, k), getattr(ref.regions, k)), k
    assert got.in_calibration.tolist() == ref.in_calibration.tolist()
    assert sorted(map(str, got.problems)) == sorted(map(str, ref.problems))
    assert (got.rejected_at_certify, got.meta, got.meta_line) == (
        ref.rejected_at_certify, ref.meta, ref.meta_line)
