"""Property tests of :class:`cover.intervals.Intervals` against per-row Python oracles.

Two kinds of inputs: endpoints on a coarse grid (so overlaps, touching components,
duplicates and zero-length components are frequent and measures are exact) and
arbitrary floats. The set-semantic oracles cut the line at every endpoint and
probe each endpoint and each elementary midpoint.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.intervals import CONTAINMENT_ATOL, Intervals

# 100 examples (not 200): each example is a batch of up to 6 rows of up to 5 components on
# a half-second grid, so touching, nested, duplicate and empty components already meet many
# times within one example; the examples are fixed (derandomize), so every run checks the same.
SETTINGS = settings(max_examples=100, deadline=None, derandomize=True, database=None)

Row = list[tuple[float, float]]

# ---- strategies --------------------------------------------------------------------------
grid_point = st.integers(0, 24).map(lambda k: k / 2)  # 0, 0.5, ..., 12
float_point = st.floats(min_value=-50.0, max_value=250.0, allow_nan=False)


def _pairs(point: st.SearchStrategy, k: int) -> st.SearchStrategy:
    return st.lists(st.tuples(point, point).map(lambda p: (min(p), max(p))),
                    min_size=k, max_size=k)


@st.composite
def interval_rows(draw, point=grid_point, max_rows=6, max_comp=5, n_rows=None):
    """Rows of components; drawn flat (row lengths, then all pairs) to keep it fast."""
    if n_rows is None:
        lengths = draw(st.lists(st.integers(0, max_comp), max_size=max_rows))
    else:
        lengths = draw(st.lists(st.integers(0, max_comp), min_size=n_rows, max_size=n_rows))
    flat = draw(_pairs(point, sum(lengths)))
    rows, pos = [], 0
    for n in lengths:
        rows.append(flat[pos : pos + n])
        pos += n
    return rows


def make(rows: list[Row]) -> Intervals:
    return Intervals.from_lists([[list(c) for c in r] for r in rows])


def merge_oracle(row: Row) -> Row:
    """The textbook sort-and-sweep merge (closed intervals: touching ones merge)."""
    out: list[list[float]] = []
    for s, e in sorted(row):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return [(s, e) for s, e in out]


def member(x: float, row: Row) -> bool:
    return any(s <= x <= e for s, e in row)


def probes(*rows: Row) -> list[float]:
    """Every endpoint and the midpoint of every elementary gap between endpoints."""
    pts = sorted({p for r in rows for c in r for p in c})
    mids = [(a + b) / 2 for a, b in itertools.pairwise(pts)]
    return pts + mids


def elementary_measure(pred, *rows: Row) -> float:
    """Measure of ``{x : pred(member(x, row) for row in rows)}`` by an endpoint sweep."""
    pts = sorted({p for r in rows for c in r for p in c})
    total = 0.0
    for a, b in itertools.pairwise(pts):
        m = (a + b) / 2
        if pred(*(member(m, r) for r in rows)):
            total += b - a
    return total


def is_normalized(iv: Intervals) -> bool:
    for i in range(len(iv)):
        row = iv.row(i)
        if any(s > e for s, e in row):
            return False
        if any(row[j + 1][0] <= row[j][1] for j in range(len(row) - 1)):
            return False  # unsorted, overlapping or touching
    return True


# ---- construction and views --------------------------------------------------------------
@SETTINGS
@given(interval_rows(float_point), st.data())
def test_views_envelope_and_take_match_loops(rows, data):
    iv = make(rows)
    assert len(iv) == len(rows)
    assert iv.n_components.tolist() == [len(r) for r in rows]
    assert iv.rows.tolist() == [i for i, r in enumerate(rows) for _ in r]
    assert iv.to_lists() == [[list(c) for c in r] for r in rows]
    for i, r in enumerate(rows):
        assert iv.row(i) == [list(c) for c in r]
    assert iv.any_component().tolist() == [bool(r) for r in rows]
    # envelope: earliest start / latest end, NaN for rows without components
    lo, hi = iv.envelope()
    for i, r in enumerate(rows):
        if r:
            assert lo[i] == min(s for s, _ in r)
            assert hi[i] == max(e for _, e in r)
        else:
            assert math.isnan(lo[i]) and math.isnan(hi[i])
    # take: rows in the given order, repeats allowed
    sel = data.draw(st.lists(st.integers(0, len(rows) - 1), max_size=10)) if rows else []
    got = iv.take(sel)
    assert len(got) == len(sel)
    assert got.to_lists() == [[list(c) for c in rows[i]] for i in sel]


def test_empty_and_single_constructors():
    e = Intervals.empty(3)
    assert len(e) == 3 and e.n_components.tolist() == [0, 0, 0]
    assert e.length().tolist() == [0.0, 0.0, 0.0]
    assert e.normalized().to_lists() == [[], [], []]
    s = Intervals.single([1.0, 2.0], [3.0, 2.0])
    assert s.to_lists() == [[[1.0, 3.0]], [[2.0, 2.0]]]


# ---- normalized --------------------------------------------------------------------------
@SETTINGS
@given(interval_rows(grid_point))
def test_normalized_grid_matches_merge_oracle(rows):
    raw = make(rows)
    norm = raw.normalized()
    assert len(norm) == len(rows)
    assert is_normalized(norm)
    for i, r in enumerate(rows):
        got = [tuple(c) for c in norm.row(i)]
        assert got == merge_oracle(r)
        # Same set: every probe point is in the union iff it is in the result.
        for x in probes(r):
            assert member(x, got) == member(x, r)
        # Same measure as the brute-force sweep; length() of a normalized set is exact.
        assert norm.length()[i] == pytest.approx(elementary_measure(lambda a: a, r), abs=1e-12)
        # On the raw (possibly overlapping) set, length() is the plain sum.
        assert raw.length()[i] == pytest.approx(sum(e - s for s, e in r), abs=1e-12)


@SETTINGS
@given(interval_rows(float_point, max_rows=8, max_comp=7))
def test_normalized_floats_matches_merge_oracle(rows):
    norm = make(rows).normalized()
    assert is_normalized(norm)
    for i, r in enumerate(rows):
        assert [tuple(c) for c in norm.row(i)] == merge_oracle(r)
    # Idempotent.
    assert norm.normalized().to_lists() == norm.to_lists()
    # IoU with itself: 1, or 0 when the row has no positive measure.
    np.testing.assert_allclose(norm.iou(norm), np.where(norm.length() > 0, 1.0, 0.0),
                               rtol=1e-12)


@SETTINGS
@given(interval_rows(grid_point), st.randoms(use_true_random=False))
def test_normalized_ignores_component_order(rows, rnd):
    shuffled = [rnd.sample(r, len(r)) for r in rows]
    assert make(shuffled).normalized().to_lists() == make(rows).normalized().to_lists()


def test_normalized_does_not_carry_ends_across_rows():
    # Row 0's large end must not swallow row 1's components.
    iv = Intervals.from_lists([[[0.0, 100.0]], [[1.0, 2.0], [3.0, 4.0]], [], [[5.0, 5.0]]])
    assert iv.normalized().to_lists() == [[[0.0, 100.0]], [[1.0, 2.0], [3.0, 4.0]], [],
                                          [[5.0, 5.0]]]


def test_normalized_merges_touching_and_nested():
    iv = Intervals.from_lists([[[3.0, 4.0], [0.0, 1.0], [1.0, 2.0], [0.5, 0.7], [2.5, 2.5]]])
    assert iv.normalized().to_lists() == [[[0.0, 2.0], [2.5, 2.5], [3.0, 4.0]]]


# ---- clip --------------------------------------------------------------------------------
@st.composite
def rows_with_bounds(draw, point=grid_point):
    rows = draw(interval_rows(point))
    lo = draw(st.lists(point, min_size=len(rows), max_size=len(rows)))
    hi = draw(st.lists(point, min_size=len(rows), max_size=len(rows)))
    return rows, lo, hi


@SETTINGS
@given(rows_with_bounds(float_point))
def test_clip_matches_loop(data):
    rows, lo, hi = data
    got = make(rows).clip(np.asarray(lo), np.asarray(hi))
    assert len(got) == len(rows)
    for i, r in enumerate(rows):
        expected = []
        for s, e in r:
            s2, e2 = max(s, lo[i]), min(e, hi[i])
            if s2 <= e2:
                expected.append([s2, e2])
        assert got.row(i) == expected


@SETTINGS
@given(interval_rows(grid_point), grid_point, grid_point)
def test_clip_scalar_bounds_is_set_intersection(rows, a, b):
    lo, hi = min(a, b), max(a, b)
    got = make(rows).clip(lo, hi).normalized()
    for i, r in enumerate(rows):
        g = [tuple(c) for c in got.row(i)]
        for x in probes(r, [(lo, hi)]):
            assert member(x, g) == (member(x, r) and lo <= x <= hi)


# ---- contains ----------------------------------------------------------------------------
@st.composite
def pair_of_rows(draw, point=grid_point, max_rows=6):
    n = draw(st.integers(0, max_rows))
    a = draw(interval_rows(point, max_comp=5, n_rows=n))
    b = draw(interval_rows(point, max_comp=4, n_rows=n))
    return a, b


@SETTINGS
@given(pair_of_rows(grid_point))
def test_contains_is_set_inclusion(data):
    a_rows, b_rows = data
    a = make(a_rows).normalized()
    b = make(b_rows)
    got = a.contains(b, atol=0.0)
    assert got.dtype == np.bool_ and got.shape == (len(a_rows),)
    for i in range(len(a_rows)):
        # b ⊆ a as sets (probing every endpoint and elementary midpoint).
        expected = all(member(x, a_rows[i]) for x in probes(a_rows[i], b_rows[i])
                       if member(x, b_rows[i]))
        assert got[i] == expected, (a_rows[i], b_rows[i])
    # Default tolerance never makes the answer stricter.
    assert (a.contains(b) | ~got).all()


@SETTINGS
@given(pair_of_rows(float_point), st.sampled_from([0.0, CONTAINMENT_ATOL, 0.5]))
def test_contains_with_tolerance_matches_loop(data, atol):
    a_rows, b_rows = data
    a = make(a_rows).normalized()
    got = a.contains(make(b_rows), atol=atol)
    for i in range(len(a_rows)):
        comps = [tuple(c) for c in a.row(i)]
        expected = True
        for s, e in b_rows[i]:
            # Slack applied to the contained component: its start + atol, end - atol.
            if not any(cs <= s + atol and ce >= e - atol for cs, ce in comps):
                expected = False
        assert got[i] == expected


def test_contains_edge_cases():
    a = Intervals.from_lists([[[0.0, 10.0]], [], [[0.0, 1.0], [2.0, 3.0]], [[5.0, 5.0]]])
    b = Intervals.from_lists([[], [], [[0.5, 2.5]], [[5.0, 5.0]]])
    # Empty truth is contained (also in an empty region); a component spanning a gap is not.
    assert a.contains(b).tolist() == [True, True, False, True]
    near = Intervals.single([10.0 + 0.5 * CONTAINMENT_ATOL], [10.0 + 0.5 * CONTAINMENT_ATOL])
    assert Intervals.single([0.0], [10.0]).contains(near).tolist() == [True]
    far = Intervals.single([10.0 + 2 * CONTAINMENT_ATOL], [10.0 + 2 * CONTAINMENT_ATOL])
    assert Intervals.single([0.0], [10.0]).contains(far).tolist() == [False]
    with pytest.raises(ValueError):
        Intervals.empty(2).contains(Intervals.empty(3))


# ---- intersection length and IoU ---------------------------------------------------------
@SETTINGS
@given(pair_of_rows(grid_point))
def test_intersection_length_and_iou_match_sweep(data):
    a_rows, b_rows = data
    a = make(a_rows).normalized()
    b = make(b_rows).normalized()
    inter = a.intersection_length(b)
    iou = a.iou(b)
    assert np.array_equal(inter, b.intersection_length(a))
    for i in range(len(a_rows)):
        ar, br = a_rows[i], b_rows[i]
        e_inter = elementary_measure(lambda x, y: x and y, ar, br)
        e_union = elementary_measure(lambda x, y: x or y, ar, br)
        assert inter[i] == pytest.approx(e_inter, abs=1e-12)
        expected_iou = e_inter / e_union if e_union > 0 else 0.0
        assert iou[i] == pytest.approx(expected_iou, abs=1e-12)
        assert 0.0 <= iou[i] <= 1.0


def test_intersection_length_row_mismatch():
    with pytest.raises(ValueError):
        Intervals.empty(1).intersection_length(Intervals.empty(2))


@SETTINGS
@given(st.lists(st.tuples(float_point, float_point, float_point, float_point), max_size=8))
def test_single_interval_fast_paths_equal_pair_expansion(quads):
    """One component per row: relate/length/from_flat take a shortcut; same numbers as the
    general pair expansion (an offsets array that is not flagged single)."""
    from cover.intervals import from_flat

    q = np.array(quads, dtype=float).reshape(-1, 4)
    n = q.shape[0]
    a = Intervals.single(np.minimum(q[:, 0], q[:, 1]), np.maximum(q[:, 0], q[:, 1]))
    b = Intervals.single(np.minimum(q[:, 2], q[:, 3]), np.maximum(q[:, 2], q[:, 3]))
    assert a.is_single and b.is_single
    ia, ib, prow = a._pairs(b)
    inside = (a.starts[ia] <= b.starts[ib] + CONTAINMENT_ATOL) & (
        a.ends[ia] >= b.ends[ib] - CONTAINMENT_ATOL)
    overlap = np.maximum(np.minimum(a.ends[ia], b.ends[ib]) - np.maximum(a.starts[ia],
                                                                          b.starts[ib]), 0.0)
    covered, inter = a.relate(b)
    np.testing.assert_array_equal(covered, np.bincount(ib, inside, minlength=n) > 0)
    np.testing.assert_array_equal(inter, np.bincount(prow, overlap, minlength=n))
    np.testing.assert_array_equal(a.length(), np.bincount(prow, a.ends - a.starts, minlength=n))
    built = from_flat(a.starts, a.ends, np.arange(n), n)
    assert built.is_single and np.array_equal(built.offsets, np.arange(n + 1))
    if n >= 2:  # a repeated row is not single, and gets bincount offsets
        rows = np.r_[0, np.arange(n - 1)]
        gen = from_flat(a.starts, a.ends, rows, n)
        assert not gen.is_single
        np.testing.assert_array_equal(gen.offsets, np.r_[0, np.cumsum(np.bincount(rows,
                                                                                 minlength=n))])


@SETTINGS
@given(interval_rows(float_point, max_rows=8), st.lists(st.integers(0, 8), max_size=4))
def test_concat_of_consecutive_views_is_the_whole(rows, cuts):
    """Rows cut into consecutive parts (views whose offsets do not start at 0, as a
    batch's are) and joined back by :meth:`Intervals.concat` are the rows, exactly."""
    whole = make(rows)
    n = len(whole)
    bounds = [0, *sorted(c for c in cuts if c <= n), n]
    parts = [Intervals(whole.starts, whole.ends, whole.offsets[a:b + 1])
             for a, b in itertools.pairwise(bounds)]
    got = Intervals.concat(parts)
    assert got.to_lists() == whole.to_lists()
    assert got.offsets[0] == 0 and got.starts.size == got.offsets[-1]
