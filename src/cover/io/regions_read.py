"""A ``cover certify`` output read back for evaluation (the format is
:mod:`cover.io.regions_jsonl`'s): each row's ``cover`` block checked and turned into
regions.

Rows certified as rejected are counted, not evaluated, except those rejected for an
empty region (a miss). A row with no qid, no ``cover.region`` list, a status evaluate
cannot read (or a ``cover.refused`` flag that does not agree with it), a region that is
not finite, has ``start > end`` or reaches outside ``[0, cover.duration]``, or a
repeated qid is rejected naming its line and why; so is, for CSV regions whose
calibrator is given apart from them, a ``cover.threshold`` that calibrator cannot give.
A file whose rows come from two calibrators is an error naming the first row that
differs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.rules import duplicate_reason
from cover.data.table import GroundingTable
from cover.errors import InputError, RowProblem
from cover.intervals import Intervals
from cover.io import fields
from cover.io.jsonl import (
    OnError,
    RawRows,
    check_ids,
    check_unique_qids,
    number_value,
    raise_on_rejections,
    read_json_rows,
)
from cover.io.opener import json_document, suffix_kind
from cover.io.qvhighlights import top1
from cover.io.regions_block import (
    abstain_reasons,
    block_of,
    common_meta,
    known_thresholds,
    status_problems,
    threshold_value,
)
from cover.io.regions_windows import RowSources, base_windows, sources_for
from cover.io.seen import SeenLines
from cover.ragged import Ragged, row_ids, segment_any
from cover.regions import Regions
from cover.row_status import empty_region_block

#: Relative tolerance of the ``[0, T]`` check on regions read back (rounding only).
REGION_ATOL = 1e-6


@dataclass(frozen=True)
class LoadedRegions:
    """A ``cover certify`` output read back: the rows, their regions, and what was set aside."""

    table: GroundingTable
    regions: Regions
    problems: list[RowProblem]
    rejected_at_certify: int
    meta: dict[str, Any]
    #: Rows the calibrator was fitted on (``cover.in_calibration``), aligned with ``table``.
    in_calibration: NDArray[np.bool_]
    #: The line the calibrator fields (``meta``) were read from (None: no row).
    meta_line: int | None
    #: Rows that name no vid (their table vid is the qid, a placeholder evaluate
    #: replaces by the ground truth's: :func:`cover.stream.evaluate.evaluate_stream`),
    #: aligned with ``table``; None when every row names one.
    vid_absent: NDArray[np.bool_] | None = None


@dataclass(frozen=True)
class Thresholds:
    """The start-side thresholds a calibrator gives (one per group) and how to name it."""

    values: NDArray[np.float64]
    source: str


#: Why a row without a ``cover.region`` list is rejected (:func:`regions_from_rows`).
NO_REGION = "no cover.region list (is this the output of `cover certify`?)"


def read_regions(path: str | Path, *, on_error: OnError = "raise") -> LoadedRegions:
    """Read certified regions (the ``cover`` block of each row) for evaluation, by the
    rules of the module doc: a region inside ``[0, T]`` up to ``REGION_ATOL * max(1, T)``,
    normalized (sorted, merged)."""
    regions_kind(path)  # a JSON document is refused as one, not as a bad row a line
    # a named layout's rows read as it reads them, as the command and the stream do
    loaded = regions_from_rows(read_json_rows(path), windows=sources_for(path, None)[0])
    raise_on_rejections(loaded.problems, on_error, str(path))
    return loaded


def regions_kind(path: str | Path) -> str:
    """``jsonl``, ``parquet`` or ``csv``: how a regions file is read (by its name); one
    JSON object written over many lines (a calibrator, an annotation file) is refused
    here, not as one bad row a line."""
    kind = suffix_kind(path)
    if kind == "jsonl" and json_document(path):
        raise InputError(f"{path}: one JSON object written over many lines, not the JSON "
                         "lines `cover certify` writes (one object per line): a calibrator "
                         "or an annotation file?")
    return kind


def regions_from_rows(raw: RawRows, *, seen: SeenLines | None = None,
                      first: tuple[dict[str, Any], int] | None = None,
                      thresholds: Thresholds | None = None,
                      windows: RowSources | None = None) -> LoadedRegions:
    """The checks and arrays of :func:`read_regions` on parsed rows (a whole file, or one
    batch of a streamed one), never raising on a bad row. For a batch: ``seen`` holds
    the qids of earlier batches (a repeat is rejected, naming the first line) and
    ``first`` the calibrator fields of the file's first row and its line.

    Every path of ``cover evaluate`` (JSON lines, Parquet, CSV; streamed or whole) comes
    here, so the regions rules (the module doc) live here; ``thresholds``: those of the
    calibrator CSV regions were certified with; ``windows``: where a row's base windows
    are (:func:`windows_of`; else :func:`base_windows`)."""
    if windows is not None and windows.qid is not None:  # the layout's qid, not its text
        for r in raw.records:
            if isinstance(r, dict):
                r["qid"] = windows.qid(r)
    # A row rejected for its empty region is evaluated (a miss): cover.row_status.
    was_rejected = np.array([block_of(r).get("status") == "rejected"
                             and not empty_region_block(block_of(r)) for r in raw.records],
                            dtype=bool)
    raw.records = [r for r, k in zip(raw.records, ~was_rejected, strict=True) if k]
    raw.lines = raw.lines[~was_rejected]
    fields.reject_rows(raw, fields.first_reason([
        (np.array([r.get("qid") is None for r in raw.records], dtype=bool),
         "missing field: qid"),
        (np.array([not isinstance(block_of(r).get("region"), list) for r in raw.records],
                  dtype=bool), NO_REGION),
    ]))
    fields.reject_rows(raw, status_problems(raw))
    check_ids(raw)
    if seen is not None:  # first: a repeat within the batch of a qid an earlier batch had
        _reject_repeats(raw, seen)  # names the line that batch saw it on
    check_unique_qids(raw)
    if thresholds is not None:
        check_thresholds(raw, thresholds)
    reg, roff = fields.ragged_field(raw, "cover.region", (2,), optional=False,
                             get=lambda r: r["cover"]["region"])
    reg = reg[:, :2]
    dur, has_dur = fields.float_field(raw, "cover.duration",
                                      get=lambda r: r["cover"].get("duration"))
    keep = fields.reject_rows(raw, fields.first_reason(region_rules(reg, roff, dur, has_dur)))
    reg, roff = fields.trim_ragged(keep, reg, roff)
    dur = dur[keep]
    meta, meta_line = common_meta(raw, first)
    refused = np.array([block_of(r).get("status") == "refused" for r in raw.records], dtype=bool)
    abstained = abstain_reasons(raw.records)
    thr = np.array([threshold_value(block_of(r).get("threshold")) for r in raw.records], np.float64)
    before = raw.lines
    field, get = windows[:2] if windows is not None else ("pred_relevant_windows",
                                                           base_windows)
    win, woff = fields.ragged_field(raw, field, (2, 3), optional=True, get=get)
    if raw.lines.size != before.size:  # rows rejected for their windows: drop their region
        kept = np.isin(before, raw.lines)
        reg, roff = fields.trim_ragged(kept, reg, roff)
        dur, refused, thr = dur[kept], refused[kept], thr[kept]
        abstained = None if abstained is None else abstained[kept]
    ps, pe = top1(win, woff)
    table = fields.table_of(raw, duration=dur, pred_start=ps, pred_end=pe,
                            pred_windows=Ragged(win, woff))
    regions = regions_of(reg, roff, dur, refused, thr, meta, abstained)
    in_cal = np.array([block_of(r).get("in_calibration") is True for r in raw.records],
                      dtype=bool)
    absent = np.array(["vid" not in r for r in raw.records], dtype=bool)
    return LoadedRegions(table, regions, raw.problems, int(was_rejected.sum()), meta, in_cal,
                         meta_line, absent if absent.any() else None)


def regions_of(reg: NDArray[np.float64], roff: NDArray[np.int64], dur: NDArray[np.float64],
               refused: NDArray[np.bool_], thresholds: NDArray[np.float64],
               meta: dict[str, Any], abstained: NDArray[np.object_] | None) -> Regions:
    """The :class:`Regions` of rows read back: components ``reg`` (``(m, 2)``, ragged by
    ``roff``) normalized (sorted, merged), the calibrator's score and alpha (None when
    not a finite number) from ``meta``."""
    alpha = number_value(meta.get("alpha"))
    return Regions(Intervals(reg[:, 0].copy(), reg[:, 1].copy(), roff).normalized(), dur,
                   refused, thresholds, str(meta.get("score")),
                   alpha if math.isfinite(alpha) else None, abstain_reason=abstained)


def region_rules(reg: NDArray[np.float64], roff: NDArray[np.int64],
                 dur: NDArray[np.float64], has_dur: NDArray[np.bool_]
                 ) -> list[tuple[NDArray[np.bool_], str]]:
    """The rules a row's region and duration obey, as ``(bad rows, why)`` in the order
    they are checked; the bulk read (:mod:`cover.io.regions_batch`) keeps a batch only
    when no row breaks one."""
    t = dur[row_ids(roff)]
    tol = REGION_ATOL * np.maximum(1.0, t)
    with np.errstate(invalid="ignore"):
        outside = (reg[:, 0] < -tol) | (reg[:, 1] > t + tol)
    return [
        (segment_any(~np.isfinite(reg).all(axis=1), roff), "non-finite number in cover.region"),
        (segment_any(reg[:, 0] > reg[:, 1], roff), "a region component has start > end"),
        (~has_dur, "missing field: cover.duration"),
        (fields.bad_number(dur, has_dur, positive=True),
         "cover.duration must be a finite number > 0"),
        (segment_any(outside, roff), "cover.region reaches outside [0, cover.duration]"),
    ]


def _reject_repeats(raw: RawRows, seen: SeenLines) -> None:
    """Reject the rows whose qid an earlier batch had, every one of them in this batch
    (as :func:`check_unique_qids` does within one), naming its first line; the batch's
    new qids are added with the line of their first row here."""
    q = np.array([str(r["qid"]) for r in raw.records], dtype=str)
    dup, first_line = seen.add_lines(q, raw.lines)
    fields.reject_rows(raw, {int(i): duplicate_reason(int(first_line[i]))
                             for i in np.flatnonzero(dup).tolist()})


def check_thresholds(raw: RawRows, want: Thresholds) -> None:
    """Reject the rows whose ``cover.threshold`` is none of ``want``'s: they were
    certified by another calibrator (another alpha), whose band would be wrong."""
    got = np.array([threshold_value(block_of(r).get("threshold")) for r in raw.records], np.float64)
    v = want.values
    ok = known_thresholds(got, v)
    shown = ", ".join(f"{x:.6g}" for x in v[:5]) + (", ..." if v.size > 5 else "")
    fields.reject_rows(raw, {
        int(i): f"cover.threshold {got[i]:.6g} is not a threshold of the calibrator "
                f"{want.source} ({shown}): were these regions certified with another one?"
        for i in np.flatnonzero(~ok).tolist()})
