"""Exact rank arithmetic of split conformal (SPEC §4): ``k = ceil((n + 1)(1 - alpha))``.

The oracle is a brute-force search in rational arithmetic: the smallest integer ``k``
with ``k / (n + 1) >= 1 - alpha``, with ``alpha`` read from the decimal the user wrote.
"""

from __future__ import annotations

import math
import re
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.calibrate.quantile import (
    as_fraction,
    conformal_quantile,
    conformal_rank,
    kth_smallest,
    min_calibration_size,
)
from cover.calibrate.split import split_conformal
from cover.errors import CoverWarning

SETTINGS = settings(max_examples=200, deadline=None, derandomize=True, database=None)
N_MAX = 5000

# (what the user passes, the exact level it means)
ALPHAS = [
    (0.05, Fraction("0.05")),
    (0.1, Fraction("0.1")),
    (0.2, Fraction("0.2")),
    (0.3, Fraction("0.3")),
    (0.4, Fraction("0.4")),
    (0.5, Fraction("0.5")),
    (0.7, Fraction("0.7")),
    (0.9, Fraction("0.9")),
    (0.01, Fraction("0.01")),
    (Fraction(1, 3), Fraction(1, 3)),
    ("0.1", Fraction(1, 10)),
    ("0.05", Fraction(1, 20)),
    ("0.333", Fraction(333, 1000)),
    ("0.15", Fraction(3, 20)),
    ("1/3", Fraction(1, 3)),
    (Decimal("0.07"), Fraction(7, 100)),
]


def oracle_ranks(alpha: Fraction, n_max: int) -> list[int]:
    """Smallest k with k/(n+1) >= 1 - alpha, for n = 0..n_max, by an upward search.

    k(n) is non-decreasing in n, so each search starts at the previous answer; every
    candidate is checked with an exact Fraction comparison.
    """
    target = 1 - alpha
    out = []
    k = 0
    for n in range(n_max + 1):
        while Fraction(k, n + 1) < target:
            k += 1
        # minimality: the previous integer must fail (k = 0 is trivially minimal)
        assert k == 0 or Fraction(k - 1, n + 1) < target
        out.append(k)
    return out


@pytest.mark.parametrize(("alpha", "exact"), ALPHAS, ids=[repr(a) for a, _ in ALPHAS])
def test_conformal_rank_matches_rational_oracle_for_all_n(alpha, exact):
    assert as_fraction(alpha) == exact
    expected = oracle_ranks(exact, N_MAX)
    got = [conformal_rank(n, alpha) for n in range(N_MAX + 1)]
    mismatches = [(n, g, e) for n, (g, e) in enumerate(zip(got, expected, strict=True)) if g != e]
    assert not mismatches, mismatches[:5]


@SETTINGS
@given(digits=st.text("0123456789", min_size=1, max_size=6), n=st.integers(0, 100_000))
def test_conformal_rank_decimal_strings(digits, n):
    text = "0." + digits
    a = Fraction(text)
    if not 0 < a < 1:
        with pytest.raises(ValueError):
            conformal_rank(n, text)
        return
    # Closed-form check via integers: k = ceil(num / den) of (n + 1)(1 - a).
    k = conformal_rank(n, text)
    assert Fraction(k, n + 1) >= 1 - a
    assert Fraction(k - 1, n + 1) < 1 - a
    # A float alpha means the decimal the user wrote (<= 15 digits round-trip).
    assert conformal_rank(n, float(text)) == k


def test_naive_float_ceil_is_off_by_one_and_exact_rank_is_not():
    # (n + 1)(1 - 0.7) in floating point is 10 * 0.30000000000000004 = 3.0000000000000004.
    n, alpha = 9, 0.7
    naive = math.ceil((n + 1) * (1 - alpha))
    assert naive == 4
    assert conformal_rank(n, alpha) == 3  # 3/10 >= 3/10 exactly
    assert Fraction(3, 10) >= 1 - Fraction("0.7")
    # It is not a one-off: for alpha = 0.7 the naive rank is wrong for every n = 10m - 1.
    bad = [n for n in range(N_MAX + 1) if math.ceil((n + 1) * (1 - 0.7)) != conformal_rank(n, 0.7)]
    assert bad[:3] == [9, 19, 29] and len(bad) == 500
    # With an order statistic one too high, the threshold is a different score.
    scores = np.arange(1.0, n + 1)  # 1..9
    assert split_conformal(scores, alpha=alpha).value == 3.0
    assert kth_smallest(scores, naive) == 4.0


@pytest.mark.parametrize(("alpha", "exact"), ALPHAS, ids=[repr(a) for a, _ in ALPHAS])
def test_min_calibration_size_is_first_finite_n(alpha, exact):
    m = min_calibration_size(alpha)
    ranks = oracle_ranks(exact, m + 2)
    assert ranks[m] <= m  # finite threshold with m rows
    assert m == 0 or ranks[m - 1] > m - 1  # and not with one row fewer


@pytest.mark.parametrize(("alpha", "need"), [(0.1, 9), (0.05, 19), ("0.01", 99), (0.3, 3),
                                             (Fraction(1, 3), 2), (0.9, 1)])
def test_too_few_rows_gives_inf_and_a_warning_with_the_needed_size(alpha, need):
    assert min_calibration_size(alpha) == need
    scores = np.linspace(0.0, 1.0, need - 1)
    with pytest.warns(CoverWarning, match=rf"need at least {need}\b"):
        q, k, n = conformal_quantile(scores, alpha)
    assert (q, n) == (math.inf, need - 1) and k > n
    with pytest.warns(CoverWarning, match=rf"need at least {need}\b") as rec:
        th = split_conformal(scores, alpha=alpha)
    assert re.search(rf"\b{need - 1} calibration rows\b", str(rec[0].message))
    assert th.value == math.inf and not th.finite and th.expected_coverage == 1.0
    # Exactly enough rows: finite, no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q, k, n = conformal_quantile(np.linspace(0.0, 1.0, need), alpha)
    assert math.isfinite(q) and k <= n
    # warn=False silences it.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q, _, _ = conformal_quantile(scores, alpha, warn=False)
    assert q == math.inf


def test_empty_calibration_set():
    with pytest.warns(CoverWarning):
        q, k, n = conformal_quantile([], 0.5)
    assert (q, k, n) == (math.inf, 1, 0)


@pytest.mark.parametrize("bad", [0, 1, 0.0, 1.0, -0.1, 1.5, math.nan, math.inf, -math.inf,
                                 True, False, "abc", "", "0.1.2", "nan", "inf", "1", "0",
                                 Fraction(0), Fraction(3, 2), Decimal("NaN"), None, [0.1]])
def test_invalid_alpha_raises_value_error(bad):
    with pytest.raises(ValueError):
        as_fraction(bad)
    with pytest.raises(ValueError):
        conformal_rank(10, bad)
    with pytest.raises(ValueError):
        split_conformal([1.0, 2.0], alpha=bad)


def test_negative_n_raises():
    with pytest.raises(ValueError):
        conformal_rank(-1, 0.1)


# ---- kth_smallest ------------------------------------------------------------------------
values = st.one_of(st.floats(allow_nan=False, width=64),
                   st.integers(-3, 3).map(float))  # small ints -> many ties


@SETTINGS
@given(st.lists(values, max_size=40), st.data())
def test_kth_smallest_matches_sort(xs, data):
    k = data.draw(st.integers(-1, len(xs) + 2))
    got = kth_smallest(np.asarray(xs), k)
    if k < 1:
        assert got == -math.inf
    elif k > len(xs):
        assert got == math.inf
    else:
        assert got == np.sort(np.asarray(xs))[k - 1]


@SETTINGS
@given(st.lists(values, min_size=16, max_size=300), st.data())
def test_sampled_selection_is_exact_or_defers(xs, data):
    """The sample bracket (shrunk to 8 values so small lists exercise it) gives the exact
    k-th smallest or defers to introselect; the public result is exact either way."""
    from cover.calibrate import quantile

    s = np.asarray(xs)
    k = data.draw(st.integers(1, s.size))
    want = np.sort(s)[k - 1]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(quantile, "_SAMPLE", 8)
        mp.setattr(quantile, "SAMPLED_SELECT_MIN", 16)
        got = quantile._bracketed_select(s, k)
        assert got is None or got == want
        assert kth_smallest(s, k) == want


@pytest.mark.parametrize("order", ["random", "sorted", "reversed", "ties", "sample-trap"])
def test_sampled_selection_on_large_inputs(order):
    """Above SAMPLED_SELECT_MIN the bracketed path runs; exact for every layout, including
    one whose strided sample is all outliers (the bracket misses, introselect decides)."""
    from cover.calibrate.quantile import _SAMPLE, SAMPLED_SELECT_MIN

    rng = np.random.default_rng(7)
    n = 3 * SAMPLED_SELECT_MIN + 11
    s = rng.standard_normal(n)
    if order == "sorted":
        s.sort()
    elif order == "reversed":
        s = -np.sort(s)
    elif order == "ties":
        s = np.round(s, 1)
        s[:100] = -np.inf
    elif order == "sample-trap":
        s[:: n // _SAMPLE] = -1e9
    ref = np.sort(s)
    for k in (1, 2, n // 2, math.ceil((n + 1) * 0.9), n - 1, n):
        assert kth_smallest(s, k) == ref[k - 1]


def test_kth_smallest_rejects_nan_and_accepts_nd_input():
    with pytest.raises(ValueError):
        kth_smallest([1.0, math.nan], 1)
    assert kth_smallest(np.array([[3.0, 1.0], [2.0, 0.0]]), 2) == 1.0


@SETTINGS
@given(st.lists(values, min_size=1, max_size=60), st.sampled_from([a for a, _ in ALPHAS]))
def test_conformal_quantile_is_kth_order_statistic(xs, alpha):
    exact = as_fraction(alpha)
    n = len(xs)
    k = oracle_ranks(exact, n)[n]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverWarning)
        q, k_got, n_got = conformal_quantile(xs, alpha)
        th = split_conformal(xs, alpha=alpha)
    assert (k_got, n_got) == (k, n)
    expected = np.sort(np.asarray(xs))[k - 1] if k <= n else math.inf
    assert q == expected
    assert (th.value, th.k, th.n, th.alpha, th.rule) == (expected, k, n, exact, "split")
    assert th.expected_coverage == min(k, n + 1) / (n + 1)


@pytest.mark.parametrize("n", [20_000, 60_000])
def test_overwrite_gives_the_copying_selections_value(n: int) -> None:
    """overwrite=True gives the value of the copying selection. Below SAMPLED_SELECT_MIN
    it reorders the caller's float64 array in place (no copy); above, the sampled select
    reads it without moving it (faster than an introselect in place). Without
    overwrite the array is always left as it was."""
    import numpy as np

    from cover.calibrate.quantile import SAMPLED_SELECT_MIN, kth_smallest

    rng = np.random.default_rng(4)
    s = rng.normal(size=n)
    before = s.copy()
    k = int(0.9 * n) + 1
    want = kth_smallest(s, k)
    assert np.array_equal(s, before)
    assert kth_smallest(s, k, overwrite=True) == want == np.sort(before)[k - 1]
    assert np.array_equal(np.sort(s), np.sort(before))
    assert np.array_equal(s, before) == (n >= SAMPLED_SELECT_MIN)


@SETTINGS
@given(st.lists(st.one_of(values, st.just(math.nan)), min_size=1, max_size=40), st.data())
def test_overwrite_refuses_a_nan_anywhere_and_else_matches_sort(xs, data):
    """The in-place selection checks for NaN after selecting (NaN orders above every
    number, so only the values from rank k on are read): a NaN anywhere is still an
    error, whatever k, and any other list gives the k-th smallest. Drawn either way:
    in place, or (SAMPLED_SELECT_MIN shrunk to 16) the sampled select on lists of 16-40."""
    from cover.calibrate import quantile

    s = np.asarray(xs)
    k = data.draw(st.integers(-1, s.size + 2))
    with pytest.MonkeyPatch.context() as mp:
        if data.draw(st.booleans()):
            mp.setattr(quantile, "_SAMPLE", 8)
            mp.setattr(quantile, "SAMPLED_SELECT_MIN", 16)
        if np.isnan(s).any():
            with pytest.raises(ValueError, match="scores contain NaN"):
                kth_smallest(s.copy(), k, overwrite=True)
        else:
            want = float(np.sort(s)[k - 1]) if 1 <= k <= s.size else (
                -math.inf if k < 1 else math.inf)
            assert kth_smallest(s.copy(), k, overwrite=True) == want
