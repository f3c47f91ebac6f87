"""Certified output: every input row back, with a ``cover`` block, one line per input line.

The ``cover`` block of a row::

    {"status": "certified" | "refused" | "abstained" | "rejected",
     "region": [[start, end], ...] | null,   # seconds, merged, inside [0, T]
     "refused": bool, "duration": T, "score": "norm", "rule": "split",
     "alpha": 0.1, "threshold": 1.23 | "inf", "k": 559, "n_calibration": 623,
     "p_value": 0.04,                         # calibrators that kept their scores
     "reason": "..."}                         # rejected and abstained rows only

A row whose region at the calibrated threshold is empty is rejected, never certified,
with its region ``[]`` and the reason (:mod:`cover.row_status`).

The original fields of each row are left untouched. A line that was not JSON is
echoed as ``{"cover": {"status": "rejected", "line": n, "raw": "...", ...}}``.

This module builds and writes those rows; reading them back for evaluation is
:mod:`cover.io.regions_read`, whose names are re-exported here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover._json import to_json_number
from cover.data.table import GroundingTable
from cover.io.output import atomic_open
from cover.io.regions_read import (  # noqa: F401  (re-exported here)
    LoadedRegions,
    read_regions,
    regions_from_rows,
)
from cover.io.row_checks import id_records
from cover.regions import Regions
from cover.row_status import row_status, status_reasons


def certified_rows(
    table: GroundingTable,
    regions: Regions,
    meta: dict[str, Any],
    rejected: list[tuple[int, Any, str]],
    *,
    in_calibration: NDArray[np.bool_] | None = None,
) -> list[dict[str, Any]]:
    """Rows to write, in input-line order: kept rows with their region, rejected rows
    with their reason. ``rejected`` lists ``(line, row, reason)``, one per rejected row
    (rows of a document may share a line). ``meta`` holds score, rule, alpha, k,
    n_calibration (and
    ``calibration_sha256``, the digest of the calibration qids). Rows where
    ``in_calibration`` is set were calibration rows and say so (``"in_calibration":
    true``). A table built in memory (no records) gets ``{"qid": ..., "vid": ...}`` rows."""
    records: list[Any] = (list(table.records) if table.records is not None else
                          id_records(table.qid, table.vid))
    lines = (table.line if table.line is not None
             else np.arange(1, len(table) + 1, dtype=np.int64))
    out: list[tuple[int, dict[str, Any]]] = []
    lists = regions.intervals.to_lists()
    thresholds = regions.threshold.tolist()
    ends = None if regions.threshold_end is None else regions.threshold_end.tolist()
    status = row_status(regions).tolist()
    empty = status_reasons(regions)
    pvals = None if regions.p_value is None else regions.p_value.tolist()
    for i, rec in enumerate(records):
        refused = bool(regions.refused[i])
        block = {
            "status": status[i],
            "region": lists[i],
            "refused": refused,
            "duration": float(regions.duration[i]),
            **meta,
            "threshold": to_json_number(thresholds[i]),
        }
        if ends is not None:  # per-boundary rules: "threshold" is the start side's
            block["threshold_end"] = to_json_number(ends[i])
        if in_calibration is not None and in_calibration[i]:
            block["in_calibration"] = True
        if pvals is not None:
            block["p_value"] = pvals[i]
        if i in empty:
            block["reason"] = empty[i]
        out.append((int(lines[i]), {**rec, "cover": block}))
    for line, rec, why in rejected:
        block = {"status": "rejected", "region": None, "refused": False, "reason": why,
                 "line": line}
        if isinstance(rec, dict):
            out.append((line, {**rec, "cover": block}))
        else:
            out.append((line, {"cover": {**block, "raw": rec}}))
    out.sort(key=lambda item: item[0])
    return [row for _, row in out]


def write_certified(path: str | Path, rows: Iterable[dict[str, Any]], *,
                    inputs: Iterable[str | Path | None] = ()) -> None:
    """Write certified rows, one per line, atomically (:mod:`cover.io.output`): an
    interrupted or failed write leaves the previous file intact and no partial file.

    Echoed fields that JSON cannot hold (NaN or infinity, which Python's reader accepts
    in input rows) follow COVER's number convention, NaN -> null and +-inf -> "inf" /
    "-inf", and the row's ``cover.non_finite_fields`` lists where (``"extra_conf"``,
    ``"meta.scores[2]"``), so nothing changes silently and the write never stops half way.
    """
    with atomic_open(path, "w", inputs=inputs) as fh:
        for row in rows:
            fh.write(echo_line(row))
            fh.write("\n")


def echo_line(row: dict[str, Any]) -> str:
    """One output line: strict JSON of ``row`` (see :func:`write_certified` for the
    non-finite-number policy)."""
    try:
        return json.dumps(row, allow_nan=False)
    except ValueError:
        pass
    where: list[str] = []
    safe = {k: _finite(v, k, where) for k, v in row.items() if k != "cover"}
    block = dict(row.get("cover") or {})
    safe["cover"] = {**{k: _finite(v, f"cover.{k}", []) for k, v in block.items()},
                     "non_finite_fields": where}
    return json.dumps(safe, allow_nan=False)


def _finite(value: Any, path: str, where: list[str]) -> Any:
    """``value`` with non-finite floats replaced (:func:`cover._json.to_json_number`),
    appending the path of each to ``where``."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        where.append(path)
        return to_json_number(value)
    if isinstance(value, dict):
        return {k: _finite(v, f"{path}.{k}", where) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v, f"{path}[{i}]", where) for i, v in enumerate(value)]
    return value
