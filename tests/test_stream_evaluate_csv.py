"""``cover evaluate`` of CSV regions (``cover certify`` on a CSV file): the numbers of the
JSON-lines regions certified from the same predictions, streamed or whole."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("pyarrow")

import cover
import cover.io.qvhighlights
from cover.cli import main
from cover.errors import InputError

COLS = "qid=qid,vid=vid,duration=duration,start=start,end=end"
N_CAL = 600


@pytest.fixture(scope="module")
def certified(qdetr_table, qdetr_preds, qvh_gt, tmp_path_factory):
    """QD-DETR's real top-1 windows after the first 600 rows (the calibration rows), as a
    CSV and as the same rows in JSON lines, each certified by the same calibrator."""
    table = qdetr_table
    d = tmp_path_factory.mktemp("ev_csv")
    cal = cover.Calibrator(score="norm", alpha=0.1).fit(table.take(np.arange(N_CAL)))
    cal.save(d / "cal.json")
    csv_lines, json_lines = ["qid,vid,duration,start,end,note"], []
    for i in range(N_CAL, len(table)):
        q, v, t = table.qid[i], table.vid[i], float(f"{table.duration[i]:g}")
        s, e = float(table.pred_start[i]), float(table.pred_end[i])
        refuse = i % 101 == 7
        csv_lines.append(f'{q},{v},{t:g},{"" if refuse else repr(s)},'
                         f'{"" if refuse else repr(e)},"a, ""{i}"""')
        json_lines.append(json.dumps({"qid": int(q), "vid": v, "duration": t,
                                      "pred_relevant_windows": [] if refuse else [[s, e]]}))
    (d / "preds.csv").write_text("\n".join(csv_lines) + "\n")
    (d / "preds.jsonl").write_text("\n".join(json_lines) + "\n")
    base = ["certify", "--calibrator", str(d / "cal.json"), "--on-error", "reject"]
    assert main([*base, "--preds", str(d / "preds.csv"), "--columns", COLS,
                 "-o", str(d / "regions.csv")]) == 0
    assert main([*base, "--preds", str(d / "preds.csv"), "--columns", COLS, "--compact",
                 "-o", str(d / "compact.csv")]) == 0
    assert main([*base, "--preds", str(d / "preds.jsonl"), "-o", str(d / "regions.jsonl")]) == 0
    return d


def _evaluate(regions, gt, capsys, *flags):
    out = regions.with_name(regions.stem + "-metrics.json")
    capsys.readouterr()
    assert main(["evaluate", "--regions", str(regions), "--gt", str(gt), "--json", str(out),
                 *flags]) == 0
    return json.loads(out.read_text()), capsys.readouterr().out


@pytest.mark.parametrize("name,flags", [
    ("regions.csv", []), ("regions.csv", ["--batch-rows", "97"]),
    ("regions.csv", ["--in-memory"]), ("compact.csv", ["--columns", "qid=qid,vid=vid"]),
])
def test_csv_regions_give_the_numbers_of_the_jsonl_regions(certified, qvh_gt, capsys, name,
                                                           flags):
    ref, _ = _evaluate(certified / "regions.jsonl", qvh_gt, capsys)
    got, text = _evaluate(certified / name, qvh_gt, capsys, "--calibrator",
                          str(certified / "cal.json"), *flags)
    if name == "compact.csv":  # no start/end columns: the grounder's own windows not known
        assert got.pop("field_metrics") is None and got.pop("point_iou") is None
        assert "base grounder point-IoU not known (no row carries a predicted window" in text
        assert ref.pop("field_metrics") is not None and ref.pop("point_iou") > 0
    held_out = len((certified / "preds.csv").read_text().splitlines()) - 1
    assert got["counts"]["rows"] == held_out and got["counts"]["rejected_here"] == 0
    assert got == ref
    assert re.search(r"is (inside|BELOW \(.*\)|ABOVE \(.*\)) its 95% test band", text)


def test_without_the_calibrator_the_band_is_not_known(certified, qvh_gt, capsys):
    ref, _ = _evaluate(certified / "regions.jsonl", qvh_gt, capsys)
    got, text = _evaluate(certified / "regions.csv", qvh_gt, capsys)
    assert ref["reference"] is not None and got.get("reference") is None
    assert "reference: not known" in text
    assert (got["score"], got["alpha"]) == (None, None)
    for key in ("marginal", "non_refused", "counts", "field_metrics", "refusal_rate"):
        assert got[key] == ref[key], key


def test_calibrator_is_only_for_csv_regions(certified, qvh_gt, capsys):
    assert main(["evaluate", "--regions", str(certified / "regions.jsonl"), "--gt",
                 str(qvh_gt), "--calibrator", str(certified / "cal.json")]) != 0
    assert "--calibrator is for CSV regions" in capsys.readouterr().err


def test_a_csv_without_cover_columns_is_named(certified, qvh_gt):
    from cover.stream.evaluate import evaluate_stream

    gt = cover.io.qvhighlights.read_ground_truth(qvh_gt).table
    with pytest.raises(InputError, match=r"preds\.csv:1: no column .cover_status."):
        evaluate_stream(certified / "preds.csv", gt)


#: Lines (the header and 40 rows) of the files streamed 4 rows a batch: ten batches
#: around the damaged line, not the whole file's 238.
SHORT_FILE = 41


def test_a_bad_region_cell_is_rejected_naming_its_line(certified, qvh_gt, tmp_path):
    from cover.stream.evaluate import evaluate_stream

    lines = (certified / "regions.csv").read_text().splitlines()[:SHORT_FILE]
    lines[5] = re.sub(r'"\[\[[^"]*\]\]"', '"[[1.0, 0.5]]"', lines[5], count=1)
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n")
    gt = cover.io.qvhighlights.read_ground_truth(qvh_gt).table
    got = evaluate_stream(bad, gt, batch_rows=4, calibrator=str(certified / "cal.json"))
    assert got is not None
    assert [(p.line, p.problem) for p in got.read_problems.kept] == [
        (6, "a region component has start > end")]
    assert got.sums.rows == len(lines) - 2


@pytest.mark.parametrize("whole", [False, True])
def test_a_line_pyarrow_cannot_read_is_a_rejected_row(certified, qvh_gt, tmp_path, whole):
    """A regions line cut short (too few fields) is a read problem naming its line and
    qid, streamed or read as one batch (``--in-memory``); the other rows are evaluated
    as before."""
    from cover.stream.evaluate import evaluate_stream

    lines = (certified / "regions.csv").read_bytes().splitlines()[:SHORT_FILE]
    qid = lines[5].split(b",")[0].decode()
    lines[5] = b",".join(lines[5].split(b",")[:4])
    bad = tmp_path / "cut.csv"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    gt = cover.io.qvhighlights.read_ground_truth(qvh_gt).table
    got = evaluate_stream(bad, gt, batch_rows=4, calibrator=str(certified / "cal.json"),
                          whole=whole)
    assert got is not None and got.batches == (1 if whole else (len(lines) + 2) // 4)
    assert [(p.line, p.qid, p.problem) for p in got.read_problems.kept] == [
        (6, qid, "cannot read as CSV: 4 field(s), the header has 14")]  # with cover_in_calibration
    assert got.sums.rows == len(lines) - 2


_CELL_DAMAGE = {
    "no_status": {"cover_status": ""},
    "rejected": {"cover_status": "rejected", "cover_reason": "x"},
    "abstained": {"cover_status": "abstained", "cover_reason": "unsure"},
    "unknown_status": {"cover_status": "maybe"},
    "refused_yes": {"cover_refused": "yes"},
    "refused_mismatch": {"cover_status": "refused", "cover_refused": "false"},
    "no_region": {"cover_region": ""},
    "null_region": {"cover_region": "null"},
    "wide_region": {"cover_region": "[[1.0, 2.0, 3.0]]"},
    "past_end": {"cover_region": "[[0.0, 1000.0]]"},
    "nan_region": {"cover_region": "[[NaN, 5.0]]"},
    "text_region": {"cover_region": "somewhere"},
    "no_duration": {"cover_duration": ""},
    "other_threshold": {"cover_threshold": "0.123"},
    "no_start": {"start": ""},
    "nan_start": {"start": "nan"},
    "repeat": {"qid": None},  # the qid of the first data row
    "blank_qid": {"qid": " 12"},
}


#: Rows of regions.csv the damage tests keep: past the last damaged row (300) and the
#: largest batch they stream (400), so every batch size still ends one batch inside the
#: file; the other rows would only be evaluated again, clean, in every example.
DAMAGE_ROWS = 420


def _damaged_csv(certified, tmp_path, damage: dict[int, str]):
    """The first DAMAGE_ROWS rows of regions.csv with ``damage`` (data row -> kind) done
    to their cells."""
    import csv
    import io

    text = (certified / "regions.csv").read_text()
    rows = list(csv.DictReader(io.StringIO(text)))[:DAMAGE_ROWS]
    for i, how in damage.items():
        cells = dict(_CELL_DAMAGE[how])
        if "qid" in cells and cells["qid"] is None:
            cells["qid"] = rows[0]["qid"]
        rows[i].update(cells)
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    bad = tmp_path / "bad.csv"
    bad.write_text(out.getvalue())
    return bad


def _outcome(bad, gt, cal, capsys, on_error, *flags):
    out = bad.with_name("e.json")
    out.unlink(missing_ok=True)
    capsys.readouterr()
    rc = main(["evaluate", "--regions", str(bad), "--gt", str(gt), "--calibrator", str(cal),
               "--on-error", on_error, "--json", str(out), *flags])
    cap = capsys.readouterr()
    err = "\n".join(ln for ln in cap.err.splitlines()  # how each file was read
                    if not ln.startswith((f"{bad}: ", f"{gt}: ")))
    return rc, cap.out, err, out.read_bytes() if out.exists() else None


@pytest.mark.parametrize("how", [None, *sorted(_CELL_DAMAGE)])
def test_each_damaged_cell_gets_one_outcome_streamed_or_whole(certified, qvh_gt, tmp_path,
                                                             capsys, how):
    """One damaged row in a batch of otherwise clean rows (the batch a bulk read takes),
    streamed or read whole (by the records): the same lines, metrics and messages."""
    bad = _damaged_csv(certified, tmp_path, {} if how is None else {200: how})
    cal = certified / "cal.json"
    whole = _outcome(bad, qvh_gt, cal, capsys, "reject", "--in-memory")
    assert _outcome(bad, qvh_gt, cal, capsys, "reject", "--batch-rows", "97") == whole


@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.integers(0, 300), st.sampled_from(sorted(_CELL_DAMAGE)),
                       max_size=4),
       st.sampled_from(["raise", "reject"]), st.sampled_from(["7", "97", "400"]))
def test_damaged_csv_regions_get_one_outcome_streamed_or_whole(certified, qvh_gt, tmp_path,
                                                               capsys, damage, on_error,
                                                               batch):
    bad = _damaged_csv(certified, tmp_path, damage)
    cal = certified / "cal.json"
    whole = _outcome(bad, qvh_gt, cal, capsys, on_error, "--in-memory")
    assert _outcome(bad, qvh_gt, cal, capsys, on_error, "--batch-rows", batch) == whole


def test_region_cells_that_borrow_each_others_brackets_stay_their_rows(certified, qvh_gt,
                                                                     tmp_path, capsys):
    """Region cells whose brackets only balance across rows (one row's list closed in
    the next, another holding two lists) are each the per-row reader's to judge: a bulk
    read that decodes the cells joined must not shift regions between rows."""
    bad = _damaged_csv(certified, tmp_path, {})
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(bad.read_text())))
    rows[10]["cover_region"] = "[[1.0, 2.0]"
    rows[11]["cover_region"] = "[3.0, 4.0]]"
    rows[12]["cover_region"] = "[[5.0, 6.0]], [[7.0, 8.0]]"
    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    bad.write_text(out.getvalue())
    cal = certified / "cal.json"
    whole = _outcome(bad, qvh_gt, cal, capsys, "reject", "--in-memory")
    assert whole[0] == 0 and "3 row(s) rejected" in whole[2]
    assert _outcome(bad, qvh_gt, cal, capsys, "reject", "--batch-rows", "97") == whole
