"""The typed decode of prediction lines (the bulk reader without records): it either
builds exactly the per-row reader's table (the saliency signal left out when not asked
for) or leaves the batch to it; it never accepts a row the per-row reader rejects."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bulk_rows import rows, same_tables
from cover.io.jsonl_batch import decode_batch, load_batch
from cover.io.jsonl_typed import raw_windows
from test_io_jsonl_batch import as_batch, slow

ODD_LINES = [b"not json", b"[1, 2]", b'{"qid": NaN}', b'{"qid": 9, "vid": "v"}',
             b'{"qid": 9, "vid": "v", "pred_saliency_scores": [1e400]}',
             b'{"qid": 9, "vid": "v", "pred_relevant_windows": [[0, 1e400, 1]]}']


def typed(batch: list[tuple[int, bytes]], signal: bool):
    return decode_batch("p.jsonl", batch, clip=2.0, keep_records=False, signal=signal)


def check_same(batch: list[tuple[int, bytes]], signal: bool) -> bool:
    """The typed table is the per-row reader's, or the batch was left to it; True when
    the typed decode took the batch."""
    fast = typed(batch, signal)
    if fast is None:
        return False
    ref = slow(batch)
    assert ref.problems == [] and ref.rejected == {}  # never accepts a rejected row
    skip = ("records",) if signal else ("records", "relevance")
    same_tables(fast.loaded.table, ref.table, skip=skip)
    if not signal:  # the signal is checked, not read
        assert fast.loaded.table.relevance.values.size == 0
        assert (fast.loaded.table.relevance.lengths == 0).all()
    assert fast.lines == [ln for _, ln in batch]
    return True


@settings(max_examples=60)
@given(st.lists(rows(clean=False), min_size=1, max_size=8),
       st.lists(st.sampled_from(ODD_LINES), max_size=1), st.booleans())
def test_typed_read_equals_the_per_row_reader_or_defers_to_it(recs, extra, signal):
    check_same(as_batch(recs, extra), signal)


@settings(max_examples=40)
@given(st.lists(rows(clean=True), min_size=1, max_size=8).map(
    lambda rs: [{**r, "qid": i} for i, r in enumerate(rs)]), st.booleans())
def test_clean_rows_are_read_typed(recs, signal):
    assert check_same(as_batch(recs), signal)


# Lines as grounders write them that no dict round trip produces: exponents, blanks,
# two-number windows, empty and null lists, and what must go to the per-row reader.
_W = '"pred_relevant_windows": '
_S = '"pred_saliency_scores": '
TAKEN = [
    _W + "[[0, 1.5e1, 9E-1], [2 , 3,0.5 ]], " + _S + "[ 1e-05 , -2.5E+1, 3 ]",
    _W + "[], " + _S + "[0.5, 1]",
    _W + "null, " + _S + "null",
    _S + "[0.25]",
    _W + "[[0, 1, 0.5]]",
    _W + "[[0, 1, 0.5]], " + _S + "[" + "9" * 300 + ".5]",
    _W + '[[0, 1, 0.5]], "extra": {"a": [true, null, "x\\u00e9"]}, "query": "q"',
]
LEFT = [
    _W + "[[0, 1, 0.5]], " + _S + "[1e400]",
    _W + "[[0, 1, 0.5]], " + _S + "[" + "9" * 400 + "]",
    _W + "[[0, 1, 0.5]], " + _S + "[true]",
    _W + "[[0, 1, 0.5]], " + _S + "[[1]]",
    _W + "[[0, 1, 0.5]], " + _S + '["1"]',
    _W + "[[0, 1, 0.5]], " + _S + "[null]",
    _W + "[[0, 1, 0.5]], " + _S + "5",
    _W + "[[0, 1e400, 0.5]]",
    _W + "[[0, 1, 0.5], [0, 1]]",
    _W + "[[0, 1, 0.5, 1]]",
    _W + "[[0, 1, true]]",
    _W + '[[0, 1, "0.5"]]',
    _W + "[[[0], 1, 0.5]]",
    _W + "[0, 1, 0.5]",
    _W + "{}",
    '"duration": true, ' + _W + "[[0, 1, 0.5]]",
    '"duration": 1e400, ' + _W + "[[0, 1, 0.5]]",
]


def line(i: int, body: str) -> bytes:
    return f'{{"qid": {i}, "vid": "v{i % 2}", {body}}}'.encode()


@pytest.mark.parametrize("signal", [True, False])
@pytest.mark.parametrize("body", TAKEN)
def test_plain_writing_variants_are_taken(body, signal):
    batch = [(i + 1, line(i, b)) for i, b in enumerate([body, *TAKEN])]
    assert check_same(batch, signal)


@pytest.mark.parametrize("signal", [True, False])
@pytest.mark.parametrize("body", LEFT)
def test_doubtful_rows_leave_the_batch_to_the_per_row_reader(body, signal):
    batch = [(i + 1, line(i, b)) for i, b in enumerate([*TAKEN, body])]
    assert typed(batch, signal) is None
    got = load_batch("p.jsonl", batch, on_error="reject", keep_records=False, signal=signal)
    assert not got.fast
    assert got.loaded.problems == slow(batch).problems


@pytest.mark.parametrize("signal", [True, False])
@pytest.mark.parametrize("windows", ["[7]", "[ -1.5e2 ]"])
def test_a_list_of_one_number_is_no_empty_window_list(windows, signal):
    """``[7]`` has the skeleton of ``[]`` once its number is dropped: the per-row reader
    rejects it, so the typed decode must leave the batch to it."""
    batch = [(1, line(0, _W + "[[0, 1, 0.5]]")), (2, line(1, _W + windows)),
             (3, line(2, _W + "[]"))]
    assert typed(batch, signal) is None
    got = load_batch("p.jsonl", batch, on_error="reject", keep_records=False, signal=signal)
    assert [(p.line, p.action) for p in got.loaded.problems] == [(2, "rejected")]
    assert got.loaded.problems == slow(batch).problems


@pytest.mark.parametrize("signal", [True, False])
def test_windows_of_two_numbers_are_scored_by_list_order(signal):
    batch = [(1, line(0, _W + "[[0, 4], [1, 2]], " + _S + "[]")), (2, line(1, _W + "[]")),
             (3, line(2, _W + "[[5, 6]]"))]
    assert check_same(batch, signal)


def test_a_row_with_a_cover_block_is_read_typed_and_flagged():
    batch = [(1, line(0, TAKEN[0])), (2, line(1, '"cover": {"old": 1}, ' + TAKEN[1]))]
    got = typed(batch, signal=False)
    assert got is not None and got.has_cover
    assert not typed(batch[:1], signal=False).has_cover


def test_a_line_not_utf8_in_a_field_not_read_is_the_per_row_readers():
    bad = b'{"qid": 1, "vid": "v", "note": "\xff", "pred_relevant_windows": [[0, 1, 0.5]]}'
    batch = [(1, line(0, TAKEN[0])), (2, bad)]
    got = load_batch("p.jsonl", batch, on_error="reject", keep_records=False, signal=False)
    assert not got.fast
    assert [(p.line, p.action) for p in got.loaded.problems] == [(2, "rejected")]
    assert "not UTF-8" in got.loaded.problems[0].problem


def test_raw_helpers_on_their_own():
    import msgspec

    raw = msgspec.Raw
    win, per_row = raw_windows([raw(b"[[0,2,0.5],[1,3,0.9]]"), raw(b"[]"),
                                raw(b"[[4,5,1]]")])
    np.testing.assert_array_equal(per_row, [2, 0, 1])
    np.testing.assert_array_equal(win, [[0, 2, 0.5], [1, 3, 0.9], [4, 5, 1]])
    assert raw_windows([raw(b"[[0,2,0.5]]"), raw(b"[[0,2]]")]) is None


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**400, 10**400) | st.text(max_size=3)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=2), inner,
                                                                max_size=2),
    max_leaves=8)

