"""Dynamically-tuned adaptive conformal inference (DtACI; Gibbs & Candès 2022,
"Conformal inference for online prediction with arbitrary distribution shifts").

ACI (:mod:`cover.calibrate.online`) needs one step size ``gamma``: small steps track
slow drift, large ones fast shifts. DtACI runs ``k`` ACI experts with step sizes
``gamma_1 < ... < gamma_k`` and weighs them by exponential weights on the pinball loss
of the level each would have needed:

* after step ``t`` with realised level ``beta_t`` (the largest level whose quantile
  still covers the score: the conformal p-value of the new score), expert ``i``'s
  loss is ``l(beta_t, a_i) = alpha (beta_t - a_i) - min(0, beta_t - a_i)``;
* weights ``w_i <- w_i exp(-eta l_i)``, then mixed with the uniform vector,
  ``w <- (1 - sigma) w + sigma sum(w) / k`` (so an expert can win back quickly);
* each expert takes its ACI step ``a_i <- a_i + gamma_i (alpha - err_i)``,
  ``err_i = 1[beta_t < a_i]``;
* the level used is the weighted mean ``alpha_t = sum_i w_i a_i / sum_i w_i``.

Every expert stays in ``[-gamma_i, 1 + gamma_i]`` (Gibbs & Candès 2021, Lemma 4.1),
so ``alpha_t`` stays in ``[-max gamma, 1 + max gamma]`` whatever the stream. ``eta`` and
``sigma`` follow the paper's choice for a local interval of ``interval`` steps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

#: The paper's grid of step sizes.
DEFAULT_GAMMAS = (0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128)


def pinball(beta: float, theta: float, alpha: float) -> float:
    """The pinball loss of level ``theta`` when ``beta`` was needed."""
    d = beta - theta
    return alpha * d - min(0.0, d)


@dataclass
class DtACI:
    """DtACI's state: experts' levels and weights (see the module docstring)."""

    alpha: float
    gammas: Sequence[float] = DEFAULT_GAMMAS
    interval: int = 500
    levels: list[float] = field(default_factory=list)
    weights: list[float] = field(default_factory=list)
    t: int = 0
    misses: int = 0

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be in (0, 1), got {self.alpha}")
        if not self.gammas or any(not 0 < g < 1 for g in self.gammas):
            raise ValueError(f"gammas must be numbers in (0, 1), got {list(self.gammas)}")
        k = len(self.gammas)
        self.levels = self.levels or [self.alpha] * k
        self.weights = self.weights or [1.0] * k

    @property
    def eta(self) -> float:
        a, k, i = self.alpha, len(self.gammas), self.interval
        return math.sqrt(3 / i) * math.sqrt((math.log(k * i) + 2)
                                            / ((1 - a) ** 2 * a ** 3 + a ** 2 * (1 - a) ** 3))

    @property
    def sigma(self) -> float:
        return 1 / (2 * self.interval)

    @property
    def alpha_t(self) -> float:
        """The level to certify the next row at."""
        total = sum(self.weights)
        return sum(w * a for w, a in zip(self.weights, self.levels, strict=True)) / total

    def update(self, beta: float) -> bool:
        """Record a step whose realised level was ``beta`` (in ``[0, 1]``); returns
        whether the level used, :attr:`alpha_t`, missed (``beta < alpha_t``)."""
        if not 0 <= beta <= 1:
            raise ValueError(f"beta must be in [0, 1], got {beta}")
        missed = beta < self.alpha_t
        eta, k = self.eta, len(self.gammas)
        w = [wi * math.exp(-eta * pinball(beta, a, self.alpha))
             for wi, a in zip(self.weights, self.levels, strict=True)]
        total = sum(w)
        if not total > 0 or not math.isfinite(total):  # every weight underflowed: restart
            w, total = [1.0] * k, float(k)
        # Renormalised to sum 1: weights never under- or overflow over long streams.
        self.weights = [((1 - self.sigma) * wi + self.sigma * total / k) / total for wi in w]
        self.levels = [a + g * (self.alpha - float(beta < a))
                       for a, g in zip(self.levels, self.gammas, strict=True)]
        self.t += 1
        self.misses += int(missed)
        return missed
