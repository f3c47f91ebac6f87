"""Online adaptive conformal inference (ACI; Gibbs & Candès 2021) for a labelled stream.

After each labelled outcome the working level moves toward the target:
``alpha_{t+1} = alpha_t + gamma (alpha - err_t)``, ``err_t = 1[truth not in region_t]``,
and step ``t`` certifies at ``q_t = k_t-th smallest calibration score``,
``k_t = ceil((n + 1)(1 - alpha_t))`` (``-inf`` when ``k_t <= 0``, ``+inf`` when ``k_t > n``).
For any stream whatsoever, with finite scores, the long-run miss rate obeys
``|mean(err_1..T) - alpha| <= (max(alpha, 1 - alpha) + gamma) / (gamma T)`` (their Prop. 4.1).

Arithmetic is exact: ``alpha_t = alpha + gamma((t - 1) alpha - M_{t-1})`` (``M`` = misses so
far) with ``alpha``, ``gamma`` read as the decimals written, so ``k_t`` is an integer
formula in ``(t, M)``. :func:`aci_replay` precomputes, for every step at once, the largest
miss count ``m*_t`` at which step ``t`` would miss (``err_t = 1[M_{t-1} <= m*_t]``, from
each score's rank among the sorted calibration scores); only that integer comparison is
sequential. :class:`OnlineCalibrator` is the same rule as a stream API.

>>> cal = OnlineCalibrator([1.0, 2.0, 3.0, 4.0], alpha=0.2, gamma=0.1)
>>> cal.threshold, cal.update(covered=False), cal.threshold  # k = 4, then ceil(4.4) = 5 > n
(4.0, 0.12, inf)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.calibrate.quantile import AlphaLike, as_fraction
from cover.data.table import GroundingTable
from cover.regions import Regions, build_regions
from cover.scores import DEFAULT_MIN_SCALE, check_family, compute_scores

#: Gibbs & Candès' step size in their experiments.
DEFAULT_GAMMA = "0.005"


def as_gamma(gamma: AlphaLike) -> Fraction:
    """The step size as an exact fraction ``> 0`` (decimals read as written)."""
    try:
        return as_fraction(gamma)
    except ValueError:
        raise ValueError(f"gamma must be a number in (0, 1), got {gamma!r}") from None


@dataclass(frozen=True)
class _Lattice:
    """``alpha_t = (a + b (t - 1) - c M) / D`` and ``k_t = ceil((n+1)(D - a - b(t-1) + cM)/D)``
    in integers: ``D = den(alpha) den(gamma)``."""

    a: int
    b: int
    c: int
    D: int
    n: int

    @classmethod
    def of(cls, alpha: Fraction, gamma: Fraction, n: int) -> _Lattice:
        D = alpha.denominator * gamma.denominator
        return cls(alpha.numerator * gamma.denominator, gamma.numerator * alpha.numerator,
                   gamma.numerator * alpha.denominator, D, n)

    def alpha_num(self, t: Any, misses: Any) -> Any:
        """``D alpha_t`` at 1-based step ``t`` after ``misses`` misses (an integer)."""
        return self.a + self.b * (t - 1) - self.c * misses

    def rank(self, t: Any, misses: Any) -> Any:
        x = self.D - self.a - self.b * (t - 1) + self.c * misses
        return -((-(self.n + 1) * x) // self.D)


def _extended(cal_scores: ArrayLike) -> NDArray[np.float64]:
    """``[-inf, sorted scores..., +inf]`` so that ``ext[clip(k, 0, n + 1)]`` is ``q_k``."""
    s = np.asarray(cal_scores, dtype=np.float64).reshape(-1)
    if np.isnan(s).any():
        raise ValueError("calibration scores contain NaN")
    return np.concatenate(([-np.inf], np.sort(s), [np.inf]))


@dataclass(frozen=True)
class AciRecord:
    """A replayed stream, one entry per step: the level used, its rank and threshold, the
    score and whether the step missed."""

    alpha: Fraction
    gamma: Fraction
    alpha_t: NDArray[np.float64]
    k: NDArray[np.int64]
    threshold: NDArray[np.float64]
    score: NDArray[np.float64]
    miss: NDArray[np.bool_]

    @property
    def miss_rate(self) -> float:
        return float(self.miss.mean()) if self.miss.size else float("nan")

    def bound(self) -> float:
        """Gibbs & Candès' deterministic bound on ``|miss rate - alpha|`` after ``T`` steps."""
        a, g = float(self.alpha), float(self.gamma)
        return (max(a, 1 - a) + g) / (g * max(self.miss.size, 1))


def rolling_mean(x: ArrayLike, window: int) -> NDArray[np.float64]:
    """Trailing mean of the last ``min(t, window)`` values at each step (cumulative sums)."""
    v = np.asarray(x, dtype=np.float64).reshape(-1)
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    c = np.concatenate(([0.0], np.cumsum(v)))
    t = np.arange(1, v.size + 1)
    lo = np.maximum(t - window, 0)
    return (c[t] - c[lo]) / (t - lo)


def aci_replay(cal_scores: ArrayLike, stream_scores: ArrayLike, *, alpha: AlphaLike,
               gamma: AlphaLike = DEFAULT_GAMMA) -> AciRecord:
    """Replay ACI over ``stream_scores`` in order against fixed calibration scores.

    Step ``t`` misses iff ``k_t < r_t``, ``r_t`` = the smallest rank whose order statistic
    reaches ``S_t``; with ``k_t`` linear in the miss count this is ``M_{t-1} <= m*_t``,
    ``m*_t = floor((floor((r_t - 1) D / (n + 1)) - D + a + b (t - 1)) / c)``.
    """
    a, g = as_fraction(alpha), as_gamma(gamma)
    ext = _extended(cal_scores)
    n = ext.size - 2
    s = np.asarray(stream_scores, dtype=np.float64).reshape(-1)
    if np.isnan(s).any():
        bad = int(np.flatnonzero(np.isnan(s))[0])
        raise ValueError(f"stream score at step {bad + 1} is NaN")
    lat = _Lattice.of(a, g, n)
    T = s.size
    r = np.searchsorted(ext[1:-1], s, side="left").astype(np.int64) + 1
    t = np.arange(1, T + 1, dtype=np.int64)
    big = max(lat.D * (n + 2), lat.b * (T + 1), lat.a + lat.D) * 4
    ints: Any = (r, t) if big < 2**62 else (r.astype(object), t.astype(object))
    y = ((ints[0] - 1) * lat.D) // (n + 1) - lat.D + lat.a + lat.b * (ints[1] - 1)
    m_star = np.where(np.isneginf(s), -1, y // lat.c)  # a -inf score (refusal) never misses
    miss = np.zeros(T, dtype=bool)
    misses = 0
    for i, m in enumerate(m_star.tolist()):  # the recursion itself is sequential
        if misses <= m:
            miss[i] = True
            misses += 1
    before = np.concatenate(([0], np.cumsum(miss)[:-1])).astype(np.int64)
    before_i: Any = before if big < 2**62 else before.astype(object)
    k = np.asarray(lat.rank(ints[1], before_i))
    k_clip = np.clip(k, 0, n + 1).astype(np.int64)
    alpha_t = np.asarray(lat.alpha_num(ints[1], before_i), dtype=np.float64) / lat.D
    return AciRecord(a, g, alpha_t, k_clip, ext[k_clip], s, miss)


class OnlineCalibrator:
    """ACI as a stream: :meth:`certify` rows at the current level, then :meth:`update`
    with each labelled outcome (see the module docstring for the rule).

    ``cal_scores`` are the calibration scores of ``score`` (see :meth:`from_table`).
    """

    def __init__(self, cal_scores: ArrayLike, *, alpha: AlphaLike,
                 gamma: AlphaLike = DEFAULT_GAMMA, score: str = "norm",
                 min_scale: float = DEFAULT_MIN_SCALE) -> None:
        self.alpha = as_fraction(alpha)
        self.gamma = as_gamma(gamma)
        self.score = check_family(score)
        self.min_scale = min_scale
        self._ext = _extended(cal_scores)
        self._lat = _Lattice.of(self.alpha, self.gamma, self._ext.size - 2)
        self.t = 1  # the step the next certified row belongs to
        self.misses = 0

    @classmethod
    def from_table(cls, table: GroundingTable, *, alpha: AlphaLike,
                   gamma: AlphaLike = DEFAULT_GAMMA, score: str = "norm",
                   min_scale: float = DEFAULT_MIN_SCALE, target: str = "envelope"
                   ) -> OnlineCalibrator:
        """Start from the scores of a labelled calibration table."""
        s = compute_scores(table, score, min_scale=min_scale, target=target)
        return cls(s.values, alpha=alpha, gamma=gamma, score=score, min_scale=min_scale)

    @property
    def n(self) -> int:
        return int(self._ext.size - 2)

    @property
    def alpha_t(self) -> float:
        """The working level ``alpha_t`` (may leave ``(0, 1)``: then the threshold is
        ``+inf`` below 0 and ``-inf`` at or above 1)."""
        return float(Fraction(self._lat.alpha_num(self.t, self.misses), self._lat.D))

    @property
    def k(self) -> int:
        return int(self._lat.rank(self.t, self.misses))

    @property
    def threshold(self) -> float:
        return float(self._ext[min(max(self.k, 0), self.n + 1)])

    def certify(self, rows: GroundingTable) -> Regions:
        """Regions of ``rows`` at the current threshold (one step: pass one row, then
        :meth:`update` with its outcome)."""
        return build_regions(rows, self.score, self.threshold, min_scale=self.min_scale,
                             alpha=self.alpha_t)

    def update(self, covered: bool) -> float:
        """Record the outcome of the current step; returns the next ``alpha_t``."""
        if not isinstance(covered, (bool, np.bool_)):
            raise TypeError(f"covered must be True or False, got {covered!r}")
        self.misses += int(not covered)
        self.t += 1
        return self.alpha_t

    def observe(self, score: float) -> bool:
        """Update with a labelled row's score (covered iff ``score <= threshold``)."""
        covered = bool(score <= self.threshold)
        self.update(covered)
        return covered

    def __repr__(self) -> str:
        return (f"OnlineCalibrator(alpha={float(self.alpha)}, gamma={float(self.gamma)}, "
                f"n={self.n}, t={self.t}, misses={self.misses}, alpha_t={self.alpha_t:.4g})")
