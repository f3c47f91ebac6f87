"""Helpers shared by the tests of the bulk JSON-lines readers (jsonl_batch, gt_lean,
regions_batch): a row encoder and an exact comparison of two tables."""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from cover.data.table import GroundingTable
from cover.intervals import Intervals
from cover.ragged import Ragged


def encode(rec: dict[str, object]) -> bytes:
    """One JSON line; a value JSON cannot hold becomes a number out of range."""
    try:
        return json.dumps(rec).encode()
    except ValueError:
        return b'{"qid": 1e999}'


def same_tables(a: GroundingTable, b: GroundingTable, skip: tuple[str, ...] = ()) -> None:
    """Every field of the two tables equal, dtypes included (fields in ``skip`` aside)."""
    for f in dataclasses.fields(GroundingTable):
        if f.name in skip:
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, Ragged | Intervals):
            for part in ("values", "offsets") if isinstance(x, Ragged) else ("starts", "ends",
                                                                             "offsets"):
                np.testing.assert_array_equal(getattr(x, part), getattr(y, part))
        elif isinstance(x, np.ndarray):
            assert x.dtype == y.dtype, f.name
            if x.dtype == object:
                assert x.tolist() == y.tolist(), f.name
            else:
                np.testing.assert_array_equal(x, y, err_msg=f.name)
        else:
            assert x == y, f.name
