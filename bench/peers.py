"""Optional peers (crepes, MAPIE), wrapped so they see exactly COVER's problem.

Each wrapper hands the peer the same scores COVER calibrates on and reads its
threshold or intervals back; a missing package leaves its name bound to ``None``.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

import numpy as np
from numpy.typing import NDArray

F = NDArray[np.float64]


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


try:
    from crepes import ConformalRegressor
except ImportError:  # pragma: no cover - optional
    ConformalRegressor = None

try:
    from mapie.regression import SplitConformalRegressor
    from sklearn.base import BaseEstimator, RegressorMixin

    class IdentityRegressor(RegressorMixin, BaseEstimator):
        """MAPIE only conformalizes an *estimator*; this one returns its single input
        column, so ``X`` carries the precomputed prediction and ``y`` the target."""

        def fit(self, X: Any = None, y: Any = None) -> IdentityRegressor:
            self.n_features_in_ = 1  # what MAPIE's "is it fitted?" check looks for
            return self

        def predict(self, X: Any) -> F:
            return np.asarray(X, dtype=np.float64)[:, 0]

        def __sklearn_is_fitted__(self) -> bool:
            return True

except ImportError:  # pragma: no cover - optional
    SplitConformalRegressor = None


def crepes_fit(residuals: F, sigmas: F | None = None) -> Any:
    return ConformalRegressor().fit(residuals, sigmas=sigmas)


def crepes_threshold(residuals: F, alpha: float) -> float:
    """crepes keeps |residuals|; its threshold is the half-width of an interval at 0."""
    cr = ConformalRegressor().fit(residuals)
    return float(cr.predict_int(np.zeros(1), confidence=1 - alpha)[0, 1])


def mapie_fit(y: F, alpha: float) -> Any:
    """MAPIE split conformal (prefit) on predictions 0, i.e. residuals = |y|."""
    m = SplitConformalRegressor(IdentityRegressor().fit(), confidence_level=1 - alpha,
                                prefit=True)
    return m.conformalize(np.zeros((y.size, 1)), y)


def mapie_threshold(y: F, alpha: float) -> float:
    m = mapie_fit(y, alpha)
    return float(m.predict_interval(np.zeros((1, 1)))[1][0, 1, 0])


def for_peers(scores: F) -> F:
    """crepes and MAPIE take |residual|; COVER's scores are signed (negative when the
    prediction strictly contains the truth, -inf for refusals). ``max(S, 0)`` is
    monotone, so its k-th order statistic is ``max(q, 0)``: the peers see exactly
    COVER's threshold whenever ``q >= 0`` (always, in practice)."""
    return np.maximum(scores, 0.0)
