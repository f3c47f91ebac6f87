"""Numbers read from raw JSON lists: each reader takes exactly what its rule takes,
with the numbers of the values, whether they are read by numpy from plain digits or by
one msgspec decode."""

from __future__ import annotations

import json

import msgspec
import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cover.io.raw_numbers import flat_numbers, int_lists, number_rows, raw_number_lists
from test_io_jsonl_typed import _JSON_VALUES

_LABEL_VALUES = st.one_of(
    st.lists(st.integers(0, 10**18) | st.integers(-3, 3), max_size=5),  # clip indices
    st.lists(st.lists(st.integers(-10**310, 10**310) | st.floats(allow_nan=False)
                      | st.booleans(), min_size=2, max_size=4), max_size=4),  # score rows
    _JSON_VALUES)


def _written(values, spaced):
    sep = (", ", ": ") if spaced else (",", ":")
    return [msgspec.Raw(json.dumps(v, separators=sep).encode()) for v in values]


@settings(max_examples=300, deadline=None)
@given(values=st.lists(_LABEL_VALUES, min_size=1, max_size=6), spaced=st.booleans())
@example(values=[[7], []], spaced=False)  # "[7]" has the skeleton of "[]"
@example(values=[[10**18 - 1], [0, 3]], spaced=True)
@example(values=[[[1, 2.5, 3], [0, -0.0, 4e-7]], []], spaced=True)
@example(values=[[[1, 2, 3]], [7]], spaced=False)
def test_raw_label_readers_take_exactly_what_the_rule_takes(values, spaced):
    """Highlight labels read from raw bytes: clip indices (:func:`int_lists`) are taken
    exactly when every value is a list of integers in ``[0, 10**18)``, score rows
    (:func:`number_rows`) exactly when msgspec's typed decode of three-number rows takes
    them; the numbers and counts are those of the values."""
    raws = _written(values, spaced)
    plain = all(type(v) is list and all(type(i) is int and 0 <= i < 10**18 for i in v)
                for v in values)
    got = int_lists(raws)
    assert (got is not None) == plain
    if got is not None:
        np.testing.assert_array_equal(got[1], [len(v) for v in values])
        np.testing.assert_array_equal(got[0], [float(i) for v in values for i in v])
    try:
        want = msgspec.json.Decoder(list[list[tuple[float, float, float]]]).decode(
            b"[" + b",".join(raws) + b"]")
    except (msgspec.DecodeError, msgspec.ValidationError):
        want = None
    rows = number_rows(raws, 3)
    assert (rows is None) == (want is None)
    if rows is not None and want is not None:
        np.testing.assert_array_equal(rows[1], [len(v) for v in want])
        np.testing.assert_array_equal(rows[0].reshape(-1, 3),
                                      np.array([r for v in want for r in v]).reshape(-1, 3))


_NUMBER_LISTS = st.lists(st.lists(
    st.integers(0, 10**20) | st.integers(-5, 5) | st.floats(allow_nan=False,
                                                             allow_infinity=False),
    min_size=1, max_size=5), min_size=1, max_size=5)


@settings(max_examples=300, deadline=None)
@given(values=_NUMBER_LISTS | st.lists(st.lists(st.integers(0, 10**19), min_size=1,
                                                max_size=5), min_size=1, max_size=5),
       nested=st.booleans(), spaced=st.booleans())
@example(values=[[0, 7, 10**18 - 1]], nested=False, spaced=True)  # digits, read by numpy
@example(values=[[10**18, 3]], nested=True, spaced=False)  # 19 digits: msgspec reads them
def test_flat_numbers_are_msgspecs_floats_in_order(values, nested, spaced):
    """Plain digits (read by numpy over the bytes) and every other number (msgspec) give
    exactly msgspec's floats of the values, in list order; a number beyond float range
    gives None."""
    flat = [x for v in values for x in v]
    raws = _written([[[x] for x in v] for v in values] if nested else values, spaced)
    try:
        want = msgspec.json.Decoder(list[float]).decode(json.dumps(flat).encode())
    except msgspec.ValidationError:
        want = None
    got = flat_numbers(raws)
    if want is None:
        assert got is None
    else:
        assert got is not None and got.tolist() == want
        assert np.array_equal(np.signbit(got), np.signbit(want))


def test_raw_number_lists_on_its_own():
    raw = msgspec.Raw
    assert raw_number_lists([raw(b"[1, 2.5]"), raw(b"[]"), raw(b"null")])
    assert not raw_number_lists([raw(b"[1, 2.5]"), raw(b'["a"]')])


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.one_of(
    st.lists(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-10**9, 10**9),
             max_size=6), _JSON_VALUES), min_size=1, max_size=6),
       spaced=st.booleans())
@example(values=[[[1]], 5], spaced=False)  # as many "[" as values, one of them bare
@example(values=[5, [[1]]], spaced=False)
@example(values=[[1, 10**309]], spaced=False)  # a run of 310 digits: past float range
def test_raw_number_lists_says_what_a_typed_decode_says(values, spaced):
    """The byte-class test of raw saliency lists agrees with msgspec's typed decode of
    ``list[list[float] | None]`` on any JSON values, nested lists, a bare number beside a
    nested list, exponents and integers past float range included."""
    import json

    import msgspec

    texts = [json.dumps(v, separators=(", ", ": ") if spaced else (",", ":")).encode()
             for v in values]
    try:
        msgspec.json.Decoder(list[list[float] | None]).decode(b"[" + b",".join(texts) + b"]")
        want = True
    except (msgspec.DecodeError, msgspec.ValidationError):
        want = False
    assert raw_number_lists([msgspec.Raw(t) for t in texts]) == want
