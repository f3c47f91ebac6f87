"""Likelihood ratios ``w(x) = dP_test/dP_cal (x)`` estimated from one covariate.

A logistic regression of the domain label (1 = test, 0 = calibration) on polynomial
features of the standardised covariate ``z`` gives the odds ``P(test|x)/P(cal|x)``; by
Bayes, ``w(x) = odds(x) * n_cal / n_test`` (Tibshirani et al. 2019, §4). Fitted with
numpy (damped Newton on the ridge-penalised mean log-loss); no scikit-learn.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> r = fit_logistic_ratio(rng.normal(0, 1, 4000), rng.normal(1, 1, 4000))
>>> round(float(r([0.5])[0]), 1)    # true ratio exp(x - 1/2) = 1 at x = 1/2
1.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: Logits are clipped here so an extreme covariate gives a huge, finite weight.
MAX_LOGIT = 600.0


@dataclass(frozen=True)
class LogisticRatio:
    """``w(x) = exp(sum_d coef[d] z^d) * n_cal / n_test``, ``z = (f(x) - center)/scale``,
    ``f = log`` when ``log`` else identity. ``lo, hi``: the calibration covariate range."""

    coef: tuple[float, ...]
    center: float
    scale: float
    log: bool
    n_cal: int
    n_test: int
    lo: float
    hi: float

    @property
    def degree(self) -> int:
        return len(self.coef) - 1

    def __call__(self, x: ArrayLike) -> NDArray[np.float64]:
        return np.exp(np.clip(self.logit(x), -MAX_LOGIT, MAX_LOGIT)) * (self.n_cal / self.n_test)

    def logit(self, x: ArrayLike) -> NDArray[np.float64]:
        return _features(_standardise(x, self.log, self.center, self.scale),
                         self.degree) @ np.asarray(self.coef)

    def outside(self, x: ArrayLike) -> NDArray[np.bool_]:
        """Rows whose covariate lies outside the calibration range (extrapolated ratio)."""
        v = np.asarray(x, dtype=np.float64).reshape(-1)
        return (v < self.lo) | (v > self.hi)

    def to_dict(self) -> dict[str, Any]:
        return {"model": "logistic", "coef": list(self.coef), "center": self.center,
                "scale": self.scale, "log": self.log, "n_cal": self.n_cal,
                "n_test": self.n_test, "range": [self.lo, self.hi]}


def _transform(x: ArrayLike, log: bool) -> NDArray[np.float64]:
    v = np.asarray(x, dtype=np.float64).reshape(-1)
    if not np.isfinite(v).all():
        bad = int(np.flatnonzero(~np.isfinite(v))[0])
        raise ValueError(f"covariate row {bad + 1} is not a finite number ({v[bad]!r})")
    if log:
        if (v <= 0).any():
            bad = int(np.flatnonzero(v <= 0)[0])
            raise ValueError(f"covariate row {bad + 1} is {v[bad]:g}; a log covariate must "
                             "be > 0")
        return np.log(v)
    return v


def _standardise(x: ArrayLike, log: bool, center: float, scale: float) -> NDArray[np.float64]:
    return (_transform(x, log) - center) / scale


def _features(z: NDArray[np.float64], degree: int) -> NDArray[np.float64]:
    return np.vander(z, degree + 1, increasing=True)


def fit_logistic_ratio(cal_x: ArrayLike, test_x: ArrayLike, *, degree: int = 1,
                       log: bool = False, ridge: float = 1e-3) -> LogisticRatio:
    """Fit ``P(test | x)`` by logistic regression on ``[1, z, ..., z^degree]`` (ridge
    ``ridge * |coef[1:]|^2`` on the mean log-loss) and return the implied ratio ``w(x)``."""
    if degree < 1:
        raise ValueError(f"degree must be >= 1, got {degree}")
    c = _transform(cal_x, log)
    t = _transform(test_x, log)
    if c.size == 0 or t.size == 0:
        raise ValueError(f"estimating a likelihood ratio needs calibration and test "
                         f"covariates, got {c.size} and {t.size} rows")
    both = np.concatenate([c, t])
    center = float(both.mean())
    scale = float(both.std()) or 1.0
    X = _features((both - center) / scale, degree)
    y = np.concatenate([np.zeros(c.size), np.ones(t.size)])
    penalty = np.r_[0.0, np.full(degree, ridge)]
    beta = _newton_logistic(X, y, penalty)
    return LogisticRatio(tuple(float(b) for b in beta), center, scale, bool(log),
                         int(c.size), int(t.size), float(np.min(cal_x)), float(np.max(cal_x)))


def _newton_logistic(X: NDArray[np.float64], y: NDArray[np.float64],
                     penalty: NDArray[np.float64], max_iter: int = 100,
                     tol: float = 1e-10) -> NDArray[np.float64]:
    """Minimise ``mean(log(1 + e^eta) - y eta) + sum penalty beta^2``, ``eta = X beta``, by
    Newton steps halved until the loss decreases (strictly convex for ``penalty > 0``)."""
    m = y.size

    def loss(beta: NDArray[np.float64]) -> float:
        eta = X @ beta
        return float(np.mean(np.logaddexp(0.0, eta) - y * eta) + penalty @ beta**2)

    beta = np.zeros(X.shape[1])
    # Start at the base-rate intercept: the exact optimum when the covariate says nothing.
    beta[0] = float(np.log(y.mean() / (1 - y.mean())))
    cur = loss(beta)
    for _ in range(max_iter):
        eta = X @ beta
        prob = 0.5 * (1.0 + np.tanh(0.5 * eta))
        grad = X.T @ (prob - y) / m + 2 * penalty * beta
        hess = (X.T * (prob * (1 - prob))) @ X / m + np.diag(2 * penalty + 1e-12)
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while t > 1e-8:
            new = beta - t * step
            val = loss(new)
            if val <= cur:
                break
            t /= 2
        else:
            break
        done = cur - val <= tol * (1 + abs(cur))
        beta, cur = new, val
        if done:
            break
    if not np.isfinite(beta).all():
        raise ValueError("the likelihood-ratio model did not converge")
    return beta
