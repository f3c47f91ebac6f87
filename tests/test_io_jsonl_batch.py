"""Bulk reading of a batch of prediction lines: it either builds exactly the per-row
reader's table or leaves the batch to it; it never accepts a row the per-row reader
rejects."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bulk_rows import encode, same_tables
from cover.io.jsonl import parse_json_lines
from cover.io.jsonl_batch import CHUNK_LINES, decode_batch, gc_paused, load_batch
from cover.io.qvhighlights import predictions_from_rows

MISSING = object()

numbers = st.one_of(
    st.floats(-1e3, 1e3, allow_nan=False), st.integers(-100, 100),
    st.sampled_from([0.0, -0.0, 1e308, 2**53 + 1, 10**20]),
)
odd_numbers = st.sampled_from([math.nan, math.inf, -math.inf, True, False, "1.5", None,
                               [1.0], 10**400])
maybe_bad_number = st.one_of(numbers, numbers, numbers, odd_numbers)
ids = st.one_of(st.integers(-5, 30), st.sampled_from(["a", "b", "q1", "7", "x y"]))
odd_ids = st.sampled_from(["", " a", "b ", 2.0, 3.5, True, None, [1], {"a": 1}, MISSING])


def windows(number: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    def of_width(w: int) -> st.SearchStrategy[object]:
        return st.lists(st.lists(number, min_size=w, max_size=w), max_size=4)
    return st.one_of(of_width(3), of_width(2), of_width(3), of_width(1),
                     st.lists(st.lists(number, min_size=2, max_size=3), max_size=3),
                     st.sampled_from([None, MISSING, "[]", 5, [1.0, 2.0], []]))


def rows(clean: bool) -> st.SearchStrategy[dict[str, object]]:
    num = numbers if clean else maybe_bad_number
    fields = {
        "qid": ids if clean else st.one_of(ids, ids, odd_ids),
        "vid": ids if clean else st.one_of(ids, ids, odd_ids),
        "pred_relevant_windows": (st.lists(st.tuples(st.floats(0, 50), st.floats(0, 50),
                                                     st.floats(0, 1)).map(
            lambda t: [min(t[0], t[1]), max(t[0], t[1]), t[2]]), max_size=4)
            if clean else windows(num)),
        "pred_saliency_scores": st.one_of(st.lists(num, max_size=6),
                                          st.sampled_from([MISSING, None])
                                          if not clean else st.just(MISSING)),
        "duration": st.one_of(st.floats(1, 200), st.just(MISSING)) if clean else
        st.one_of(num, st.just(MISSING), st.just(-1.0), st.just(0)),
        "start_std": st.sampled_from([MISSING, None, 0.5, 1]) if clean else
        st.one_of(st.just(MISSING), num),
        "end_std": st.sampled_from([MISSING, 0.25]) if clean else st.one_of(st.just(MISSING),
                                                                              num),
        "query": st.sampled_from([MISSING, "a query", None, "naïve"]),
    }
    return st.fixed_dictionaries(fields).map(
        lambda d: {k: v for k, v in d.items() if v is not MISSING})


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
