"""Readers and writers. A reader is a function from a file to a :class:`Loaded` table."""

from cover.io.jsonl import OnError, read_json_rows, write_jsonl
from cover.io.labelled import load_labelled
from cover.io.qids import read_qids, write_qids
from cover.io.qvhighlights import Loaded, read_durations, read_ground_truth, read_predictions
from cover.io.regions_jsonl import LoadedRegions, certified_rows, read_regions, write_certified
from cover.io.row_durations import read_row_durations

__all__ = [
    "Loaded",
    "LoadedRegions",
    "OnError",
    "certified_rows",
    "load_labelled",
    "read_durations",
    "read_ground_truth",
    "read_json_rows",
    "read_predictions",
    "read_qids",
    "read_regions",
    "read_row_durations",
    "write_certified",
    "write_jsonl",
    "write_qids",
]
