"""Chunked sums: the same bits for every way of cutting a stream of rows into batches."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cover.metric_sums as ms
from cover.metrics import cluster_sd


def test_within_one_chunk_the_sum_is_numpys():
    x = np.random.default_rng(3).normal(size=5000)
    s = ms.ChunkedSum()
    for part in np.array_split(x, 17):
        s.add(part)
    assert s.total() == np.sum(x) and s.mean() == np.mean(x)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(0, 300), chunk=st.integers(1, 50), width=st.sampled_from([0, 3]),
       cuts=st.lists(st.integers(0, 300), max_size=10), seed=st.integers(0, 99))
def test_any_batching_gives_the_same_bits(n, chunk, width, cuts, seed):
    shape = (n,) if width == 0 else (n, width)
    x = np.random.default_rng(seed).lognormal(0, 3, size=shape)
    bounds = [0, *sorted(c for c in cuts if c <= n), n]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ms, "CHUNK", chunk)
        one, parts = ms.ChunkedSum(), ms.ChunkedSum()
        one.add(x)
        for a, b in itertools.pairwise(bounds):
            parts.add(x[a:b])
        assert np.array_equal(np.asarray(one.total()), np.asarray(parts.total()))
        assert one.n == parts.n == n
        # and it is the sum (exactly added chunk sums are at least as close as np.sum)
        assert np.allclose(one.total(), x.sum(axis=0), rtol=1e-12, atol=0)


def test_an_empty_sum_is_zero_and_its_mean_nan():
    s = ms.ChunkedSum()
    assert s.total() == 0.0 and np.isnan(s.mean())


# Units of every width and beyond ASCII: kept as UTF-8 bytes, they sort as their text.
@given(units=st.lists(st.sampled_from(["a", "b", "ab", "abc", "é", "éa", "z", "中", "bÿ",
                                       "b", "😀"]), max_size=40),
       cuts=st.lists(st.integers(0, 40), max_size=6), seed=st.integers(0, 99),
       merge=st.integers(0, 5))
def test_unit_sums_match_the_one_shot_cluster_sd(units, cuts, seed, merge):
    u = np.array(units, dtype=str)
    y = np.random.default_rng(seed).random(u.size) < 0.7
    bounds = [0, *sorted(c for c in cuts if c <= u.size), u.size]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ms, "MERGE_UNITS", merge)  # merges between batches too
        acc = ms.UnitSums()
        for a, b in itertools.pairwise(bounds):
            acc.add(u[a:b], y[a:b])
        sums, counts = acc.totals()
    keys = np.unique(u)
    assert counts.tolist() == [int((u == k).sum()) for k in keys]
    assert sums.tolist() == [int(y[u == k].sum()) for k in keys]
    got = ms.cluster_sd_of(sums, counts, u.size)
    want = cluster_sd(y.astype(np.float64), u)
    assert (np.isnan(got) and np.isnan(want)) or got == want


def test_unit_sums_merge_wider_units_into_narrower_ones(monkeypatch):
    """Merged in place by binary search: a later unit wider than every merged one (as
    UTF-8 bytes) widens the merged keys, never is cut to their width."""
    monkeypatch.setattr(ms, "MERGE_UNITS", 0)  # a merge after every batch
    acc = ms.UnitSums()
    for batch in (["b", "a"], ["abc", "b"], ["ab", "a", "zzzz"], ["é"], ["b"]):
        acc.add(np.array(batch), np.array([True, False, True][:len(batch)]))
    sums, counts = acc.totals()
    # a, ab, abc, b, zzzz, é (UTF-8 bytes sort as the text)
    assert counts.tolist() == [2, 1, 1, 3, 1, 1]
    assert sums.tolist() == [0, 1, 1, 2, 1, 1]


@settings(max_examples=60, deadline=None)
@given(units=st.lists(st.sampled_from(["a", "ab", "b", "v1", "v10", "v2", "é", "😀"]),
                      max_size=40),
       cuts=st.lists(st.integers(0, 40), max_size=6), seed=st.integers(0, 99),
       extra=st.integers(0, 3))
def test_code_unit_sums_equal_the_text_ones(units, cuts, seed, extra):
    """Units given as their rank among every unit's sorted text (some with no row at
    all): the same per-unit sums and counts, in the same order, as the text merge."""
    u = np.array(units, dtype=str)
    y = np.random.default_rng(seed).random(u.size) < 0.6
    universe = np.unique(np.append(u, [f"zz{i}" for i in range(extra)]))  # units of the truth
    codes = np.searchsorted(universe, u)
    bounds = [0, *sorted(c for c in cuts if c <= u.size), u.size]
    text, coded = ms.UnitSums(), ms.CodeUnitSums(universe.size)
    for a, b in itertools.pairwise(bounds):
        text.add(u[a:b], y[a:b])
        coded.add(codes[a:b], y[a:b])
    for got, want in zip(coded.totals(), text.totals(), strict=True):
        assert got.dtype == want.dtype == np.int64 and got.tolist() == want.tolist()
