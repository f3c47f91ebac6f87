"""Streaming Parquet certification: identical to the in-process path, any batch size."""

from __future__ import annotations

import json

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import cover  # noqa: E402
from cover.errors import OutputError  # noqa: E402
from cover.stream import certify_parquet  # noqa: E402

COLS = {"qid": "qid", "vid": "vid", "duration": "duration",
        "windows": "pred_relevant_windows", "saliency": "pred_saliency_scores"}


@pytest.fixture(scope="module")
def qvh(qdetr_table, qdetr_preds, qvh_gt, qdetr_columns, tmp_path_factory):
    """QD-DETR's real predictions as Parquet (durations joined in), and the table."""
    src = tmp_path_factory.mktemp("pq") / "preds.parquet"
    pq.write_table(pa.table(qdetr_columns), src)
    table = qdetr_table
    return src, table


@pytest.mark.parametrize(("score", "batch_rows"), [("norm", 97), ("sls", 1000),
                                                   ("sec", 100_000)])
def test_parquet_stream_equals_in_process(qvh, tmp_path, score, batch_rows):
    src, table = qvh
    cal = cover.Calibrator(score=score, alpha=0.1).fit(table)
    dst = tmp_path / "out.parquet"
    counts = certify_parquet(cal, src, dst, columns=COLS, batch_rows=batch_rows)
    assert counts.rows == len(table) == counts.certified + counts.refused + counts.rejected
    assert counts.batches == -(-len(table) // batch_rows)
    out = pq.read_table(dst)
    assert out.column_names[:-1] == pq.read_schema(src).names  # input columns untouched
    got = out.column("cover").combine_chunks().field("region").to_pylist()
    assert got == cal.certify(table).intervals.to_lists()
    meta = json.loads(out.schema.metadata[b"cover.calibrator"])
    assert meta["score"] == score and meta["k"] == cal.k_


def test_output_onto_input_is_refused_and_input_kept(qvh, tmp_path):
    src, table = qvh
    before = src.read_bytes()
    cal = cover.Calibrator(score="norm", alpha=0.1).fit(table)
    with pytest.raises(OutputError, match="also an input"):
        certify_parquet(cal, src, src, columns=COLS)
    assert src.read_bytes() == before


def test_a_failing_run_keeps_the_previous_output(qvh, tmp_path):
    src, table = qvh
    cal = cover.Calibrator(score="norm", alpha=0.1).fit(table)
    dst = tmp_path / "out.parquet"
    dst.write_bytes(b"previous")
    with pytest.raises(cover.InputError):
        certify_parquet(cal, src, dst, columns={"qid": "no_such_column"})
    assert dst.read_bytes() == b"previous"
    assert [p.name for p in tmp_path.iterdir()] == ["out.parquet"]  # no temp file left


def test_bad_batch_size(qvh, tmp_path):
    src, table = qvh
    cal = cover.Calibrator(score="norm", alpha=0.1).fit(table)
    with pytest.raises(ValueError, match="batch_rows"):
        certify_parquet(cal, src, tmp_path / "o.parquet", batch_rows=0)
    assert not np.any([p.suffix == ".tmp" for p in tmp_path.iterdir()])


def test_a_qid_repeated_in_a_later_batch_is_rejected_there(qvh, tmp_path):
    """As the whole-file reader does: the first row of a qid is certified, a repeat is
    rejected at its own row, whether or not it falls in the same batch."""
    src, table = qvh
    cal = cover.Calibrator(score="sec", alpha=0.1).fit(table)
    t = pq.read_table(src).slice(0, 50)
    dup = pa.concat_tables([t, t.slice(3, 1), t.slice(40, 1)])
    path = tmp_path / "dup.parquet"
    pq.write_table(dup, path)
    for batch_rows in (7, 1000):
        counts = certify_parquet(cal, path, tmp_path / f"o{batch_rows}.parquet", columns=COLS,
                                 batch_rows=batch_rows)
        block = pq.read_table(tmp_path / f"o{batch_rows}.parquet").column("cover")
        status = block.combine_chunks().field("status").to_pylist()
        reason = block.combine_chunks().field("reason").to_pylist()
        assert counts.rejected == 2 and status[50:] == ["rejected"] * 2
        assert all("duplicate qid" in r for r in reason[50:]) and "rejected" not in status[:50]


def test_videos_fill_only_missing_durations(qvh, tmp_path):
    """--videos with a Parquet duration column (read zero-copy, read-only) fills only the
    rows without one; a row whose own duration contradicts --videos is rejected, as on
    every other format (the row's T is never silently kept or replaced)."""
    src, table = qvh
    cal = cover.Calibrator(score="norm", alpha=0.1).fit(table)
    vids, first = np.unique(table.vid, return_index=True)
    videos = (vids, table.duration[first])  # the same durations: nothing changes
    certify_parquet(cal, src, tmp_path / "a.parquet", columns=COLS, videos=videos)
    certify_parquet(cal, src, tmp_path / "b.parquet", columns=COLS)
    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "b.parquet"))
    counts = certify_parquet(cal, src, tmp_path / "c.parquet", columns=COLS,
                             videos=(vids, np.full(vids.size, 1e6)))
    assert counts.rejected == counts.rows
    assert "contradicts 1e+06" in counts.examples[0].problem


@pytest.mark.parametrize("batch_rows", [1, 3, 4, 100])
def test_repeats_of_increasing_integer_qids_name_the_first_row(tmp_path, batch_rows):
    """Integer qids increasing from row to row need no first pass over the qid column;
    the first batch where they stop increasing finds every repeat exactly, naming the
    row of its first occurrence, whichever batch holds it (rows before keep their fate)."""
    rng = np.random.default_rng(0)
    k = 200
    ts = rng.uniform(0, 100, k)
    cal = cover.Calibrator(score="norm", alpha=0.1).fit(cover.GroundingTable.from_arrays(
        qid=np.arange(k), duration=150.0, pred_start=ts, pred_end=ts + 20,
        truth=(ts + 1, ts + 19)))
    qid = [1, 2, 5, 9, 10, 12, 2, 13, 11, 9, 20]
    n = len(qid)
    path = tmp_path / "ids.parquet"
    pq.write_table(pa.table({"qid": qid, "duration": [150.0] * n, "start": [10.0] * n,
                             "end": [30.0] * n}), path)
    counts = certify_parquet(cal, path, tmp_path / "o.parquet", batch_rows=batch_rows,
                             columns="qid=qid,duration=duration,start=start,end=end")
    block = pq.read_table(tmp_path / "o.parquet").column("cover").combine_chunks()
    reason = block.field("reason").to_pylist()
    assert counts.rejected == 2
    assert reason == [None] * 6 + ["duplicate qid (first seen on line 2)", None, None,
                                   "duplicate qid (first seen on line 4)", None]
    assert [p.line for p in counts.tally.kept] == [7, 10] and counts.tally.count("rejected") == 2
