"""The Learn-then-Test selection behind ``rule="ltt"`` (:mod:`cover.calibrate.ltt`, whose
docstring states the configurations ``(lam, c)`` and the two risks): which thresholds are
certified for each score cutoff, and the configuration chosen among them.

**Tests and the family-wise error procedure.** Each hypothesis ``R1 > alpha(1 - b)`` and
``R2 > b`` has a binomial (or Hoeffding–Bentkus, Hoeffding) p-value from the count of
calibration rows, the bounds of :mod:`cover.calibrate.rcps`. For each cutoff ``c``:

* **fixed-sequence testing along lam** for each risk: the miss family from ``lam = +inf``
  downwards (``lam1 = inf{lam : the miss test rejects at every lam' >= lam}``), the
  abstention family from ``lam = -inf`` upwards (``lam2 = sup{lam : ... lam' <= lam}``),
  each at level ``delta / (2 |C|)``, ``|C|`` the number of cutoffs tried;
* **Bonferroni** across the two risks and the cutoffs: the levels add up to ``delta``.

With probability ``>= 1 - delta`` over the calibration draw every configuration with
``lam1(c) <= lam <= lam2(c)`` has both risks controlled (monotonicity carries the bound from
``lam1`` up and from ``lam2`` down), so choosing among them is free: the rule takes the
one with the **shortest mean answered region** on the calibration rows (ties: fewer
abstentions). When no configuration passes, ``found`` is false and every query abstains.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.rcps import max_misses

#: Candidate thresholds whose mean answered length is compared (evenly spread over the
#: certified interval; its two ends are always among them).
MAX_CANDIDATES = 33


@dataclass(frozen=True)
class Selection:
    """The configuration chosen: threshold ``lam``, cutoff (None: no cutoff), whether any
    configuration passed, and per cutoff the certified interval ``[lam1, lam2]`` (None
    when empty)."""

    lam: float
    cutoff: float | None
    found: bool
    intervals: dict[float, tuple[float, float] | None]
    answered_miss: float = math.nan
    abstention: float = math.nan


def ltt_select(scores: NDArray[np.float64], x: NDArray[np.float64],
               conf: NDArray[np.float64], refused: NDArray[np.bool_], alpha: float | Fraction,
               *, delta: float, max_abstain: float, cutoffs: Sequence[float] = (),
               bound: str = "binomial",
               lengths: Callable[[float], NDArray[np.float64]] | None = None) -> Selection:
    """The LTT selection of the module docstring on calibration rows: ``scores`` ``S_i``,
    ``x`` the largest ``lam`` at which row ``i`` is within the width budget
    (:func:`budget_crossing`), ``conf`` the grounder's score, ``refused`` the rows with
    no usable prediction. ``lengths(lam)``, the per-row region length at ``lam``, ranks
    the certified thresholds (without it the smallest certified ``lam`` is taken)."""
    s = np.asarray(scores, dtype=np.float64)
    n = s.size
    levels = [-math.inf, *sorted(cutoffs)]
    d = delta / (2 * len(levels))
    m1 = max_misses(n, float(alpha) * (1 - max_abstain), d, bound)
    m2 = max_misses(n, max_abstain, d, bound)
    # Row i is an answered miss at lam iff lam < S_i and lam <= x_i, i.e. lam < e_i.
    e = np.minimum(s, np.nextafter(x, np.inf))
    finite = s[np.isfinite(s)]
    floor = float(finite.min()) if finite.size else 0.0
    found: list[tuple[float, float, float, float]] = []  # (objective, abstention, lam, c)
    intervals: dict[float, tuple[float, float] | None] = {}
    for c in levels:
        base = ~refused & (conf >= c)
        nb = int(base.sum())
        need = n - m2  # answered rows the abstention test needs at lam2
        if m1 < 0 or nb < need:
            intervals[c] = None
            continue
        eb = np.sort(e[base])
        lam1 = float(eb[nb - m1 - 1]) if nb > m1 else floor
        lam2 = math.inf if need <= 0 else float(np.sort(x[base])[nb - need])
        lam1 = max(lam1, floor) if lam1 < floor <= lam2 else lam1
        if not lam1 <= lam2:
            intervals[c] = None
            continue
        intervals[c] = (lam1, lam2)
        for lam in _candidates(lam1, lam2, s, x):
            answered = base & (x >= lam)
            abst = 1 - answered.mean()
            obj = 0.0 if lengths is None or not answered.any() else float(
                lengths(lam)[answered].mean())
            found.append((obj if lengths is not None else lam, abst, lam, c))
    if not found:
        return Selection(math.inf, None, False, intervals)
    _, abst, lam, c = min(found)
    answered = ~refused & (conf >= c) & (x >= lam)
    miss = float(((s > lam) & answered).sum() / max(int(answered.sum()), 1))
    return Selection(lam, None if c == -math.inf else c, True, intervals, miss, abst)


def _candidates(lo: float, hi: float, s: NDArray[np.float64], x: NDArray[np.float64]
                ) -> list[float]:
    """``lo``, ``hi`` and up to ``MAX_CANDIDATES`` points where the counts change between."""
    pts = np.unique(np.concatenate([s, x]))
    pts = pts[(pts > lo) & (pts < hi) & np.isfinite(pts)]
    if pts.size > MAX_CANDIDATES:
        pts = pts[np.linspace(0, pts.size - 1, MAX_CANDIDATES).round().astype(int)]
    return [lo, *pts.tolist(), *([hi] if math.isfinite(hi) and hi != lo else [])]


def budget_crossing(share_at: Callable[[NDArray[np.float64]], NDArray[np.float64]], n: int,
                    max_share: float, iterations: int = 80) -> NDArray[np.float64]:
    """Per row, the largest ``lam`` whose region covers at most ``max_share`` of the video
    (``share_at(lam per row)``, nondecreasing in ``lam``), by bisection: the value
    returned always satisfies the budget (``+inf``: never exceeds it; ``-inf``: always
    does, e.g. a refusal)."""
    if max_share >= 1:
        return np.full(n, np.inf)
    lo, hi = np.full(n, -1.0), np.full(n, 1.0)
    for _ in range(64):  # widen the bracket: lo within the budget, hi beyond it
        low_out = share_at(lo) > max_share
        high_in = share_at(hi) <= max_share
        if not (low_out.any() or high_in.any()):
            break
        lo[low_out] *= 2
        hi[high_in] *= 2
    never = share_at(hi) <= max_share
    always = share_at(lo) > max_share
    for _ in range(iterations):
        mid = lo + (hi - lo) / 2
        ok = share_at(mid) <= max_share
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
    lo[never] = np.inf
    lo[always] = -np.inf
    return lo
