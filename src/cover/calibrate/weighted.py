"""Weighted split conformal under covariate shift (Tibshirani et al. 2019; SPEC §4 (b)).

With likelihood ratios ``w(x) = dP_test/dP_cal (x)``, the threshold of a test row ``x`` is
the ``1 - alpha`` quantile of ``sum_i p_i(x) delta_{S_i} + p_{n+1}(x) delta_{+inf}``,
``p_i = w(X_i)/(W + w(x))``, ``p_{n+1} = w(x)/(W + w(x))``, ``W = sum_i w(X_i)``:

    ``q(x) = smallest S_(j) with  C_j >= (1 - alpha)(W + w(x))``,  ``C_j`` = cumulative
    weight of the ``j`` smallest scores; ``+inf`` when no ``j`` qualifies.

All test rows at once: one sort of the calibration scores, one cumulative sum, one
``searchsorted``. ``1 - alpha`` enters as the exact fraction ``(q - p)/q``, so equal
integer weights reproduce split conformal exactly.

The threshold is finite iff ``n_eff(x) = W / w(x) >= (1 - alpha)/alpha``: a test row whose
own weight outweighs what the calibration data can balance is *unsupported*
(positivity fails; its region is the whole video). :class:`PositivityReport` names those
rows, with the Kish effective sample size ``W^2 / sum w_i^2`` of the calibration weights.
Ratios are given per row, or estimated from a covariate (duration, predicted length) by
a logistic regression of "test vs calibration" (:mod:`cover.calibrate.ratio`).

>>> import numpy as np
>>> th = weighted_conformal(np.arange(1.0, 10.0), np.ones(9), [1.0, 0.5, 2.0], alpha=0.1)
>>> th.values.tolist()   # unit weight = split conformal (k = 9); heavier test rows need more
[9.0, 9.0, inf]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover._json import to_json_number
from cover.calibrate.quantile import AlphaLike, as_fraction
from cover.calibrate.ratio import LogisticRatio, fit_logistic_ratio

MAX_NAMED_ROWS = 20


def check_weights(weights: ArrayLike, *, what: str, allow_all_zero: bool = False
                  ) -> NDArray[np.float64]:
    """``weights`` as a float array, or a clear ``ValueError`` naming the first bad row
    (1-based) when one is negative, NaN or infinite, or when all are zero."""
    try:
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise ValueError(f"{what} weights must be numbers") from None
    for bad, why in ((np.isnan(w), "NaN"), (np.isinf(w), "infinite"), (w < 0, "negative")):
        rows = np.flatnonzero(bad)
        if rows.size:
            raise ValueError(f"{what} weights: row {int(rows[0]) + 1} is {why} "
                             f"({float(w[rows[0]])!r}; {rows.size} such row(s)); likelihood "
                             "ratios must be finite and >= 0")
    if w.size and not allow_all_zero and not (w > 0).any():
        raise ValueError(f"{what} weights are all zero: no calibration row carries weight, "
                         "so no threshold can be calibrated")
    if w.size == 0 and not allow_all_zero:
        raise ValueError(f"no {what} weights (no calibration rows)")
    return w


@dataclass(frozen=True)
class PositivityReport:
    """Which test rows the calibration data supports under the given weights.

    ``n_eff[j] = W / w(x_j)`` (calibration weight in units of row ``j``'s own weight;
    ``inf`` when ``w(x_j) = 0``); row ``j`` is ``unsupported`` when
    ``n_eff[j] < (1 - alpha)/alpha`` (infinite threshold). ``outside`` marks rows whose
    covariate lies outside the calibration range (an extrapolated ratio), when known.
    """

    alpha: Fraction
    n_calibration: int
    ess: float
    n_eff: NDArray[np.float64]
    unsupported: NDArray[np.bool_]
    outside: NDArray[np.bool_] | None = None

    def lines(self, names: Sequence[str] | NDArray[Any] | None = None, *,
              label: str = "qid") -> list[str]:
        """Human-readable summary; ``names`` (``label``: qid, vid) name the rows, else
        1-based row numbers."""
        m = self.unsupported.size
        out = [f"calibration: {self.n_calibration} rows, effective sample size "
               f"{self.ess:.1f} under the weights"]
        if m:
            finite = self.n_eff[np.isfinite(self.n_eff)]
            if finite.size:
                out.append(f"test rows: {m}; n_eff = W/w(x) median {np.median(finite):.1f}, "
                           f"min {finite.min():.1f} (needs >= "
                           f"{float((1 - self.alpha) / self.alpha):.3g} for a finite threshold)")
        for mask, what in ((self.unsupported, "unsupported (positivity fails: threshold "
                            "+inf, whole video)"),
                           (self.outside, "outside the calibration covariate range")):
            if mask is None or not mask.any():
                continue
            rows = np.flatnonzero(mask)
            shown = [str(names[int(i)]) if names is not None else str(i + 1)
                     for i in rows[:MAX_NAMED_ROWS]]
            what_row = label if names is not None else "row"
            more = f" and {rows.size - MAX_NAMED_ROWS} more" if rows.size > MAX_NAMED_ROWS else ""
            out.append(f"{rows.size} of {m} test rows {what}: {what_row} "
                       f"{', '.join(shown)}{more}")
        return out

    def to_dict(self, names: Sequence[str] | NDArray[Any] | None = None) -> dict[str, Any]:
        def listed(mask: NDArray[np.bool_] | None) -> list[Any] | None:
            if mask is None:
                return None
            rows = np.flatnonzero(mask)
            return [str(names[int(i)]) for i in rows] if names is not None else \
                [int(i) + 1 for i in rows]

        finite = self.n_eff[np.isfinite(self.n_eff)]
        return {"n_calibration": self.n_calibration, "ess": self.ess,
                "n_test": int(self.unsupported.size),
                "min_n_eff": to_json_number(float(finite.min())) if finite.size else None,
                "unsupported": listed(self.unsupported), "outside_range": listed(self.outside)}


@dataclass(frozen=True)
class WeightedThresholds:
    """One threshold per test row (``values``) and the positivity report behind them."""

    alpha: Fraction
    values: NDArray[np.float64]
    test_mass: NDArray[np.float64]
    report: PositivityReport


def weighted_conformal(
    cal_scores: ArrayLike,
    cal_weights: ArrayLike,
    test_weights: ArrayLike,
    *,
    alpha: AlphaLike,
    test_covariate: ArrayLike | None = None,
    cal_covariate: ArrayLike | None = None,
) -> WeightedThresholds:
    """``q(x) = smallest S_(j) with C_j >= (1 - alpha)(W + w(x))`` for every test row (see
    the module docstring); ``+inf`` where the calibration data cannot support ``x``.

    ``cal_weights`` are ``w(X_i)`` of the calibration rows, ``test_weights`` ``w(x)`` of
    the test rows (likelihood ratios up to one common factor). Given both covariates, the
    report also marks test rows outside the calibration covariate range.
    """
    a = as_fraction(alpha)
    p, q = a.numerator, a.denominator
    s = np.asarray(cal_scores, dtype=np.float64).reshape(-1)
    if np.isnan(s).any():
        raise ValueError("calibration scores contain NaN")
    w = check_weights(cal_weights, what="calibration")
    if w.size != s.size:
        raise ValueError(f"{s.size} calibration scores but {w.size} calibration weights")
    wt = check_weights(test_weights, what="test", allow_all_zero=True)
    order = np.argsort(s, kind="stable")
    s_sorted = s[order]
    cum = np.cumsum(w[order])
    total = float(cum[-1])
    # C_j >= (1 - alpha)(W + w)  <=>  q C_j >= (q - p)(W + w): exact for integer weights.
    j = np.searchsorted(cum * q, (q - p) * (total + wt), side="left")
    values = np.where(j < s.size, s_sorted[np.minimum(j, s.size - 1)], np.inf)
    with np.errstate(divide="ignore", over="ignore"):
        n_eff = np.where(wt > 0, total / wt, np.inf)
    outside = None
    if test_covariate is not None and cal_covariate is not None:
        cx = np.asarray(cal_covariate, dtype=np.float64)
        tx = np.asarray(test_covariate, dtype=np.float64).reshape(-1)
        outside = (tx < np.nanmin(cx)) | (tx > np.nanmax(cx))
    u = w / w.max()  # the Kish ESS is scale-free; rescaled so tiny weights cannot underflow
    report = PositivityReport(a, int(s.size), float(u.sum() ** 2 / np.sum(u**2)), n_eff,
                              j >= s.size, outside)
    return WeightedThresholds(a, values.astype(np.float64), wt / (total + wt), report)


def weighted_from_covariate(
    cal_scores: ArrayLike,
    cal_covariate: ArrayLike,
    test_covariate: ArrayLike,
    *,
    alpha: AlphaLike,
    degree: int = 1,
    log: bool = False,
) -> tuple[WeightedThresholds, LogisticRatio]:
    """Weighted split conformal with ratios estimated from one covariate (duration,
    predicted length) by :func:`cover.calibrate.ratio.fit_logistic_ratio`; returns the
    thresholds and the fitted ratio model."""
    ratio = fit_logistic_ratio(cal_covariate, test_covariate, degree=degree, log=log)
    th = weighted_conformal(cal_scores, ratio(cal_covariate), ratio(test_covariate),
                            alpha=alpha, test_covariate=test_covariate,
                            cal_covariate=cal_covariate)
    return th, ratio
