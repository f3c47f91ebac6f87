"""COVER: conformal coverage guarantees for video temporal grounders.

The package reads as the method: ``data`` (tables, joins, splits) -> ``scores`` ->
``calibrate`` (rules + :class:`Calibrator`) -> ``regions`` -> ``metrics`` ->
``studies`` -> ``report`` -> ``cli``. Only the light core is imported here.
"""

from cover._version import __version__
from cover.calibrate import Calibrator, Threshold, conformal_rank, split_conformal
from cover.data import GroundingTable, attach_truth, split_by_unit
from cover.errors import CalibratorFileError, CoverError, CoverWarning, InputError
from cover.grounding_metrics import GroundingMetrics, grounding_metrics
from cover.intervals import Intervals
from cover.io import load_labelled, read_durations, read_ground_truth, read_predictions
from cover.metrics import Evaluation, evaluate
from cover.regions import Regions, build_regions
from cover.scores import FAMILIES, compute_scores

__all__ = [
    "FAMILIES",
    "Calibrator",
    "CalibratorFileError",
    "CoverError",
    "CoverWarning",
    "Evaluation",
    "GroundingMetrics",
    "GroundingTable",
    "InputError",
    "Intervals",
    "Regions",
    "Threshold",
    "__version__",
    "attach_truth",
    "build_regions",
    "compute_scores",
    "conformal_rank",
    "evaluate",
    "grounding_metrics",
    "load_labelled",
    "read_durations",
    "read_ground_truth",
    "read_predictions",
    "split_by_unit",
    "split_conformal",
]
