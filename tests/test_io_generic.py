"""The column-mapping reader: jsonl, json, CSV and Parquet give the same table."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import example_dir
from cover.errors import InputError
from cover.io.generic import parse_columns, read_table

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pcsv = pytest.importorskip("pyarrow.csv")

windows = st.lists(
    st.tuples(st.floats(0, 100), st.floats(0, 50)).map(lambda t: (t[0], t[0] + t[1])),
    min_size=1, max_size=30)


def write_all(tmp: Path, rows: list[dict]) -> dict[str, Path]:
    jl = tmp / "p.jsonl"
    jl.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    js = tmp / "p.json"
    js.write_text(json.dumps({r["id"]: {k: v for k, v in r.items() if k != "id"}
                              for r in rows}))
    flat = pa.table({"id": [r["id"] for r in rows], "video": [r["video"] for r in rows],
                     "s": [r["pred"][0] for r in rows], "e": [r["pred"][1] for r in rows],
                     "pred": [r["pred"] for r in rows]})
    pq.write_table(flat, tmp / "p.parquet")
    pcsv.write_csv(flat.drop_columns(["pred"]), tmp / "p.csv")
    return {"jsonl": jl, "json": js, "parquet": tmp / "p.parquet", "csv": tmp / "p.csv"}


@settings(max_examples=25, deadline=None)
@given(windows)
def test_every_container_reads_the_same(tmp_path_factory: pytest.TempPathFactory,
                                        spans: list[tuple[float, float]]) -> None:
    tmp = example_dir(tmp_path_factory)
    rows = [{"id": f"q{i}", "video": f"v{i % 3}", "pred": [s, e]}
            for i, (s, e) in enumerate(spans)]
    files = write_all(tmp, rows)
    want_s = np.array([s for s, _ in spans])
    for kind, mapping in [("jsonl", "qid=id,vid=video,start=pred.0,end=pred.1"),
                          ("json", "qid=key,vid=video,start=pred.0,end=pred.1"),
                          ("parquet", "qid=id,vid=video,start=pred.0,end=pred.1"),
                          ("parquet", "qid=id,vid=video,start=s,end=e"),
                          ("csv", "qid=id,vid=video,start=s,end=e")]:
        t = read_table(files[kind], mapping, role="predictions").table
        assert t.qid.tolist() == [r["id"] for r in rows], kind
        assert t.vid.tolist() == [r["video"] for r in rows], kind
        np.testing.assert_array_equal(t.pred_start, want_s)


def test_windows_column_ranks_by_score(tmp_path: Path) -> None:
    tab = pa.table({"qid": ["a", "b"], "w": [[[1.0, 2.0, 0.1], [3.0, 4.0, 0.9]], []],
                    "sal": [[0.1, 0.2], [0.3]]})
    pq.write_table(tab, tmp_path / "w.parquet")
    t = read_table(tmp_path / "w.parquet", "qid=qid,windows=w,saliency=sal",
                   role="predictions").table
    assert t.pred_start.tolist()[0] == 3.0 and not t.has_interval[1]
    assert t.relevance.values.tolist() == [0.1, 0.2, 0.3]


def test_ground_truth_from_csv_with_bad_rows_named(tmp_path: Path) -> None:
    p = tmp_path / "gt.csv"
    p.write_text("id,video,len,s,e\nq1,v1,30,1,5\nq2,v1,30,9,2\nq1,v2,30,1,2\n")
    got = read_table(p, "qid=id,vid=video,duration=len,start=s,end=e", role="ground_truth",
                     on_error="reject")
    assert got.table.qid.tolist() == ["q1"]
    assert [(x.line, x.qid, x.problem) for x in got.problems] == [
        (3, "q2", "a true window has start > end"),
        (4, "q1", "duplicate qid (first seen on line 2)")]
    with pytest.raises(InputError, match=r"gt.csv:3 \(qid=q2\)"):
        read_table(p, "qid=id,vid=video,duration=len,start=s,end=e", role="ground_truth")


@pytest.mark.parametrize(("spec", "msg"), [
    ("start=a,end=b", "must name the qid"),
    ("qid=a,start=b", "both start= and end="),
    ("qid=a,begin=b", "unknown field"),
    ("qid", "expected FIELD=COLUMN"),
    # the last would win silently: start read from the end column
    ("qid=a,start=s,end=e,start=e", r"start= given twice \(start=s and start=e\)"),
    (" qid = a, qid=b ,start=s,end=e", r"qid= given twice \(qid=a and qid=b\)"),
])
def test_bad_mapping(spec: str, msg: str) -> None:
    with pytest.raises(InputError, match=msg):
        parse_columns(spec)


def test_missing_column_lists_the_columns(tmp_path: Path) -> None:
    pq.write_table(pa.table({"id": ["a"]}), tmp_path / "x.parquet")
    with pytest.raises(InputError, match=r"no column 'pred' \(columns: id\)"):
        read_table(tmp_path / "x.parquet", "qid=id,start=pred.0,end=pred.1", role="predictions")


@pytest.mark.parametrize("kind", ["jsonl", "parquet", "csv"])
def test_batches_give_the_whole_file_in_order(tmp_path: Path, kind: str) -> None:
    from cover.io.batches import iter_batches

    rows = [{"id": f"q{i}", "video": f"v{i % 7}", "pred": [i * 0.5, i * 0.5 + 3]}
            for i in range(25)]
    rows.append({"id": "q3", "video": "v3", "pred": [1.0, 2.0]})  # repeat in a later batch
    files = write_all(tmp_path, rows)
    mapping = ("qid=id,vid=video,start=pred.0,end=pred.1" if kind == "jsonl"
               else "qid=id,vid=video,start=s,end=e")
    whole = read_table(files[kind], mapping, role="predictions", on_error="reject")
    parts = list(iter_batches(files[kind], mapping, role="predictions", batch_rows=10,
                              on_error="reject"))
    assert len(parts) >= 2
    qid = np.concatenate([b.table.qid for b in parts])
    assert qid.tolist() == whole.table.qid.tolist() == [f"q{i}" for i in range(25)]
    np.testing.assert_array_equal(np.concatenate([b.table.pred_end for b in parts]),
                                  whole.table.pred_end)
    np.testing.assert_array_equal(np.concatenate([b.table.line for b in parts]),
                                  whole.table.line)
    (dup,) = [p for b in parts for p in b.problems]
    assert dup.qid == "q3" and "earlier batch" in dup.problem


def _gzipped(files: dict[str, Path], tmp: Path) -> dict[str, list[Path]]:
    """Each file gzipped twice: as ``<name>.gz`` and under its own name (gzip is
    recognised by its bytes, not the name)."""
    import gzip

    out: dict[str, list[Path]] = {}
    for kind, f in files.items():
        named, same = tmp / f"gz_{f.name}.gz", tmp / "same" / f.name
        same.parent.mkdir(exist_ok=True)
        named.write_bytes(gzip.compress(f.read_bytes()))
        same.write_bytes(named.read_bytes())
        out[kind] = [named, same]
    return out


_MAPPINGS = {"jsonl": "qid=id,vid=video,start=pred.0,end=pred.1",
             "json": "qid=key,vid=video,start=pred.0,end=pred.1",
             "parquet": "qid=id,vid=video,start=s,end=e",
             "csv": "qid=id,vid=video,start=s,end=e"}


def test_gzip_inputs_read_like_the_plain_files(tmp_path: Path) -> None:
    from cover.io.batches import iter_batches

    rows = [{"id": f"q{i}", "video": f"v{i % 7}", "pred": [i * 0.5, i * 0.5 + 3]}
            for i in range(25)]
    files = write_all(tmp_path, rows)
    for kind, gz in _gzipped(files, tmp_path).items():
        want = read_table(files[kind], _MAPPINGS[kind], role="predictions").table
        for path in gz:
            got = read_table(path, _MAPPINGS[kind], role="predictions").table
            assert got.qid.tolist() == want.qid.tolist(), path
            np.testing.assert_array_equal(got.pred_end, want.pred_end)
            np.testing.assert_array_equal(got.line, want.line)
            if kind == "json":
                continue  # a whole JSON document is not read in batches
            parts = list(iter_batches(path, _MAPPINGS[kind], role="predictions",
                                      batch_rows=10))
            assert np.concatenate([b.table.qid for b in parts]).tolist() == want.qid.tolist()
            np.testing.assert_array_equal(np.concatenate([b.table.line for b in parts]),
                                          want.line)


def test_damaged_gzip_is_named(tmp_path: Path) -> None:
    import gzip

    from cover.io.batches import iter_batches

    rows = [{"id": f"q{i}", "video": "v", "pred": [0, 1]} for i in range(200)]
    data = gzip.compress("\n".join(json.dumps(r) for r in rows).encode())
    bad = tmp_path / "p.jsonl.gz"
    bad.write_bytes(data[: len(data) // 2])
    for read in (lambda: read_table(bad, _MAPPINGS["jsonl"], role="predictions"),
                 lambda: list(iter_batches(bad, _MAPPINGS["jsonl"], role="predictions"))):
        with pytest.raises(InputError, match=r"p\.jsonl\.gz: damaged or truncated gzip"):
            read()


@pytest.mark.parametrize(("field", "column", "value"), [
    ("windows", "w", "[[1, 2]]"),          # a list written out as text
    ("windows", "w", [1.0, 2.0]),          # one level of list, not two
    ("saliency", "s", "0.1,0.2"),
])
def test_a_wrongly_typed_parquet_column_is_named(tmp_path, field, column, value):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    cols = {"qid": ["1"], "vid": ["v"], "duration": [10.0], "w": [[[1.0, 2.0]]],
            "s": [[0.1, 0.2]]}
    cols[column] = [value]
    path = tmp_path / "p.parquet"
    pq.write_table(pa.table(cols), path)
    mapping = "qid=qid,vid=vid,duration=duration,windows=w" + (
        ",saliency=s" if field == "saliency" else "")
    with pytest.raises(InputError, match=rf"p\.parquet: column '{column}' must be .* but it is"):
        read_table(path, mapping, role="predictions")
