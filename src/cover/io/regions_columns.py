"""A batch of ``cover certify`` output read in bulk for ``cover evaluate``: the checks of
:func:`cover.io.regions_read.regions_from_rows`, done on columns, for every format.

The per-row reader takes one record per row (a dict with its ``cover`` block), several
times the cost of reading the columns. Here the block's fields are columns
(:class:`RegionColumns`: from a Parquet ``cover`` struct, :func:`struct_columns`; from
CSV ``cover_*`` cells, :func:`cell_columns`; from JSON lines decoded typed,
:mod:`cover.io.regions_batch`) checked over the whole batch by one check,
:func:`bulk_regions`. A batch passes only when every row is plainly clean: every status
one the caller reads in bulk (Parquet and CSV: ``certified`` or ``refused``) and every
``refused`` saying the same, text ids as the per-row reader takes them without a
message, no qid repeated (within the batch or from an earlier one), every region a list
of ``[start, end]`` pairs inside ``[0, T]`` with a duration, finite windows, a threshold
of the calibrator when one is given, and no calibrator field in a Parquet struct (they
are the file's, in its schema metadata). Anything else returns None, and the batch's
records go through the per-row reader, so every rejection, message and count is its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Any

import msgspec
import numpy as np
from numpy.typing import NDArray

from cover.data.table import GroundingTable
from cover.io.json_columns import flat_values, list_lengths, scored_windows, text_ids
from cover.io.jsonl import object_column
from cover.io.qvhighlights import top1
from cover.io.regions_block import META_KEYS, META_OPTIONAL, known_thresholds, meta_of
from cover.io.regions_read import LoadedRegions, Thresholds, region_rules, regions_of
from cover.io.seen import SeenLines
from cover.ragged import Ragged, offsets_from_lengths

_READ = frozenset({"certified", "refused"})
#: One region cell: ``[[start, end], ...]``.
_REGION = msgspec.json.Decoder(list[tuple[float, float]])
#: The fields of a Parquet ``cover`` struct a bulk read needs (``in_calibration``: False
#: where absent, as the per-row reader reads a block without it).
_NEEDED = {"status", "refused", "region", "duration", "threshold"}


@dataclass(frozen=True)
class RegionColumns:
    """The ``cover`` blocks of a batch as columns: status, refused, the regions as
    ``(m, 2)`` pairs and offsets, duration, threshold (NaN: null) and in_calibration."""

    status: NDArray[np.object_]
    refused: NDArray[np.bool_]
    region: NDArray[np.float64]
    offsets: NDArray[np.int64]
    duration: NDArray[np.float64]
    threshold: NDArray[np.float64]
    in_calibration: NDArray[np.bool_]


@dataclass(frozen=True)
class RowIds:
    """What a batch's rows say besides their block: ids as written, query, predicted
    windows (``(w, 2)`` or ``(w, 3)`` and offsets) and line numbers."""

    source: str
    qid: list[Any]
    vid: list[Any]
    query: list[Any]
    windows: NDArray[np.float64]
    offsets: NDArray[np.int64]
    line: NDArray[np.int64]


def bulk_regions(rc: RegionColumns, ids: RowIds, meta: dict[str, Any], *,
                 thresholds: Thresholds | None = None, seen: SeenLines | None = None,
                 first: tuple[dict[str, Any], int] | None = None,
                 statuses: frozenset[str] = _READ, abstained: NDArray[np.object_] | None = None,
                 rejected_at_certify: int = 0) -> LoadedRegions | None:
    """The :class:`LoadedRegions` of a batch whose every row is clean (``meta``: the
    calibrator fields every block carries), or None when a row needs the per-row reader.
    Every bulk read of regions (JSON lines, Parquet, CSV) ends here: a status among
    ``statuses`` and ``refused`` saying the same, text ids, no repeated qid, the region
    rules, a threshold of ``thresholds`` when given, finite windows. ``abstained``: the
    reasons of abstained rows; ``rejected_at_certify``: rows the caller set aside.
    ``seen`` gets the qids only when the batch passes."""
    n = rc.status.size
    if n == 0 or not set(rc.status.tolist()) <= statuses or \
            not np.array_equal(rc.refused, rc.status == "refused"):
        return None
    qtext, vtext = text_ids(ids.qid), text_ids(ids.vid)
    if qtext is None or vtext is None or len(set(qtext)) != n:
        return None
    if seen is not None and seen.any_of(qtext):
        return None
    ones = np.ones(n, dtype=bool)
    if any(bad.any() for bad, _ in region_rules(rc.region, rc.offsets, rc.duration, ones)):
        return None
    if thresholds is not None and not known_thresholds(rc.threshold, thresholds.values).all():
        return None
    win, woff = ids.windows, ids.offsets
    if not np.isfinite(win).all():
        return None
    win = scored_windows(win, np.diff(woff))  # [start, end]: scored by list order
    meta_here, meta_line = first if first is not None else (meta_of(meta), int(ids.line[0]))
    ps, pe = top1(win, woff)
    table = GroundingTable(
        qid=np.array(qtext, dtype=str), vid=np.array(vtext, dtype=str), duration=rc.duration,
        pred_start=ps, pred_end=pe,
        relevance=Ragged(np.empty(0), np.zeros(n + 1, dtype=np.int64)),
        pred_windows=Ragged(win, woff), line=ids.line, source=ids.source,
        query=object_column(ids.query), records=None)
    regions = regions_of(rc.region, rc.offsets, rc.duration, rc.refused, rc.threshold,
                         meta_here, abstained)
    if seen is not None:  # last: a batch handed to the per-row reader must not be seen yet
        seen.add_lines(table.qid, ids.line)
    return LoadedRegions(table, regions, [], rejected_at_certify, meta_here,
                         rc.in_calibration, meta_line)


def struct_columns(cover: Any) -> RegionColumns | None:
    """The columns of a Parquet ``cover`` struct array (:func:`cover.stream.arrow.cover_type`),
    or None: a null block, status, refused, region, pair or duration, or a calibrator
    field in the struct."""
    if cover.null_count:
        return None
    # flatten: the children as of the struct's own slice (``field`` ignores its offset)
    field = dict(zip([f.name for f in cover.type], cover.flatten(), strict=True))
    if set(field) & {*META_KEYS, *META_OPTIONAL} or not _NEEDED <= set(field):
        return None  # a struct of another shape: the records say what it lacks
    status, refused, region = field["status"], field["refused"], field["region"]
    if status.null_count or refused.null_count or region.null_count or \
            field["duration"].null_count:
        return None
    pairs = region.flatten()
    if pairs.null_count:
        return None
    lens = np.diff(np.asarray(pairs.offsets.to_numpy(), dtype=np.int64))
    values = pairs.flatten()
    if (lens != 2).any() or values.null_count:
        return None
    off = np.asarray(region.offsets.to_numpy(), dtype=np.int64)
    return RegionColumns(
        np.asarray(status.to_numpy(zero_copy_only=False), dtype=object),
        np.asarray(refused.to_numpy(zero_copy_only=False), dtype=bool),
        arrow_floats(values).reshape(-1, 2), off - off[0], arrow_floats(field["duration"]),
        arrow_floats(field["threshold"]),
        np.asarray(field["in_calibration"].fill_null(False).to_numpy(zero_copy_only=False),
                   dtype=bool) if "in_calibration" in field else np.zeros(len(cover), bool))


def cell_columns(status: list[Any], region: list[Any], refused: list[Any],
                 duration: Any, threshold: Any) -> RegionColumns | None:
    """The columns of CSV ``cover_*`` cells (status, region as JSON text, refused as
    ``true``/``false``; duration and threshold as Arrow number columns), or None: an
    empty or unreadable cell. A CSV row carries no ``in_calibration``."""
    if None in status or None in region or duration.null_count or \
            not set(refused) <= {"true", "false"}:
        return None
    try:  # each cell on its own: joined, brackets could balance across rows
        lists = list(map(_REGION.decode, region))
    except (TypeError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    n = len(status)
    return RegionColumns(np.array(status, dtype=object),
                         np.asarray(refused, dtype=object) == "true",
                         flat_values(chain.from_iterable(lists)).reshape(-1, 2),
                         offsets_from_lengths(list_lengths(lists)), arrow_floats(duration),
                         arrow_floats(threshold), np.zeros(n, dtype=bool))


def arrow_floats(arr: Any) -> NDArray[np.float64]:
    """An Arrow number array as float64 (null: NaN)."""
    return np.asarray(arr.to_numpy(zero_copy_only=False), dtype=np.float64)
