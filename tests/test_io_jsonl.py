"""The whole-file JSON-lines reader: rows, rejected lines and their messages."""

from __future__ import annotations

import json


def test_a_lone_surrogate_qid_is_a_row_problem(tmp_path) -> None:
    """JSON ``"\\ud800"`` is no character: the row is rejected naming file, line and the
    qid escaped (printable), never a crash when the message is printed."""
    from cover.io.qvhighlights import read_predictions

    p = tmp_path / "p.jsonl"
    rows = ['{"qid": 1, "vid": "v", "pred_relevant_windows": [[1, 2, 0.5]]}',
            '{"qid": "a\\ud800", "vid": "v", "pred_relevant_windows": [[1, 2, 0.5]]}']
    p.write_text("\n".join(rows) + "\n")
    got = read_predictions(p, on_error="reject")
    assert got.table.qid.tolist() == ["1"]
    (prob,) = got.problems
    assert str(prob) == (f'{p}:2 (qid="a\\ud800"): qid holds a lone surrogate \\ud800, '
                         "which is not a character; write the character itself")
    str(prob).encode("utf-8")  # printable


def test_integer_qids_past_64_bits_stay_exact(tmp_path) -> None:
    """orjson reads 2**64 as a float; the row is read again exactly, never as 1.8e19."""
    from cover.io.qvhighlights import read_predictions

    big = 2**64 + 7
    p = tmp_path / "p.jsonl"
    p.write_text(f'{{"qid": {big}, "vid": "v", "pred_relevant_windows": [[1, 2, 0.5]]}}\n'
                 f'{{"qid": -{big}, "vid": "v", "pred_relevant_windows": [[1, 2, 0.5]]}}\n')
    assert read_predictions(p).table.qid.tolist() == [str(big), f"-{big}"]


def test_array_entries_that_are_not_objects_are_rejected_by_line(tmp_path) -> None:
    """A JSON array's entries are numbered by the line each starts on; an entry that is
    not an object is a rejected row naming that line, echoed back as it was."""
    from cover.io.jsonl import read_json_rows

    p = tmp_path / "a.json"
    p.write_text('[\n {"qid": 1, "vid": "a"},\n 5,\n {"qid": 2,\n  "vid": "b"}, [1]\n]\n')
    raw = read_json_rows(p)
    assert raw.records == [{"qid": 1, "vid": "a"}, {"qid": 2, "vid": "b"}]
    assert raw.lines.tolist() == [2, 4]
    assert [(x.line, x.qid, x.problem) for x in raw.problems] == [
        (3, None, "entry is not a JSON object (got a number)"),
        (5, None, "entry is not a JSON object (got a list)")]
    assert raw.rejected == {(3, None): 5, (5, None): [1]}


def test_array_entries_on_one_line_are_numbered_by_place_and_none_is_lost(tmp_path,
                                                                          capsys) -> None:
    """``json.dump(list)`` writes every entry on one line: numbered by the line they
    start on, the entries were one row (two rejected rows named one line, the certified
    output lost two rows and wrote one twice). They are numbered by their place in the
    array."""
    import cover
    from cover.io.jsonl import read_json_rows

    rows = [{"qid": q, "vid": "a", "duration": d, "pred_relevant_windows": [[1, 2, 0.5]]}
            for q, d in ((1, -1), (3, -5), (2, 150))]
    p = tmp_path / "a.json"
    p.write_text(json.dumps(rows) + "\n")
    raw = read_json_rows(p)
    assert raw.lines.tolist() == [1, 2, 3] and len(raw.records) == 3
    table = cover.GroundingTable.from_arrays(
        qid=[f"c{i}" for i in range(40)], duration=150.0, pred_start=[10.0] * 40,
        pred_end=[20.0] * 40, truth=([12.0] * 40, [25.0] * 40))
    cal = tmp_path / "cal.json"
    cover.Calibrator(score="norm", alpha=0.1).fit(table).save(cal)
    out = tmp_path / "o.jsonl"
    from cover.cli import main

    assert main(["certify", "--calibrator", str(cal), "--preds", str(p), "-o", str(out),
                 "--on-error", "reject"]) == 0
    err = capsys.readouterr().err
    assert f"{p}:1 (qid=1)" in err and f"{p}:2 (qid=3)" in err
    got = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(r["qid"], r["cover"]["status"]) for r in got] == [
        (1, "rejected"), (3, "rejected"), (2, "certified")]
