"""Bulk reading of a batch of prediction lines: it either builds exactly the per-row
reader's table or leaves the batch to it; it never accepts a row the per-row reader
rejects."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bulk_rows import encode, rows, same_tables
from cover.io.jsonl import parse_json_lines
from cover.io.jsonl_batch import CHUNK_LINES, decode_batch, gc_paused, load_batch
from cover.io.qvhighlights import predictions_from_rows


def as_batch(recs: list[dict[str, object]], extra: list[bytes] = ()) -> list[tuple[int, bytes]]:
    lines = [encode(r) for r in recs] + list(extra)
    return [(i + 2, ln) for i, ln in enumerate(lines)]


def slow(batch: list[tuple[int, bytes]]):
    raw = parse_json_lines("p.jsonl", batch)
    return predictions_from_rows(raw, clip=2.0, on_error="reject")


@given(st.lists(rows(clean=False), min_size=1, max_size=8),
       st.lists(st.sampled_from([b"not json", b"[1, 2]", b'{"qid": NaN}', b"  "]),
                max_size=1))
def test_bulk_read_equals_the_per_row_reader_or_defers_to_it(recs, extra):
    batch = as_batch(recs, extra)
    fast = decode_batch("p.jsonl", batch, clip=2.0)
    ref = slow(batch)
    if fast is None:
        return
    assert ref.problems == [] and ref.rejected == {}  # never accepts a rejected row
    same_tables(fast.loaded.table, ref.table)
    assert fast.raw.records == [json.loads(ln) for _, ln in batch]


@given(st.lists(rows(clean=True), min_size=1, max_size=8).map(
    lambda rs: [{**r, "qid": i} for i, r in enumerate(rs)]))
def test_clean_rows_are_read_in_bulk(recs):
    batch = as_batch(recs)
    fast = decode_batch("p.jsonl", batch, clip=2.0)
    assert fast is not None and fast.fast
    same_tables(fast.loaded.table, slow(batch).table)


def test_chunks_of_a_batch_are_joined_in_order():
    recs = [{"qid": i, "vid": f"v{i % 7}", "pred_relevant_windows": [[0, i % 5 + 1, 0.5]] * (i % 3),
             "pred_saliency_scores": [i * 0.5] * (i % 4), "duration": 10 + i}
            for i in range(2 * CHUNK_LINES + 17)]
    batch = as_batch(recs)
    fast = decode_batch("p.jsonl", batch, clip=2.0)
    assert fast is not None
    same_tables(fast.loaded.table, slow(batch).table)
    dropped = decode_batch("p.jsonl", batch, clip=2.0, keep_records=False)
    assert dropped is not None and dropped.loaded.table.records is None
    again = dropped.ensure_records(dropped.loaded.table.take(np.arange(5, 40)))
    assert again.records.tolist() == recs[5:40]


def test_a_bad_row_anywhere_sends_the_batch_to_the_per_row_reader():
    recs = [{"qid": i, "vid": "v", "pred_relevant_windows": [[0, 1, 0.5]]} for i in range(900)]
    recs[700]["pred_relevant_windows"] = [[2, 1, 0.5]]  # start > end, in the second chunk
    got = load_batch("p.jsonl", as_batch(recs), on_error="reject")
    assert not got.fast
    assert [(p.line, p.qid) for p in got.loaded.problems] == [(702, "700")]
    assert len(got.loaded.table) == 899


def test_gc_paused_restores_the_collector():
    import gc

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


@pytest.mark.parametrize("field", [
    {"pred_relevant_windows": ["abc"]}, {"pred_relevant_windows": [{"a": 1, "b": 2, "c": 3}]},
    {"pred_relevant_windows": [[True, 1, 0.5]]}, {"pred_relevant_windows": [[0, 1, False]]},
    {"pred_relevant_windows": [["1", 2, 0.5]]}, {"pred_relevant_windows": [[[1], [2], [3]]]},
    {"pred_relevant_windows": [7]}, {"pred_relevant_windows": [[0, 1, 0.5], [0, 1]]},
    {"pred_saliency_scores": [True]}, {"pred_saliency_scores": ["1.5"]},
    {"pred_saliency_scores": [0.0, False, 1]}, {"pred_saliency_scores": [None]},
    {"duration": True}, {"duration": "150"}, {"start_std": False},
])
def test_numbers_in_disguise_are_left_to_the_per_row_reader(field):
    recs = [{"qid": i, "vid": "v", "pred_relevant_windows": [[0, 1, 1.0]]} for i in range(3)]
    recs[1] = {**recs[1], **field}
    batch = as_batch(recs)
    assert decode_batch("p.jsonl", batch, clip=2.0) is None
    ref = slow(batch)
    assert [p.line for p in ref.problems] == [3]
