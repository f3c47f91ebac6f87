"""Calibration rules (one module each) and the :class:`Calibrator` that applies them."""

from cover.calibrate.calibrator import SCHEMA_VERSION, Calibrator
from cover.calibrate.quantile import (
    as_fraction,
    conformal_quantile,
    conformal_rank,
    kth_smallest,
    min_calibration_size,
)
from cover.calibrate.split import Threshold, beta_band, beta_sd, split_conformal

__all__ = [
    "SCHEMA_VERSION",
    "Calibrator",
    "Threshold",
    "as_fraction",
    "beta_band",
    "beta_sd",
    "conformal_quantile",
    "conformal_rank",
    "kth_smallest",
    "min_calibration_size",
    "split_conformal",
]
