"""Certified output: every input row back, with a ``cover`` block, one line per input line.

The ``cover`` block of a row::

    {"status": "certified" | "refused" | "rejected",
     "region": [[start, end], ...] | null,   # seconds, merged, inside [0, T]
     "refused": bool, "duration": T, "score": "norm", "rule": "split",
     "alpha": 0.1, "threshold": 1.23 | "inf", "k": 559, "n_calibration": 623,
     "reason": "..."}                         # rejected rows only

The original fields of each row are left untouched. A line that was not JSON is
echoed as ``{"cover": {"status": "rejected", "line": n, "raw": "...", ...}}``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cover._json import from_json_number, to_json_number
from cover.data.table import GroundingTable
from cover.errors import RowProblem
from cover.intervals import Intervals
from cover.io.jsonl import (
    OnError,
    raise_on_rejections,
    read_json_rows,
    write_jsonl,
)
from cover.io.qvhighlights import _apply, _first_reason, _ragged_matrix, _trim, table_of, top1
from cover.ragged import segment_any
from cover.regions import Regions


def certified_rows(
    table: GroundingTable,
    regions: Regions,
    meta: dict[str, Any],
    rejected: dict[int, Any],
    problems: list[RowProblem],
) -> list[dict[str, Any]]:
    """Rows to write, in input-line order: kept rows with their region, rejected rows
    with their reason. ``meta`` holds score, rule, alpha, k, n_calibration. A table
    built in memory (no records) gets ``{"qid": ..., "vid": ...}`` rows."""
    records: list[Any] = (list(table.records) if table.records is not None else
                          [{"qid": q, "vid": v} for q, v in zip(table.qid.tolist(),
                                                                table.vid.tolist(), strict=True)])
    lines = (table.line if table.line is not None
             else np.arange(1, len(table) + 1, dtype=np.int64))
    out: list[tuple[int, dict[str, Any]]] = []
    lists = regions.intervals.to_lists()
    thresholds = regions.threshold.tolist()
    for i, rec in enumerate(records):
        refused = bool(regions.refused[i])
        block = {
            "status": "refused" if refused else "certified",
            "region": lists[i],
            "refused": refused,
            "duration": float(regions.duration[i]),
            **meta,
            "threshold": to_json_number(thresholds[i]),
        }
        out.append((int(lines[i]), {**rec, "cover": block}))
    reasons: dict[int, str] = {}
    for p in problems:
        if p.action == "rejected":
            reasons.setdefault(p.line, p.problem)
    for line, rec in rejected.items():
        block = {"status": "rejected", "region": None, "refused": False,
                 "reason": reasons.get(line, "rejected"), "line": line}
        if isinstance(rec, dict):
            out.append((line, {**rec, "cover": block}))
        else:
            out.append((line, {"cover": {**block, "raw": rec}}))
    out.sort(key=lambda item: item[0])
    return [row for _, row in out]


def write_certified(path: str | Path, rows: list[dict[str, Any]]) -> None:
    write_jsonl(path, rows)


@dataclass(frozen=True)
class LoadedRegions:
    """A ``cover certify`` output read back: the rows, their regions, and what was set aside."""

    table: GroundingTable
    regions: Regions
    problems: list[RowProblem]
    rejected_at_certify: int
    meta: dict[str, Any]


def read_regions(path: str | Path, *, on_error: OnError = "raise") -> LoadedRegions:
    """Read certified regions (the ``cover`` block of each row) for evaluation.

    Rows certified as rejected are counted, not evaluated. Regions are validated
    (finite, ``s <= e``) and normalized (sorted, merged).
    """
    raw = read_json_rows(path)
    status = [r.get("cover", {}).get("status") if isinstance(r.get("cover"), dict) else None
              for r in raw.records]
    was_rejected = np.array([s == "rejected" for s in status], dtype=bool)
    n_prev = int(was_rejected.sum())
    keep = ~was_rejected
    raw.records = [r for r, k in zip(raw.records, keep, strict=True) if k]
    raw.lines = raw.lines[keep]
    n = len(raw.records)
    no_block = np.array([not isinstance(r.get("cover"), dict)
                         or not isinstance(r["cover"].get("region"), list)
                         for r in raw.records], dtype=bool)
    no_qid = np.array([r.get("qid") is None for r in raw.records], dtype=bool)
    _apply(raw, _first_reason(n, [
        (no_qid, "missing field: qid"),
        (no_block, "no cover.region list (is this the output of `cover certify`?)"),
    ]))
    for r in raw.records:
        r["_region"] = r["cover"]["region"]
    reg, roff = _ragged_matrix(raw, "_region", (2,), optional=False)
    reg = reg[:, :2]
    refused = np.array([bool(r["cover"].get("refused", False)) for r in raw.records], dtype=bool)
    dur = np.array([r["cover"].get("duration", np.nan) for r in raw.records], dtype=np.float64)
    keepm = _apply(raw, _first_reason(len(raw.records), [
        (segment_any(~np.isfinite(reg).all(axis=1), roff), "non-finite number in cover.region"),
        (segment_any(reg[:, 0] > reg[:, 1], roff), "a region component has start > end"),
    ]))
    reg, roff = _trim(keepm, reg, roff)
    refused, dur = refused[keepm], dur[keepm]
    for r in raw.records:
        r.pop("_region", None)
    win, woff = _ragged_matrix(raw, "pred_relevant_windows", (2, 3), optional=True)
    ps, pe = top1(win, woff)
    thr = np.array([_threshold(r["cover"].get("threshold")) for r in raw.records], np.float64)
    table = table_of(raw, duration=dur, pred_start=ps, pred_end=pe)
    intervals = Intervals(reg[:, 0].copy(), reg[:, 1].copy(), roff).normalized()
    first = raw.records[0]["cover"] if raw.records else {}
    meta = {k: first.get(k) for k in ("score", "rule", "alpha", "k", "n_calibration")}
    alpha = meta.get("alpha")
    regions = Regions(intervals, dur, refused, thr, str(meta.get("score")),
                      float(alpha) if isinstance(alpha, (int, float, str)) else None)
    raise_on_rejections(raw.problems, on_error, raw.path)
    return LoadedRegions(table, regions, raw.problems, n_prev, meta)


def _threshold(x: Any) -> float:
    try:
        return from_json_number(x)
    except ValueError:
        return math.nan
