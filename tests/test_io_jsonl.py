"""The whole-file JSON-lines reader: rows, rejected lines and their messages."""

from __future__ import annotations


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
    assert raw.rejected == {3: 5, 5: [1]}
