"""Readers and writers. A reader is a function from a file to a :class:`Loaded` table."""

from cover.io.jsonl import OnError, read_json_rows, write_jsonl
from cover.io.qvhighlights import Loaded, read_durations, read_ground_truth, read_predictions

__all__ = [
    "Loaded",
    "OnError",
    "read_durations",
    "read_ground_truth",
    "read_json_rows",
    "read_predictions",
    "write_jsonl",
]
