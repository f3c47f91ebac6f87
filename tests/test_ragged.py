"""Property tests of the ragged (flat values + offsets) helpers against per-row loops."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.ragged import (
    Ragged,
    offsets_from_lengths,
    row_ids,
    segment_all,
    segment_any,
    segment_max,
    segment_min,
    segment_sum,
    take_index,
)

SETTINGS = settings(max_examples=200, deadline=None, derandomize=True, database=None)

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)
with_inf = st.one_of(finite, st.sampled_from([np.inf, -np.inf, 0.0, -0.0]))


def ragged_rows(elements: st.SearchStrategy, max_rows: int = 8, max_len: int = 6):
    """Lists of rows; empty rows are frequent (min_size=0) and so is an empty table."""
    return st.lists(st.lists(elements, min_size=0, max_size=max_len), min_size=0,
                    max_size=max_rows)


def flatten(rows: list[list]) -> tuple[np.ndarray, np.ndarray]:
    """Oracle construction of (values, offsets) by a Python loop."""
    values: list = []
    offsets = [0]
    for r in rows:
        values.extend(r)
        offsets.append(offsets[-1] + len(r))
    return np.asarray(values, dtype=np.float64), np.asarray(offsets, dtype=np.int64)


# ---- construction helpers ----------------------------------------------------------------
@SETTINGS
@given(st.lists(st.integers(0, 7), max_size=10))
def test_offsets_and_row_ids_match_loops(lengths):
    off = offsets_from_lengths(lengths)
    expected_off = [0]
    for n in lengths:
        expected_off.append(expected_off[-1] + n)
    assert off.dtype == np.int64
    assert off.tolist() == expected_off
    expected_rows = [i for i, n in enumerate(lengths) for _ in range(n)]
    assert row_ids(off).tolist() == expected_rows


# ---- segment reductions ------------------------------------------------------------------
@SETTINGS
@given(ragged_rows(finite))
def test_segment_sum_matches_loop(rows):
    values, off = flatten(rows)
    got = segment_sum(values, off)
    assert got.shape == (len(rows),)
    assert got.dtype == np.float64
    for i, r in enumerate(rows):
        expected = math.fsum(r)  # 0.0 for empty rows
        scale = sum(abs(x) for x in r)
        assert got[i] == pytest.approx(expected, rel=1e-12, abs=1e-12 * scale + 1e-300)


@SETTINGS
@given(ragged_rows(st.integers(-1000, 1000).map(float)))
def test_segment_sum_exact_on_integers(rows):
    values, off = flatten(rows)
    got = segment_sum(values, off)
    assert got.tolist() == [float(sum(r)) for r in rows]


@SETTINGS
@given(ragged_rows(with_inf), st.sampled_from([np.inf, -np.inf, np.nan, 7.5]))
def test_segment_min_max_match_loop(rows, empty):
    values, off = flatten(rows)
    mn = segment_min(values, off)
    mx = segment_max(values, off)
    mn_custom = segment_min(values, off, empty=empty)
    mx_custom = segment_max(values, off, empty=empty)
    for i, r in enumerate(rows):
        if r:
            assert mn[i] == min(r) and mn_custom[i] == min(r)
            assert mx[i] == max(r) and mx_custom[i] == max(r)
        else:
            assert mn[i] == np.inf
            assert mx[i] == -np.inf
            for got in (mn_custom[i], mx_custom[i]):
                if np.isnan(empty):
                    assert np.isnan(got)
                else:
                    assert got == empty


@SETTINGS
@given(ragged_rows(st.booleans(), max_rows=10))
def test_segment_any_all_match_loop(rows):
    values, off = flatten(rows)
    mask = values.astype(bool)
    got_any = segment_any(mask, off)
    got_all = segment_all(mask, off)
    assert got_any.dtype == np.bool_ and got_all.dtype == np.bool_
    assert got_any.tolist() == [any(r) for r in rows]  # empty -> False
    assert got_all.tolist() == [all(r) for r in rows]  # empty -> True


@pytest.mark.parametrize("n_rows", [0, 1, 4])
def test_all_empty_rows(n_rows):
    off = np.zeros(n_rows + 1, dtype=np.int64)
    v = np.empty(0)
    assert segment_sum(v, off).tolist() == [0.0] * n_rows
    assert segment_min(v, off).tolist() == [np.inf] * n_rows
    assert segment_max(v, off).tolist() == [-np.inf] * n_rows
    assert segment_any(v.astype(bool), off).tolist() == [False] * n_rows
    assert segment_all(v.astype(bool), off).tolist() == [True] * n_rows


def test_empty_rows_between_and_at_ends():
    rows = [[], [3.0, -1.0], [], [], [5.0], []]
    values, off = flatten(rows)
    assert segment_sum(values, off).tolist() == [0.0, 2.0, 0.0, 0.0, 5.0, 0.0]
    assert segment_min(values, off).tolist() == [np.inf, -1.0, np.inf, np.inf, 5.0, np.inf]
    assert segment_max(values, off).tolist() == [-np.inf, 3.0, -np.inf, -np.inf, 5.0, -np.inf]


# ---- gathering rows ----------------------------------------------------------------------
@st.composite
def rows_and_selection(draw):
    rows = draw(ragged_rows(finite, max_rows=8))
    if rows:
        sel = draw(st.lists(st.integers(0, len(rows) - 1), max_size=12))
    else:
        sel = []
    return rows, sel


@SETTINGS
@given(rows_and_selection())
def test_take_index_matches_loop(data):
    rows, sel = data
    values, off = flatten(rows)
    flat, new_off = take_index(off, np.asarray(sel, dtype=np.int64))
    # Oracle: concatenate the selected rows, in selection order (repeats allowed).
    expected_values = [x for i in sel for x in rows[i]]
    expected_off = [0]
    for i in sel:
        expected_off.append(expected_off[-1] + len(rows[i]))
    assert new_off.tolist() == expected_off
    assert values[flat].tolist() == expected_values


@SETTINGS
@given(rows_and_selection())
def test_ragged_from_lists_and_take_match_loop(data):
    rows, sel = data
    full = Ragged.from_lists(rows)
    assert len(full) == len(rows)
    assert full.lengths.tolist() == [len(r) for r in rows]
    for i, r in enumerate(rows):
        assert full.row(i).tolist() == r
    rg = full.take(np.asarray(sel, dtype=np.int64))
    assert len(rg) == len(sel)
    for j, i in enumerate(sel):
        assert rg.row(j).tolist() == rows[i]


@SETTINGS
@given(ragged_rows(finite, max_rows=8), st.integers(0, 3))
def test_take_index_of_every_row_in_order_matches_loop(rows, base):
    """Every row in order (no gather computed) equals the general path, whatever the
    first offset."""
    values, off = flatten(rows)
    padded = np.concatenate([np.full(base, np.nan), values])
    flat, new_off = take_index(off + base, np.arange(len(rows), dtype=np.int64))
    assert new_off.dtype == np.int64 and new_off.tolist() == off.tolist()
    assert padded[flat].tolist() == [x for r in rows for x in r]


@SETTINGS
@given(ragged_rows(st.booleans(), max_rows=10), st.integers(0, 3))
def test_segment_any_with_offsets_not_from_zero(rows, base):
    values, off = flatten(rows)
    assert segment_any(values.astype(bool), off + base).tolist() == [any(r) for r in rows]


def test_segment_any_needs_one_mask_entry_per_element():
    with pytest.raises(ValueError, match="mask has 2 elements"):
        segment_any(np.zeros(2, dtype=bool), np.array([0, 3]))


def test_empty_rows_share_read_only_zero_offsets():
    """``Ragged.empty(n)``: n rows without values on a read-only view of one zero array
    (nothing filled per table); a table built without relevance uses it."""
    from cover.data.table import GroundingTable

    a, b = Ragged.empty(5), Ragged.empty(3)
    assert len(a) == 5 and len(b) == 3 and a.values.size == 0
    assert a.lengths.tolist() == [0] * 5 and not a.offsets.flags.writeable
    assert np.shares_memory(a.offsets, b.offsets)
    with pytest.raises(ValueError):
        a.offsets[0] = 1
    assert len(a.take(np.array([4, 0]))) == 2
    t = GroundingTable.from_arrays(qid=[1, 2], duration=10.0, pred_start=[1.0, 2.0],
                                   pred_end=[3.0, 4.0])
    assert not t.has_relevance.any() and not t.relevance.offsets.flags.writeable
