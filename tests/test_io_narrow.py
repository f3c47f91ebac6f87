"""Columns in their narrowest exact form (cover.io.narrow) give every value back."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.io.narrow import narrow_float, per_vid, sorted_find

_FLOATS = st.one_of(st.integers(-40_000, 40_000).map(float),
                    st.sampled_from([0.0, -0.0, 0.5, 127.0, 128.0, -129.0, 32767.0, 1e-7,
                                     float("nan"), float("inf"), -float("inf")]),
                    st.floats(allow_nan=True, allow_infinity=True))


@settings(max_examples=200, deadline=None)
@given(st.lists(_FLOATS, max_size=30))
def test_narrow_float_gives_every_value_back_bit_for_bit(values):
    a = np.array(values, dtype=np.float64)
    got = narrow_float(a)
    back = got.astype(np.float64)
    assert back.tobytes() == a.tobytes()  # -0.0 and NaN too
    whole = a.size and bool(np.isfinite(a).all() and (np.floor(a) == a).all()
                            and not np.signbit(a[a == 0]).any())
    if whole and -128 <= a.min() and a.max() <= 127:
        assert got.dtype == np.int8
    elif whole and -32768 <= a.min() and a.max() <= 32767:
        assert got.dtype == np.int16
    else:
        assert got.dtype in (np.float32, np.float64)


def test_whole_seconds_take_two_bytes_and_a_signed_zero_stays_a_float():
    assert narrow_float(np.array([0.0, 150.0, 2.0])).dtype == np.int16
    assert narrow_float(np.array([0.0, 100.0])).dtype == np.int8
    assert narrow_float(np.array([-0.0, 100.0])).dtype == np.float32
    assert narrow_float(np.array([0.25, 150.0])).dtype == np.float32
    assert narrow_float(np.array([0.1])).dtype == np.float64


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.sampled_from([150.0, 60.0, -0.0, 0.0])),
                max_size=30), st.integers(0, 3))
def test_per_vid_keeps_a_value_once_per_code_only_when_every_row_agrees(rows, step):
    codes = np.array([c for c, _ in rows], dtype=np.int64)
    values = np.array([v for _, v in rows], dtype=np.float64)
    got, once = per_vid(values, codes, 6, step=step + 1)
    agree = all(np.signbit(values[codes == c]).tolist() in ([], [True] * int((codes == c).sum()),
                                                            [False] * int((codes == c).sum()))
                and np.unique(values[codes == c]).size <= 1 for c in range(6))
    assert once == agree
    back = got[codes] if once else got
    assert back.tobytes() == values.tobytes()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text("abé", max_size=4), max_size=12, unique=True),
       st.lists(st.text("abé", max_size=6), max_size=12), st.booleans(), st.booleans())
def test_sorted_find_finds_exactly_the_keys_held(keys, asked, raw, shuffled):
    """A value wider than the keys is cut to their width before the search and found
    nowhere; with a sorter the keys are in any order and ``at`` is their position."""
    k = np.array(keys, dtype=str) if keys else np.zeros(0, dtype="U1")
    a = np.array(asked, dtype=str) if asked else np.zeros(0, dtype="U1")
    if raw:
        k, a = np.char.encode(k, "utf-8"), np.char.encode(a, "utf-8")
    k = np.random.default_rng(len(keys)).permutation(k) if shuffled else np.sort(k)
    at, hit = sorted_find(k, a, np.argsort(k) if shuffled else None)
    assert hit.tolist() == [v in k.tolist() for v in a.tolist()]
    assert (k[at[hit]] == a[hit]).all()
