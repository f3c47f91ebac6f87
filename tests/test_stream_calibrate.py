"""Streamed calibration: the thresholds of the whole-table fit, whatever the batch size."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import cover
from cover.cli import main
from cover.errors import InputError
from cover.io.qvhighlights import read_ground_truth
from cover.stream.calibrate import calibrate_file, score_file


@pytest.fixture(scope="module")
def gt(qvh_gt):
    return read_ground_truth(qvh_gt).table


@pytest.fixture(scope="module")
def whole(qdetr_table, qdetr_preds, qvh_gt):
    return qdetr_table


def _doc(cal: cover.Calibrator) -> dict:
    d = cal.to_dict()
    d.pop("sha256", None)
    return d


def _calibrate(capsys, preds, truth, *flags: str) -> tuple[int, str, str, bytes | None]:
    """``cover calibrate`` of ``preds`` against ``truth`` (the calibrator written beside
    them): the exit code, standard output, standard error without the lines saying how
    each file was read (streamed or whole), and the calibrator's bytes (None: none)."""
    out = preds.with_name("c.json")
    out.unlink(missing_ok=True)
    rc = main(["calibrate", "--preds", str(preds), "--gt", str(truth), *flags,
               "-o", str(out)])
    cap = capsys.readouterr()
    err = "\n".join(ln for ln in cap.err.splitlines()
                    if not ln.startswith((f"{preds}: ", f"{truth}: ")))
    return rc, cap.out, err, out.read_bytes() if out.exists() else None


@pytest.mark.parametrize(("score", "rule", "groups"), [
    ("norm", "split", "all"), ("sls", "split", "all"), ("sec", "bonferroni", "all"),
    ("norm", "mondrian", "pred_length"), ("sec", "buckets", "duration")])
def test_streamed_fit_equals_whole_fit_on_real_file(whole, gt, qdetr_preds, score, rule,
                                                    groups):
    ref = cover.Calibrator(score=score, rule=rule, groups=groups).fit(whole)
    cal, got = calibrate_file(cover.Calibrator(score=score, rule=rule, groups=groups),
                               qdetr_preds, gt, batch_rows=97)
    assert got.batches == 16 and len(got.table) == len(whole) == 1550
    assert _doc(cal) == _doc(ref)
    assert np.array_equal(np.sort(got.scores.values), np.sort(
        cover.compute_scores(whole, score).values))


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=st.integers(1, 700), n=st.integers(50, 400))
def test_any_batch_size_and_qid_subset_gives_the_same_thresholds(whole, gt, qdetr_preds, batch,
                                                                  n):
    wanted = np.sort(whole.qid)[:n]
    ref = cover.Calibrator(score="norm", alpha=0.2).fit(whole.select_qids(wanted))
    cal, got = calibrate_file(cover.Calibrator(score="norm", alpha=0.2), qdetr_preds, gt,
                               qids=wanted, batch_rows=batch)
    assert (cal.threshold_, cal.k_, cal.n_) == (ref.threshold_, ref.k_, ref.n_)
    assert cal.n_ == n == len(got.table) and got.batches == -(-1550 // batch)
    assert cal.fitted_on_ == ref.fitted_on_


def test_cli_streams_and_writes_the_in_memory_calibrator(qdetr_preds, qvh_gt, tmp_path, capsys):
    out = {}
    for mode in ("stream", "memory"):
        extra = ["--in-memory"] if mode == "memory" else ["--batch-rows", "50"]
        assert main(["calibrate", "--preds", str(qdetr_preds), "--gt", str(qvh_gt), "--score",
                     "sls", "--rule", "mondrian", "-o", str(tmp_path / f"{mode}.json"),
                     *extra]) == 0
        out[mode] = json.loads((tmp_path / f"{mode}.json").read_text())
    assert "streamed in 31 batch(es)" in capsys.readouterr().err
    assert out["stream"] == out["memory"]


def test_cli_streamed_split_summary_and_band_equal_the_in_memory_ones(qdetr_preds, qvh_gt,
                                                                     tmp_path, capsys):
    """The streamed table keeps vid codes and ranks units by their text: the summary
    (threshold, coverage band over source videos, design effect, ties) and the file are
    those of the whole-table fit."""
    got = {}
    for mode in ("stream", "memory"):
        extra = ["--in-memory"] if mode == "memory" else ["--batch-rows", "200"]
        out = tmp_path / f"{mode}.json"
        assert main(["calibrate", "--preds", str(qdetr_preds), "--gt", str(qvh_gt),
                     "-o", str(out), *extra]) == 0
        text = capsys.readouterr().out.replace(str(out), "OUT")
        got[mode] = (text, out.read_bytes())
    assert "source videos" in got["stream"][0] and got["stream"] == got["memory"]


def test_problems_across_batches(qdetr_preds, gt, tmp_path):
    lines = qdetr_preds.read_bytes().splitlines()[:30]
    dup = tmp_path / "dup.jsonl"
    dup.write_bytes(b"\n".join([*lines, lines[3]]) + b"\n")
    sub = gt.select_qids([json.loads(x)["qid"] for x in lines])
    with pytest.raises(InputError, match="duplicate qid"):
        calibrate_file(cover.Calibrator(), dup, sub, batch_rows=7)
    cal, got = calibrate_file(cover.Calibrator(), dup, sub, batch_rows=7, on_error="reject")
    assert [p.line for p in got.problems.examples("rejected")] == [31]
    assert cal.n_ == 30
    few = tmp_path / "few.jsonl"
    few.write_bytes(b"\n".join(lines[:20]) + b"\n")
    _, got = calibrate_file(cover.Calibrator(), few, sub, batch_rows=7, on_error="reject",
                             keep_problems=None)
    orphans = [p for p in got.problems.kept if "no prediction for this qid" in p.problem]
    assert len(orphans) == 10 and all(p.path == sub.source for p in orphans)
    # By default the 10 are counted and the first 5 kept, in the same order.
    _, tally = calibrate_file(cover.Calibrator(), few, sub, batch_rows=7, on_error="reject")
    assert tally.problems.count("rejected") == 10 and \
        tally.problems.examples("rejected") == orphans[:5]


def test_fit_scores_refuses_rules_that_need_the_table(whole):
    s = cover.compute_scores(whole, "norm")
    with pytest.raises(ValueError, match="whole labelled table"):
        cover.Calibrator(rule="crc").fit_scores(s, whole)
    with pytest.raises(ValueError, match="scores for a table"):
        cover.Calibrator().fit_scores(s, whole.take(np.arange(3)))


@pytest.mark.parametrize("score", ["norm", "sls", "sec"])
def test_bulk_and_row_by_row_reading_keep_the_same_scores(gt, qdetr_preds, score):
    from cover.stream.calibrate import score_file

    got = [score_file(qdetr_preds, gt, family=score, min_scale=1e-3, target="envelope",
                       batch_rows=211, fast=fast) for fast in (True, False)]
    for key in ("values", "refused", "floored", "beyond_signal", "start", "end"):
        a, b = (getattr(g.scores, key) for g in got)
        assert (a is None and b is None) or np.array_equal(a, b, equal_nan=True), key
    assert np.array_equal(got[0].vid_text(), got[1].vid_text())
    for key in ("qid", "vid", "duration", "pred_start", "pred_end"):
        assert np.array_equal(getattr(got[0].table, key), getattr(got[1].table, key),
                              equal_nan=key not in ("qid", "vid")), key
    assert got[0].families == got[1].families and got[0].problems == got[1].problems


def test_a_fit_that_scores_no_saliency_reads_it_only_until_a_row_shows_one(
        gt, qdetr_preds, tmp_path, monkeypatch):
    """NORM does not score the saliency: the bulk reader decodes it (75 numbers a row)
    only until a row has shown one, which is all the families a missing input's message
    names need; a file whose first rows have none still finds it in later rows."""
    import cover.stream.calibrate as streamed

    recs = [json.loads(x) for x in qdetr_preds.read_text().splitlines()]
    for r in recs[:300]:  # the first batch and part of the second: no saliency
        del r["pred_saliency_scores"]
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    signals: list[bool] = []
    real = streamed.load_batch

    def load_batch(*args, **kwargs):
        signals.append(kwargs["signal"])
        return real(*args, **kwargs)

    monkeypatch.setattr(streamed, "load_batch", load_batch)
    kw = {"min_scale": 1e-3, "target": "envelope", "batch_rows": 211}
    got = score_file(path, gt, family="norm", **kw)
    assert signals == [True, True] + [False] * 6  # read until the second batch showed one
    assert got.families == {"norm", "sec", "sls"}
    signals.clear()
    ref = score_file(path, gt, family="sls", **kw)  # SLS reads every batch's saliency
    assert signals == [True] * 8 and ref.families == got.families
    signals.clear()
    slow = score_file(path, gt, family="norm", fast=False, **kw)  # row by row: read all
    assert slow.families == got.families and slow.problems == got.problems
    assert np.array_equal(slow.scores.values, got.scores.values)


@pytest.fixture(scope="module")
def table_files(whole, qvh_gt, qdetr_preds, tmp_path_factory):
    """QD-DETR's real predictions as Parquet (windows + saliency) and as CSV (top-1)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    d = tmp_path_factory.mktemp("cols")
    recs = [json.loads(x) for x in qdetr_preds.read_text().splitlines()]
    pq.write_table(pa.table({
        "qid": [r["qid"] for r in recs], "vid": [r["vid"] for r in recs],
        "windows": [r["pred_relevant_windows"] for r in recs],
        "saliency": [r["pred_saliency_scores"] for r in recs]}), d / "p.parquet")
    lines = ["id,video,s,e"] + [f"{q},{v},{s!r},{e!r}" for q, v, s, e in zip(
        whole.qid.tolist(), whole.vid.tolist(), whole.pred_start.tolist(),
        whole.pred_end.tolist(), strict=True)]
    (d / "p.csv").write_text("\n".join(lines) + "\n")
    return {"parquet": (d / "p.parquet", "qid=qid,vid=vid,windows=windows,saliency=saliency"),
            "csv": (d / "p.csv", "qid=id,vid=video,start=s,end=e")}


@pytest.mark.parametrize(("kind", "score", "rule", "groups", "batch"), [
    ("parquet", "sls", "split", "all", 97), ("parquet", "norm", "mondrian", "pred_length", 1),
    ("csv", "sec", "bonferroni", "all", 250), ("csv", "norm", "split", "all", 100_000)])
def test_parquet_and_csv_stream_to_the_whole_fit(whole, gt, table_files, kind, score, rule,
                                                 groups, batch):
    """Parquet and CSV read through --columns, a batch at a time, give the calibrator of
    the whole joined table, digest included."""
    from cover.stream.calibrate import score_file

    path, cols = table_files[kind]
    ref = cover.Calibrator(score=score, rule=rule, groups=groups).fit(whole)
    got = score_file(path, gt, columns=cols, family=score, min_scale=ref.min_scale,
                        target="envelope", batch_rows=batch)
    cal = cover.Calibrator(score=score, rule=rule, groups=groups).fit_scores(got.scores,
                                                                             got.table)
    assert got.batches == -(-1550 // batch) and len(got.table) == 1550
    assert _doc(cal) == _doc(ref)


def test_cli_streams_a_csv_calibration_file(whole, qvh_gt, table_files, tmp_path, capsys):
    path, cols = table_files["csv"]
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(path), "--columns", cols, "--gt", str(qvh_gt),
                 "--score", "norm", "--batch-rows", "300", "-o", str(out)]) == 0
    assert "streamed in 6 batch(es)" in capsys.readouterr().err
    ref = cover.Calibrator(score="norm").fit(whole)
    assert _doc(cover.Calibrator.load(out)) == _doc(ref)


@pytest.mark.parametrize("order", ["as in the truth", "reversed"])
def test_kept_rows_name_their_qid_vid_and_duration_in_prediction_order(
        gt, qdetr_preds, tmp_path, order):
    """The slim table is built from each row's truth row number (shared with the truth
    when the predictions follow it row for row): the qid, vid and duration of each
    prediction line, in file order, whichever order the two files are in."""
    from cover.stream.calibrate import score_file

    by_qid = {str(json.loads(line)["qid"]): line.rstrip("\n") + "\n"
              for line in open(qdetr_preds, encoding="utf-8") if line.strip()}
    lines = [by_qid[q] for q in gt.qid.tolist()]
    if order == "reversed":
        lines = lines[::-1]
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(lines), encoding="utf-8")
    got = score_file(preds, gt, family="norm", min_scale=1.0, target="envelope",
                      batch_rows=300)
    want = [json.loads(line)["qid"] for line in lines]
    assert got.table.qid.tolist() == [str(q) for q in want]
    at = {q: i for i, q in enumerate(gt.qid.tolist())}
    rows = [at[str(q)] for q in want]
    assert got.vid_text().tolist() == gt.vid[rows].tolist()
    assert got.table.duration.tolist() == gt.duration[rows].tolist()


@pytest.mark.parametrize(("score", "rule", "groups"), [
    ("norm", "split", "all"), ("sec", "split", "duration"), ("norm", "bonferroni", "all")])
def test_lean_stream_keeps_only_what_the_fit_reads(whole, gt, qdetr_preds, score, rule,
                                                   groups):
    """Without the predicted windows (no grouping by predicted length) and without the
    per-side scores (a rule that needs none), with the truth let go once joined: the
    fit is the whole fit's, and what was dropped is not there."""
    from cover.calibrate.registry import get_rule
    from cover.io.gt_compact import compact_truth

    ref = cover.Calibrator(score=score, rule=rule, groups=groups).fit(whole)
    sides = bool(get_rule(rule).needs & {"sides"})
    truth = compact_truth(gt)
    cal, got = calibrate_file(cover.Calibrator(score=score, rule=rule, groups=groups),
                               qdetr_preds, truth, batch_rows=211, windows=False,
                               sides=sides, own_truth=True)
    assert _doc(cal) == _doc(ref) and cal.fitted_on_ == ref.fitted_on_
    assert got.scores is not None and (got.scores.start is None) == (not sides)
    assert bool(np.isnan(got.table.pred_start).all() and np.isnan(got.table.pred_end).all())
    assert truth.starts.size == 0 and truth.query_code is None  # let go
    assert got.vid_text().tolist() == whole.vid.tolist()  # ids and durations kept
    assert got.table.duration.tolist() == whole.duration.tolist()


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["plain", "bad_std", "outside"]), min_size=1, max_size=5),
       st.integers(1, 4))
def test_a_repeated_qid_is_fitted_alike_whatever_the_batch_size(tmp_path, capsys, kinds,
                                                                batch):
    """A qid on several lines, some rejected for their numbers: streamed in any batch size,
    the calibration rows, the calibrator and the problems printed are the whole read's
    (a row rejected for its numbers still holds its qid; the repeats name line 1)."""
    rows, gts = [], []
    for q in range(1, 31):
        rows.append({"qid": q, "vid": f"v{q}", "duration": 150,
                     "pred_relevant_windows": [[10, 20 + q % 7, 0.9]]})
        gts.append({"qid": q, "vid": f"v{q}", "duration": 150, "relevant_windows": [[12, 25]]})
    variant = {"plain": {}, "bad_std": {"start_std": 1.0, "end_std": -1.0},
               "outside": {"pred_relevant_windows": [[500, 600, 0.9]]}}
    lines = [{**rows[0], **variant[k]} for k in kinds] + rows[1:]
    preds, truth = tmp_path / f"p{batch}.jsonl", tmp_path / "g.jsonl"
    preds.write_text("\n".join(map(json.dumps, lines)) + "\n")
    truth.write_text("\n".join(map(json.dumps, gts)) + "\n")

    whole = _calibrate(capsys, preds, truth, "--on-error", "reject", "--in-memory")
    assert _calibrate(capsys, preds, truth, "--on-error", "reject",
                      "--batch-rows", str(batch)) == whole
    # qid 1 is fitted only when its first line is plain
    assert json.loads(whole[3])["counts"]["rows"] == 29 + (kinds[0] == "plain")


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["plain", "bad_duration", "outside"]), min_size=1,
                max_size=5), st.integers(1, 4))
def test_a_repeated_qid_in_a_csv_is_fitted_alike_whatever_the_batch_size(tmp_path, capsys,
                                                                         kinds, batch):
    """The same through the column reader (``--columns``): a CSV row rejected for its
    duration still holds its qid, streamed in any batch size as read whole."""
    gts = [{"qid": q, "vid": f"v{q}", "duration": 150, "relevant_windows": [[12, 25]]}
           for q in range(1, 31)]
    cells = {"plain": "150,10,21", "bad_duration": "-5,10,21", "outside": "150,500,600"}
    lines = ["qid,vid,duration,start,end", *(f"1,v1,{cells[k]}" for k in kinds),
             *(f"{q},v{q},150,10,{20 + q % 7}" for q in range(2, 31))]
    preds, truth = tmp_path / f"p{batch}.csv", tmp_path / "g.jsonl"
    preds.write_text("\n".join(lines) + "\n")
    truth.write_text("\n".join(map(json.dumps, gts)) + "\n")

    flags = ("--columns", "qid=qid,vid=vid,duration=duration,start=start,end=end",
             "--on-error", "reject")
    whole = _calibrate(capsys, preds, truth, *flags, "--in-memory")
    assert _calibrate(capsys, preds, truth, *flags, "--batch-rows", str(batch)) == whole
    assert json.loads(whole[3])["counts"]["rows"] == 29 + (kinds[0] == "plain")


@pytest.mark.parametrize("batch", [1, 3, 16384])
def test_bad_rows_in_both_files_stop_at_the_ground_truth_on_either_path(tmp_path, capsys,
                                                                        batch):
    """With bad rows in both files (and --on-error raise, the default), streamed and
    in-memory calibrate stop at the same file with the same message: the ground truth,
    which a stream must read first. In-memory calibrate read the predictions first and
    named their rows instead."""
    preds, gt = tmp_path / "p.jsonl", tmp_path / "g.jsonl"
    p = [{"qid": i, "vid": f"v{i // 2}", "duration": 150,
          "pred_relevant_windows": [[10.0 + i, 30.0 + i, 0.9]]} for i in range(30)]
    g = [{"qid": i, "vid": f"v{i // 2}", "duration": 150,
          "relevant_windows": [[12.0 + i, 28.0 + i]]} for i in range(30)]
    p[4]["pred_relevant_windows"] = [[50.0, 10.0, 0.9]]
    g[7]["relevant_windows"] = [[60.0, 20.0]]
    preds.write_text("".join(json.dumps(r) + "\n" for r in p))
    gt.write_text("".join(json.dumps(r) + "\n" for r in g))
    said = {}
    for mode, extra in (("stream", ["--batch-rows", str(batch)]), ("memory", ["--in-memory"])):
        assert main(["calibrate", "--preds", str(preds), "--gt", str(gt),
                     "-o", str(tmp_path / "c.json"), *extra]) != 0
        said[mode] = capsys.readouterr().err
    assert f"{gt}:8 (qid=7): a true window has start > end" in said["stream"]
    assert said["stream"] == said["memory"]
    assert not (tmp_path / "c.json").exists()


_PRED_DAMAGE = {
    "reversed": {"pred_relevant_windows": [[50.0, 10.0, 0.9]]},
    "bad_duration": {"duration": -1},
    "outside": {"pred_relevant_windows": [[160.0, 170.0, 0.9]]},
    "repeat": {"qid": 0},
    "no_windows": {"pred_relevant_windows": []},
    "not_json": None,
}
_GT_DAMAGE = {
    "reversed": {"relevant_windows": [[60.0, 20.0]]},
    "outside": {"relevant_windows": [[160.0, 170.0]]},
    "shorter": {"duration": 120},
    "dropped": None,
}


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.none(), st.sampled_from(sorted(_PRED_DAMAGE))), min_size=8,
                max_size=16),
       st.lists(st.one_of(st.none(), st.sampled_from(sorted(_GT_DAMAGE))), min_size=16,
                max_size=16),
       st.sampled_from(["raise", "reject"]), st.integers(1, 3), st.booleans())
@example(pred_damage=[None] * 3 + ["bad_duration"] + [None] * 4,
         gt_damage=[None] * 3 + ["reversed"] + [None] * 12, on_error="reject", batch=1,
         listed=True)  # listed qid 3: both its rows rejected, yet in the files
def test_damaged_files_get_one_outcome_streamed_or_whole(tmp_path, capsys, pred_damage,
                                                         gt_damage, on_error, batch, listed):
    """Both files damaged at random: streamed in batches of 1-3 lines or read whole,
    calibrate prints the same lines (summary, counts, the rows named, in order) and
    writes the same calibrator, or stops with the same error, under --on-error raise and
    reject alike, with or without a --qids list (a listed qid whose rows were rejected
    is in the files: the whole read called it unknown)."""
    preds, truth = tmp_path / "p.jsonl", tmp_path / "g.jsonl"
    lines, gts = [], []
    for q, how in enumerate(pred_damage):
        row = {"qid": q, "vid": f"v{q // 2}", "duration": 150,
               "pred_relevant_windows": [[10.0 + q, 30.0 + q, 0.9]]}
        lines.append("{not json" if how == "not_json" else
                     json.dumps({**row, **(_PRED_DAMAGE[how] if how else {})}))
    for q, how in enumerate(gt_damage):
        row = {"qid": q, "vid": f"v{q // 2}", "duration": 150,
               "relevant_windows": [[12.0 + q, 28.0 + q]]}
        if how != "dropped":
            gts.append(json.dumps({**row, **(_GT_DAMAGE[how] if how else {})}))
    preds.write_text("\n".join(lines) + "\n")
    truth.write_text("\n".join(gts) + "\n")
    qids = tmp_path / "q.txt"
    qids.write_text("".join(f"{q}\n" for q in (*range(0, 20, 3), 77)))

    flags = ("--alpha", "0.3", "--no-band", "--on-error", on_error,
             *(["--qids", str(qids)] if listed else []))
    whole = _calibrate(capsys, preds, truth, *flags, "--in-memory")
    assert _calibrate(capsys, preds, truth, *flags, "--batch-rows", str(batch)) == whole


@pytest.mark.parametrize("batch", [None, 1, 3])
def test_a_row_whose_partner_was_rejected_says_so(tmp_path, batch):
    """A prediction whose ground-truth row was rejected, and a ground-truth row whose
    prediction was rejected (for its numbers or for its vid), are set aside naming that
    (both were called 'no ground truth / no prediction for this qid', though the file
    has a row for it), read whole (``batch`` None) or streamed; a qid in one file only
    keeps its own reason."""
    from cover.io.formats import read_truth

    preds, truth = tmp_path / "p.jsonl", tmp_path / "g.jsonl"
    p = [{"qid": q, "vid": f"v{q}", "duration": 150,
          "pred_relevant_windows": [[10.0 + q, 30.0 + q, 0.9]]} for q in range(12)]
    g = [{"qid": q, "vid": f"v{q}", "duration": 150,
          "relevant_windows": [[12.0 + q, 28.0 + q]]} for q in range(12)]
    p[2]["pred_relevant_windows"] = [[50.0, 10.0, 0.9]]  # rejected: truth 2 is alone
    g[5]["relevant_windows"] = [[60.0, 20.0]]  # rejected: prediction 5 is alone
    del g[9]  # prediction 9 has no truth row at all
    p[7]["vid"], g[3]["vid"] = " v7", " v3"  # rejected for an id that is not the qid
    preds.write_text("".join(json.dumps(r) + "\n" for r in p))
    truth.write_text("".join(json.dumps(r) + "\n" for r in g))
    if batch is None:
        _, problems = cover.load_labelled(preds, truth, on_error="reject")
    else:
        from cover.io.batch_join import rejected_qids

        t = read_truth(truth, on_error="reject")
        got = score_file(preds, t.truth, family="norm", min_scale=1e-3,
                          target="envelope", on_error="reject", batch_rows=batch,
                          keep_problems=None, truth_rejected=rejected_qids(t.problems))
        problems = [*t.problems, *got.problems.kept]
    why = {(x.path, x.line): x.problem for x in problems if x.action == "rejected"}
    assert why[(str(truth), 3)] == f"its prediction row in {preds} was rejected"
    assert why[(str(preds), 6)] == f"its ground-truth row in {truth} was rejected"
    assert why[(str(preds), 10)] == f"no ground truth for this qid in {truth}"
    assert why[(str(truth), 8)] == f"its prediction row in {preds} was rejected"
    assert why[(str(preds), 4)] == f"its ground-truth row in {truth} was rejected"
    assert len(why) == 9  # and the four rows rejected for their windows or vids


def test_a_signal_too_long_for_its_duration_rejects_the_row_streamed_or_whole(
        data_dir, tmp_path, capsys):
    """SLS on the relevance built from QD-DETR's ranked windows, one ground-truth
    duration 1e9 s: streamed and read whole, that row is rejected with the reason and
    the other 1,549 rows fit the same threshold (both stopped the run under --on-error
    reject); under raise the error names it."""
    qvh = data_dir / "qvhighlights"
    rows = (qvh / "annotations/highlight_val_release.jsonl").read_text().splitlines()
    bad = json.loads(rows[5])
    bad["duration"] = 1e9
    gt = tmp_path / "gt.jsonl"
    gt.write_text("\n".join([*rows[:5], json.dumps(bad), *rows[6:]]) + "\n")
    base = ["calibrate", "--preds", str(qvh / "qd_detr/video_checkpoint_best_hl_val_preds.jsonl"),
            "--gt", str(gt), "--score", "sls", "--relevance-from", "proposals"]
    fits = []
    for how in ([], ["--in-memory"]):
        out = tmp_path / f"cal{len(fits)}.json"
        capsys.readouterr()
        assert main([*base, *how, "--on-error", "reject", "-o", str(out)]) == 0
        err = capsys.readouterr().err
        assert "1 row(s) rejected" in err and f"(qid={bad['qid']}): a relevance signal " \
            "from proposals over its duration of 1e+09 s (its ground truth's) would need " \
            "more than" in err, how
        fits.append(json.loads(out.read_text()))
    assert fits[0]["counts"]["rows"] == fits[1]["counts"]["rows"] == 1549
    assert fits[0]["thresholds"] == fits[1]["thresholds"]
    assert main([*base, "-o", str(tmp_path / "c.json")]) == 2
    assert "1 bad row(s) in" in capsys.readouterr().err
