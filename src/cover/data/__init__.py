"""Data layer: the columnar grounding table, split units, joins and splits."""

from cover.data.join import attach_truth
from cover.data.splits import UnitSplit, resample_units, split_by_unit
from cover.data.table import GroundingTable
from cover.data.units import split_units

__all__ = [
    "GroundingTable",
    "UnitSplit",
    "attach_truth",
    "resample_units",
    "split_by_unit",
    "split_units",
]
