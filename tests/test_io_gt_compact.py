"""The ground truth read straight into compact columns (cover.io.gt_lean, built by
cover.io.truth_index) is the table of a table's compaction, and every file the per-row
reader must read is handed on."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cover.io.gt_lean as gt_lean
import cover.io.narrow as narrow
import cover.io.truth_index as truth_index
from cover.io.gt_lean import read_truth_compact
from cover.io.qvhighlights import read_ground_truth
from cover.io.truth_index import compact_truth
from test_io_truth_index import _same_table


def _row(i: int, **over: object) -> dict:
    row = {"qid": i * 3 + 1, "query": f"Query {i % 4}.", "duration": 150 if i % 2 else 126.5,
           "vid": f"v{i // 2}_0.0_150.0", "relevant_windows": [[i % 40, i % 40 + 4.5]]}
    if i % 3 == 0:
        row["relevant_windows"].append([100, 110.25])
    return row | over


def _write(path: Path, rows: list[dict | str], blank: str = "") -> Path:
    """One row a line; ``blank``: a blank line after ``every`` row, or ``late`` (after
    row 20, a later batch: the lines kept from then on, 1, 2, ... before)."""
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n"
                   + ("\n" if blank == "every" or (blank == "late" and i == 20) else "")
                   for i, r in enumerate(rows))
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("blank", ["", "every", "late"])
def test_the_compact_read_is_the_per_row_table(tmp_path, monkeypatch, blank):
    monkeypatch.setattr(gt_lean, "BATCH_LINES", 7)  # several batches
    monkeypatch.setattr(gt_lean, "CHUNK_LINES", 3)  # of several chunks
    rows = [_row(i) for i in range(30)]
    rows[2]["qid"] = -7  # integer qids decoded as integers, not text
    rows[4]["qid"] = "13"  # the text of an integer: an integer key all the same
    rows[5]["qid"] = "clip-é5"  # text qids from here on: the integer parts turn to text
    rows[12]["qid"] = 2**64  # an integer beyond int64: text
    rows[13]["vid"] = "vidé_13"  # a vid that is not ASCII: UTF-8 bytes
    rows[9]["query"] = None
    path = _write(tmp_path / "gt.jsonl", rows, blank)
    got = read_truth_compact(path)
    rows = read_ground_truth(path).table
    assert got is not None and len(got) == 30
    every = np.arange(30)
    _same_table(got.table(), rows.take(every))
    _same_table(got.table(), compact_truth(rows).table())


def test_the_real_qvhighlights_truth_reads_as_the_per_row_table(qvh_gt):
    got = read_truth_compact(qvh_gt)
    ref = read_ground_truth(qvh_gt).table
    assert got is not None and got.saliency is not None and ref.truth_saliency is not None
    rows = np.arange(len(ref))
    _same_table(got.table(), ref.take(rows))
    assert np.array_equal(got.take(rows).truth_saliency.values, ref.truth_saliency.values)


def test_a_gzipped_file_reads_as_the_plain_one(tmp_path):
    plain = _write(tmp_path / "gt.jsonl", [_row(i) for i in range(5)])
    zipped = tmp_path / "gt.jsonl.gz"
    zipped.write_bytes(gzip.compress(plain.read_bytes()))
    a, b = read_truth_compact(plain), read_truth_compact(zipped)
    assert a is not None and b is not None
    _same_table(a.table(), replace(b.table(), source=str(plain)))


@pytest.mark.parametrize("bad", [
    "not json", json.dumps(_row(0, qid=None)), json.dumps(_row(0, duration="150")),
    json.dumps(_row(0, relevant_windows=[[5, 2]])), json.dumps(_row(0, relevant_windows=[])),
    json.dumps(_row(2)),  # a repeated qid
])
def test_a_file_not_plainly_clean_is_handed_on(tmp_path, bad):
    rows: list[dict | str] = [_row(i) for i in range(4)]
    path = _write(tmp_path / "gt.jsonl", [*rows, bad])
    assert read_truth_compact(path) is None


@pytest.mark.parametrize("text", ["", "\n\n", "[" + json.dumps(_row(0)) + "]\n"])
def test_empty_and_array_files_are_handed_on(tmp_path, text):
    path = tmp_path / "gt.jsonl"
    path.write_text(text)
    assert read_truth_compact(path) is None
    assert read_truth_compact(tmp_path / "missing.jsonl") is None


def test_read_truth_compacts_every_file_as_the_table_read(tmp_path, qvh_gt):
    """``read_truth`` (the truth every stream holds): a plainly clean Moment-DETR file
    straight into compact columns, no problems; any other file as ``formats.read``
    reads it (its problems kept, under ``--on-error reject``), then compacted."""
    from cover.io import formats
    from cover.io.formats import LEAN_FORMAT, read_truth

    got = read_truth(qvh_gt)
    assert (got.format, got.problems, got.native_qids, got.no_moment) == (
        LEAN_FORMAT, [], True, False)
    _same_table(got.truth.table(), read_ground_truth(qvh_gt).table)
    path = _write(tmp_path / "gt.jsonl", [*(_row(i) for i in range(6)),
                                          _row(9, duration="150")])
    got = read_truth(path, on_error="reject")
    want = formats.read(path, "ground_truth", options=formats.Options(on_error="reject"))
    assert got.format == want.format and len(got.truth) == 6
    assert [(p.line, p.problem) for p in got.problems] == [
        (p.line, p.problem) for p in want.loaded.problems] and got.problems
    _same_table(got.truth.table(), compact_truth(want.loaded.table).table())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["a", "ab", "b", "", "é", "zz", "v1_0.0_150.0"]), max_size=40),
       st.integers(1, 9))
def test_sorted_unique_is_numpys_with_a_lower_peak(values, step):
    """The vids' merge (:func:`narrow.sorted_unique`, neighbours compared a step at
    a time) gives np.unique's distinct values and inverse."""
    a = np.array([v.encode() for v in values], dtype="S12") if values else \
        np.zeros(0, dtype="S1")
    got, inv = narrow.sorted_unique(a, step)
    want, want_inv = np.unique(a, return_inverse=True)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert np.array_equal(inv, want_inv.reshape(-1))


def test_a_column_sized_for_its_rows_never_grows():
    """``Column(capacity)`` (a Parquet file's row count): one buffer for every part,
    trimmed in place to the rows appended (fewer when rows were rejected)."""
    col = truth_index.Column(5_000)
    parts = [np.arange(a, a + 1_500, dtype=np.float64) for a in (0, 1_500, 3_000)]
    col.append(parts[0])
    first = col.buf
    for p in parts[1:]:
        col.append(p)
    assert col.buf is first and first is not None and first.size == 5_000
    got = col.array(np.float64)
    assert got.size == 4_500 and np.array_equal(got, np.concatenate(parts))
    assert truth_index.Column().array(np.int8).dtype == np.int8
