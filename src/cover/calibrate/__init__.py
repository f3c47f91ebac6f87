"""Calibration rules (one module each) and the :class:`Calibrator` that applies them.

Importing this package registers the built-in rules and groupings
(:mod:`cover.calibrate.registry`).
"""

from cover.calibrate import asymmetric as _asymmetric  # noqa: F401  (registers its rule)
from cover.calibrate import bonferroni as _bonferroni  # noqa: F401
from cover.calibrate import buckets as _buckets  # noqa: F401  (mondrian, buckets)
from cover.calibrate import conditional as _conditional  # noqa: F401  (per-row thresholds)
from cover.calibrate import crc as _crc  # noqa: F401
from cover.calibrate import group_kinds as _group_kinds  # noqa: F401  (pred_length, ...)
from cover.calibrate import ltt as _ltt  # noqa: F401  (selective, Learn-then-Test)
from cover.calibrate import rcps as _rcps  # noqa: F401
from cover.calibrate import split as _split  # noqa: F401
from cover.calibrate import uncertainty as _uncertainty  # noqa: F401
from cover.calibrate import weighted_rule as _weighted  # noqa: F401  (weighted)
from cover.calibrate.buckets import duration_bucketed
from cover.calibrate.calibrator import Calibrator
from cover.calibrate.calibrator_file import SCHEMA_VERSION
from cover.calibrate.mondrian import mondrian_conformal
from cover.calibrate.online import OnlineCalibrator, aci_replay
from cover.calibrate.quantile import (
    as_fraction,
    conformal_quantile,
    conformal_rank,
    kth_smallest,
    min_calibration_size,
)
from cover.calibrate.registry import (
    RULES,
    Grouping,
    RuleFit,
    RuleInput,
    RuleSpec,
    register_grouping,
    register_rule,
)
from cover.calibrate.split import Threshold, beta_band, beta_sd, split_conformal
from cover.calibrate.weighted import weighted_conformal
from cover.calibrate.weighted_rule import weighted_setup

__all__ = [
    "RULES",
    "SCHEMA_VERSION",
    "Calibrator",
    "Grouping",
    "OnlineCalibrator",
    "RuleFit",
    "RuleInput",
    "RuleSpec",
    "Threshold",
    "aci_replay",
    "as_fraction",
    "beta_band",
    "beta_sd",
    "conformal_quantile",
    "conformal_rank",
    "duration_bucketed",
    "kth_smallest",
    "min_calibration_size",
    "mondrian_conformal",
    "register_grouping",
    "register_rule",
    "split_conformal",
    "weighted_conformal",
    "weighted_setup",
]
