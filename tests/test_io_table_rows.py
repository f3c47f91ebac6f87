"""A table certified into JSON lines echoes every field of each row (it kept only the
qid and vid): CSV fields as their text, the mapped number columns as numbers, Parquet
values as JSON holds them."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from cover.cli import main
from cover.io.table_rows import table_rows

COLS = "qid=qid,vid=vid,start=start,end=end,duration=duration"


def test_csv_rows_are_their_fields(tmp_path: Path) -> None:
    src = tmp_path / "t.csv"
    src.write_text('qid,vid,start,end,duration,note\n1,v,1,2.5,10,"a, b ""c"""\n'
                   "2,v,abc,2,inf,x\n3,v,1\n")
    got = table_rows(src, {"qid": "qid", "vid": "vid", "start": "start", "end": "end",
                           "duration": "duration"})
    assert got == {
        2: {"qid": "1", "vid": "v", "start": 1.0, "end": 2.5, "duration": 10.0,
            "note": 'a, b "c"'},
        3: {"qid": "2", "vid": "v", "start": "abc", "end": 2.0, "duration": "inf",
            "note": "x"},
        4: {"qid": "3", "vid": "v", "start": 1.0}}  # a short line: the fields it has


def test_parquet_rows_are_their_values_as_json_holds_them(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    src = tmp_path / "t.parquet"
    pq.write_table(pa.table({"qid": ["1", "2"], "start": [1.0, float("nan")],
                             "when": [datetime.datetime(2024, 1, 2), None],
                             "blob": [b"ab", b"\xff"], "tags": [[1, 2], []]}), src)
    assert table_rows(src, {"qid": "qid"}) == {
        1: {"qid": "1", "start": 1.0, "when": "2024-01-02T00:00:00", "blob": "ab",
            "tags": [1, 2]},
        2: {"qid": "2", "start": "nan", "when": None, "blob": "\\xff", "tags": []}}


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_a_table_certified_into_json_lines_keeps_every_field(tmp_path: Path, kind: str) -> None:
    """Kept and rejected rows alike, in line order; the ids first, as read."""
    pytest.importorskip("pyarrow")
    import numpy as np

    import cover

    t = cover.GroundingTable.from_arrays(
        qid=np.arange(40), duration=60.0, pred_start=np.full(40, 10.0),
        pred_end=np.full(40, 20.0), truth=(np.full(40, 11.0), np.linspace(15, 25, 40)))
    cal = tmp_path / "cal.json"
    cover.Calibrator(score="norm", alpha=0.1).fit(t).save(cal)
    src = tmp_path / "t.csv"
    src.write_text("qid,vid,start,end,duration,note\n7,v,1,2,10,kept\n8,v,5,4,10,reversed\n")
    if kind == "parquet":
        import pyarrow.csv as pcsv
        import pyarrow.parquet as pq

        table = pcsv.read_csv(src, convert_options=pcsv.ConvertOptions(
            column_types={"qid": "string", "vid": "string"}))
        src = tmp_path / "t.parquet"
        pq.write_table(table, src)
    out = tmp_path / "r.jsonl"
    assert main(["certify", "--calibrator", str(cal), "--preds", str(src), "--columns", COLS,
                 "--on-error", "reject", "-o", str(out)]) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [{k: v for k, v in r.items() if k != "cover"} for r in rows] == [
        {"qid": "7", "vid": "v", "start": 1.0, "end": 2.0, "duration": 10.0, "note": "kept"},
        {"qid": "8", "vid": "v", "start": 5.0, "end": 4.0, "duration": 10.0,
         "note": "reversed"}]
    assert [r["cover"]["status"] for r in rows] == ["certified", "rejected"]
