"""Grounders that report boundary uncertainty (``start_std``, ``end_std``).

* The **naive Gaussian region** such a grounder claims at nominal ``1 - alpha``:
  ``[s_hat - z start_std, e_hat + z end_std] ∩ [0, T]``, ``z = Phi^-1(1 - alpha/2)`` (each
  side one-sided at ``alpha/2``; :func:`nominal_z`). No
  calibration: the level is a label, not a guarantee. As a rule (``gaussian``, score
  ``sigma``) it writes a calibrator whose threshold is ``z`` for any data, so the claim
  can be certified and evaluated like any other rule.
* **COVER on the reported std**: the ``sigma`` score family
  (``S = max((s_hat - s*)/sd_s, (e* - e_hat)/sd_e)``, :mod:`cover.scores`) with any
  calibration rule (``split`` by default) widens by a calibrated multiple of the std.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np

from cover.calibrate.registry import (
    GroupThreshold,
    RuleFit,
    RuleInput,
    RuleSpec,
    Side,
    register_rule,
)
from cover.data.table import GroundingTable
from cover.regions import Regions, build_regions
from cover.scores import require_inputs

#: Scale floor for the naive region: none in effect (a zero std gives the point estimate).
NAIVE_MIN_SCALE = 1e-9


def nominal_z(alpha: float | Fraction) -> float:
    """``z = Phi^-1(1 - alpha/2)``: the two-sided normal quantile of a nominal
    ``1 - alpha`` interval ``mean ± z·sd``."""
    from scipy.stats import norm  # seconds to import: only when a Gaussian rule runs

    return float(norm.ppf(1.0 - float(alpha) / 2.0))


def gaussian_regions(table: GroundingTable, alpha: float | Fraction) -> Regions:
    """The naive Gaussian region at nominal ``1 - alpha`` for every row (rows without an
    interval or std: the whole video)."""
    require_inputs(table, "sigma")
    return build_regions(table, "sigma", nominal_z(alpha), min_scale=NAIVE_MIN_SCALE,
                         alpha=float(alpha))


def gaussian_rule(data: RuleInput, alpha: Fraction, params: Mapping[str, Any]) -> RuleFit:
    """``lam = z`` for every group, whatever the scores (the uncalibrated claim); the
    report gives the share of calibration rows the claim actually covers."""
    z = nominal_z(alpha)
    out = {str(g): GroupThreshold(int((data.groups == g).sum()), {"both": Side(z, None)})
           for g in np.unique(data.groups)}
    covered = float(np.mean(data.scores <= z))
    return RuleFit(out, report={
        "nominal level": f"{1 - float(alpha):g} (z = {z:.4g}), not calibrated",
        "calibration rows inside the claimed region": f"{covered:.3f}"})


register_rule(RuleSpec(
    "gaussian", gaussian_rule,
    "the naive Gaussian region mean +- z*std at nominal 1-alpha (score sigma; no guarantee)"))
