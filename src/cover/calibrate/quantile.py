"""Exact conformal rank arithmetic and the k-th smallest score.

``q = k-th smallest score, k = ceil((n + 1)(1 - alpha))`` (paper Eq. 3), computed in
integer/rational arithmetic: in floating point ``1 - 0.7`` is not ``0.3`` and a
float ``ceil`` is off by one order statistic for some ``n``. ``alpha`` is read as
the decimal the user wrote (``0.3`` means 3/10).

>>> import math
>>> math.ceil((9 + 1) * (1 - 0.7))   # float: 1 - 0.7 = 0.30000000000000004
4
>>> conformal_rank(9, 0.7)
3
>>> kth_smallest([3.0, 1.0, 2.0], conformal_rank(2, 0.5))  # k = ceil(3 * 0.5) = 2
2.0
"""

from __future__ import annotations

import functools
import math
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.data.rules import BLOCK_ROWS
from cover.errors import CoverWarning

AlphaLike = float | str | Fraction | Decimal


def as_fraction(alpha: AlphaLike) -> Fraction:
    """``alpha`` as an exact fraction in (0, 1): floats (numpy's too) by their shortest
    decimal repr, so ``0.3`` means 3/10."""
    try:
        return _as_fraction_cached(alpha)
    except TypeError:  # unhashable (a 0-d array): parse it every time
        return _as_fraction(alpha)


@functools.lru_cache(maxsize=256, typed=True)
def _as_fraction_cached(alpha: AlphaLike) -> Fraction:
    # typed: 0.1 == Fraction(0.1) in Python, but the float means 1/10, the Fraction not.
    return _as_fraction(alpha)


def _as_fraction(alpha: AlphaLike) -> Fraction:
    if isinstance(alpha, bool):
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}")
    if isinstance(alpha, np.ndarray) and alpha.ndim == 0:
        alpha = alpha.item()
    try:
        if isinstance(alpha, (float, np.floating)):
            if not math.isfinite(float(alpha)):
                raise ValueError
            # str() is the shortest decimal that round-trips in the value's own precision.
            a = Fraction(str(alpha))
        elif isinstance(alpha, (int, Fraction, Decimal, str)):
            a = Fraction(alpha)
        else:
            a = Fraction(str(alpha))
    except (ValueError, ZeroDivisionError, TypeError):
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}") from None
    if not 0 < a < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return a


def conformal_rank(n: int, alpha: AlphaLike) -> int:
    """``k = ceil((n + 1)(1 - alpha))`` exactly; may exceed ``n``."""
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    return _rank(int(n), as_fraction(alpha))


@functools.lru_cache(maxsize=1024)
def _rank(n: int, a: Fraction) -> int:
    # Exact rational arithmetic costs microseconds; studies ask for the same (n, alpha) often.
    return math.ceil((n + 1) * (1 - a))


def conformal_ranks(n: ArrayLike, alpha: AlphaLike) -> NDArray[np.int64]:
    """``k = ceil((n + 1)(1 - alpha))`` for every entry of ``n`` (same shape), in integer
    arithmetic: with ``alpha = p/q``, ``k = -((-(n + 1)(q - p)) // q)`` (no float
    rounding)."""
    a = as_fraction(alpha)
    p, q = a.numerator, a.denominator
    shape = np.shape(n)
    m = np.asarray(n, dtype=np.int64).reshape(-1)
    if m.size and m.min() < 0:
        raise ValueError(f"group sizes must be >= 0, got {int(m.min())}")
    top = int(m.max()) + 1 if m.size else 1
    if top * (q - p) < 2**62:
        return (-((-(m + 1) * (q - p)) // q)).reshape(shape)
    # Huge denominators (alpha given with many digits): Python integers, still exact.
    big = np.array([-((-(int(x) + 1) * (q - p)) // q) for x in m.tolist()], dtype=object)
    return np.minimum(big, np.iinfo(np.int64).max).astype(np.int64).reshape(shape)


def min_calibration_size(alpha: AlphaLike) -> int:
    """Smallest ``n`` with a finite threshold: ``k <= n  <=>  n >= (1 - alpha)/alpha``."""
    a = as_fraction(alpha)
    return math.ceil((1 - a) / a)


#: Below this many scores a plain introselect is as fast as sampling first.
SAMPLED_SELECT_MIN = 50_000
_SAMPLE = 4096


def kth_smallest(scores: ArrayLike, k: int, *, overwrite: bool = False) -> float:
    """The ``k``-th smallest value (1-based), exactly; ``+inf`` when ``k > n``.

    Selection by sampling (Floyd–Rivest): a sorted strided sample brackets the rank
    ``k`` within a few binomial standard deviations; one counting pass and one
    filtering pass leave the few values in the bracket to select from. When the
    bracket misses (adversarial order), a full O(n) introselect decides; the value is
    the same either way. ``overwrite``: a float64 ``scores`` array may be reordered in
    place; below :data:`SAMPLED_SELECT_MIN` scores one introselect in place is then the
    cheapest (above it the sampled select reads the scores twice and moves only the
    bracket: about 5x faster than an introselect in place at 1e6 and 1e7 scores)."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    n = s.size
    if overwrite and s.flags.writeable and 1 <= k <= n and n < SAMPLED_SELECT_MIN:
        s.partition(k - 1)
        # Selection orders NaN above every number, so a NaN anywhere lies at k - 1 or
        # after: the check reads the n - k + 1 values there, not all n.
        if np.isnan(s[k - 1:].max()):
            raise ValueError("scores contain NaN")
        return float(s[k - 1])
    if n and np.isnan(s.min()):  # the minimum is NaN iff a score is (no mask)
        raise ValueError("scores contain NaN")
    if k < 1:
        return -np.inf
    if k > n:
        return np.inf
    if n >= SAMPLED_SELECT_MIN:
        got = _bracketed_select(s, k)
        if got is not None:
            return got
    return float(np.partition(s, k - 1)[k - 1])


def _bracketed_select(s: NDArray[np.float64], k: int) -> float | None:
    """The k-th smallest of ``s`` when a sample bracket ``[lo, hi]`` holds it, else None:
    ``r = k - #{s < lo}`` must fall within the ``#{lo <= s <= hi}`` values kept."""
    n = s.size
    sample = np.sort(s[:: n // _SAMPLE][:_SAMPLE])
    m = sample.size
    p = (k - 0.5) / n
    spread = 4.0 * math.sqrt(p * (1.0 - p) * m) + 2.0
    lo_i, hi_i = math.floor(p * m - spread), math.ceil(p * m + spread)
    lo = sample[lo_i] if lo_i > 0 else -np.inf
    hi = sample[hi_i] if hi_i < m - 1 else np.inf
    # Block by block (cache-sized masks): #{s < lo}, and the values in [lo, hi].
    below, parts = 0, []
    width = min(n, BLOCK_ROWS)
    under, keep = np.empty(width, dtype=bool), np.empty(width, dtype=bool)
    for i in range(0, n, BLOCK_ROWS):
        x = s[i:i + BLOCK_ROWS]
        u, kp = under[:x.size], keep[:x.size]
        np.less(x, lo, out=u)
        below += int(np.count_nonzero(u))
        np.less_equal(x, hi, out=kp)
        np.greater(kp, u, out=kp)  # x <= hi and not x < lo
        parts.append(x[kp])
    cand = np.concatenate(parts)
    r = k - below
    if not 1 <= r <= cand.size:
        return None
    return float(np.partition(cand, r - 1)[r - 1])


def conformal_quantile(scores: ArrayLike, alpha: AlphaLike, *, warn: bool = True,
                       overwrite: bool = False) -> tuple[float, int, int]:
    """``(q, k, n)`` with ``q`` the k-th smallest of the ``n`` scores.

    When ``k > n`` the level is unattainable with this many rows: ``q = +inf`` (every
    region is the whole video) and a :class:`CoverWarning` says how many rows it needs.
    """
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    n = int(s.size)
    k = conformal_rank(n, alpha)
    q = kth_smallest(s, k, overwrite=overwrite)
    if k > n and warn:
        warnings.warn(
            f"alpha={alpha}: {n} calibration rows are too few for a finite threshold "
            f"(need at least {min_calibration_size(alpha)}); every region is the whole video",
            CoverWarning,
            stacklevel=2,
        )
    return q, k, n
