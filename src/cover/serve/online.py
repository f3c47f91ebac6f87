"""The live online state of one calibrator, a fold of its feedback log.

Each feedback with a score (it came with the prediction) updates, in order:

* **ACI** (:class:`cover.calibrate.online.OnlineCalibrator`, step ``gamma``) and
  **DtACI** (:class:`cover.calibrate.dtaci.DtACI`) against a reference window of the
  last ``window`` feedback scores: the live threshold at level ``a`` is the
  ``ceil((n + 1)(1 - a))``-th smallest of them. Until the window holds
  ``ceil(1 / alpha)`` scores the fitted threshold stands (no update);
* the **drift monitor** (:class:`cover.calibrate.drift.DriftMonitor`) on every score.

Every feedback (with a score or only a region) counts in the running coverage of the
fitted calibrator's regions.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np

from cover.calibrate.drift import DriftMonitor, tie_break
from cover.calibrate.dtaci import DtACI
from cover.calibrate.online import DEFAULT_GAMMA, OnlineCalibrator


def level_threshold(ref: list[float], level: float) -> float:
    """The ``ceil((n + 1)(1 - level))``-th smallest of ``ref`` (``-inf`` at rank <= 0,
    ``+inf`` past ``n``)."""
    n = len(ref)
    k = math.ceil((n + 1) * (1 - level))
    if k <= 0:
        return -math.inf
    return math.inf if k > n else sorted(ref)[k - 1]


def _json_number(x: float | None) -> Any:
    if x is None or math.isnan(x):
        return None
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


class OnlineState:
    """ACI, DtACI, drift and coverage of one calibrator (see the module docstring)."""

    def __init__(self, alpha: float, fitted: float | None, *, gamma: str = DEFAULT_GAMMA,
                 window: int = 1000, delta: float = 0.01) -> None:
        self.alpha, self.fitted, self.gamma = alpha, fitted, gamma
        self.ref: deque[float] = deque(maxlen=window)
        self.min_ref = math.ceil(1 / alpha)
        self.aci_t, self.aci_misses = 1, 0
        self.dtaci = DtACI(alpha)
        self.drift = DriftMonitor(delta=delta)
        self.feedback = self.covered = self.scored = 0

    def apply(self, qid: str, score: float | None, covered: bool) -> dict[str, Any]:
        """Fold one feedback in; returns its p-value (None without a score)."""
        self.feedback += 1
        self.covered += int(covered)
        if score is None or math.isnan(score):
            return {"p_value": None}
        self.scored += 1
        if len(self.ref) >= self.min_ref:
            ref = list(self.ref)
            aci = OnlineCalibrator(np.asarray(ref), alpha=self.alpha, gamma=self.gamma)
            aci.t, aci.misses = self.aci_t, self.aci_misses
            aci.observe(score)
            self.aci_t, self.aci_misses = aci.t, aci.misses
            below = sum(r < score for r in ref)
            self.dtaci.update(1 - below / (len(ref) + 1))
        p = self.drift.update(score, tie_break(qid))
        self.ref.append(score)
        return {"p_value": p}

    def thresholds(self) -> dict[str, Any]:
        """The fitted threshold and the live ACI / DtACI ones."""
        if len(self.ref) < self.min_ref:
            aci = dtaci = self.fitted
        else:
            ref = list(self.ref)
            oc = OnlineCalibrator(np.asarray(ref), alpha=self.alpha, gamma=self.gamma)
            oc.t, oc.misses = self.aci_t, self.aci_misses
            aci = oc.threshold
            dtaci = level_threshold(ref, self.dtaci.alpha_t)
        return {"fitted": _json_number(self.fitted), "aci": _json_number(aci),
                "dtaci": _json_number(dtaci)}

    def describe(self) -> dict[str, Any]:
        d = self.drift
        return {"feedback": self.feedback, "scored": self.scored,
                "coverage": self.covered / self.feedback if self.feedback else None,
                "target_coverage": 1 - self.alpha, "thresholds": self.thresholds(),
                "aci": {"t": self.aci_t - 1, "misses": self.aci_misses},
                "dtaci": {"alpha_t": self.dtaci.alpha_t, "t": self.dtaci.t,
                          "misses": self.dtaci.misses},
                "alarm": {"raised": d.alarm, "at_feedback": d.alarm_at,
                          "martingale": d.value, "max": d.max_value,
                          "level": 1 / d.delta, "delta": d.delta}}
