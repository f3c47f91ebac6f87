"""A batch of Parquet ``cover certify`` output read in bulk for ``cover evaluate``: the
checks of :func:`cover.io.regions_read.regions_from_rows`, done on the Arrow columns.

The per-row reader takes one record per row (a dict with its ``cover`` block), several
times the cost of reading the columns. Here the ``cover`` struct's fields are read as
columns (status, region as flat pairs and offsets, refused, duration, threshold,
in_calibration) and checked over the whole batch. A batch passes only when every row is
plainly clean: every status ``certified`` or ``refused`` and every ``refused`` saying
the same, text ids as the per-row reader takes them without a message, no qid repeated
(within the batch or from an earlier one), every region a list of ``[start, end]``
pairs inside ``[0, T]`` with a duration, finite windows, and no calibrator field in the
struct (they are the file's, in its schema metadata). Anything else (a row certify
rejected or abstained on included) makes :func:`arrow_regions` return None, and the
batch's records go through the per-row reader, so every rejection, message and count is
its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cover.data.table import GroundingTable
from cover.io.columns import Columns
from cover.io.json_columns import scored_windows, text_ids
from cover.io.jsonl import object_column
from cover.io.qvhighlights import top1
from cover.io.regions_read import (
    META_KEYS,
    META_OPTIONAL,
    LoadedRegions,
    meta_of,
    region_rules,
    regions_of,
)
from cover.io.seen import SeenLines
from cover.ragged import Ragged

_READ = ("certified", "refused")


def arrow_regions(cover: Any, cols: Columns, qids: list[Any], vids: list[Any],
                  meta: dict[str, Any], *, seen: SeenLines | None = None,
                  first: tuple[dict[str, Any], int] | None = None) -> LoadedRegions | None:
    """The :class:`LoadedRegions` of one batch whose ``cover`` struct column is
    ``cover`` (an Arrow array), mapped fields ``cols`` and ids as written ``qids`` /
    ``vids``, every block carrying the file's calibrator fields ``meta``; None when a
    row needs the per-row reader. ``seen`` gets the qids only when the batch passes."""
    n = len(cols)
    if n == 0 or cols.reasons or cols.problems or cover.null_count:
        return None
    # flatten: the children as of the struct's own slice (``field`` ignores its offset)
    field = dict(zip([f.name for f in cover.type], cover.flatten(), strict=True))
    status, refused_col = field["status"], field["refused"]
    if status.null_count or refused_col.null_count:
        return None
    st = np.asarray(status.to_numpy(zero_copy_only=False), dtype=object)
    refused = np.asarray(refused_col.to_numpy(zero_copy_only=False), dtype=bool)
    if not set(np.unique(st).tolist()) <= set(_READ) or \
            not np.array_equal(refused, st == "refused"):
        return None
    qtext, vtext = text_ids(qids), text_ids(vids)
    if qtext is None or vtext is None or len(set(qtext)) != n:
        return None
    if seen is not None and seen.any_of(qtext):
        return None
    got = _regions(field["region"], field["duration"])
    if got is None:
        return None
    reg, roff, dur = got
    if any(bad.any() for bad, _ in region_rules(reg, roff, dur, np.ones(n, dtype=bool))):
        return None
    win, woff = cols.windows, cols.offsets
    if not np.isfinite(win).all():
        return None
    if win.shape[1] == 2:  # [start, end]: scored by list order, as the per-row reader
        win = scored_windows(win, np.diff(woff))
    # The calibrator fields are the file's (schema metadata), the same for every row and
    # batch, unless the struct holds such a field of its own: then the per-row reader.
    if set(field) & {*META_KEYS, *META_OPTIONAL}:
        return None
    meta_here, meta_line = first if first is not None else (meta_of(meta), int(cols.line[0]))
    thr = np.asarray(field["threshold"].to_numpy(zero_copy_only=False), dtype=np.float64)
    in_cal = np.asarray(field["in_calibration"].fill_null(False)
                        .to_numpy(zero_copy_only=False), dtype=bool)
    ps, pe = top1(win, woff)
    query = [None] * n if cols.query is None else cols.query.tolist()
    table = GroundingTable(
        qid=np.array(qtext, dtype=str), vid=np.array(vtext, dtype=str), duration=dur,
        pred_start=ps, pred_end=pe,
        relevance=Ragged(np.empty(0), np.zeros(n + 1, dtype=np.int64)),
        pred_windows=Ragged(win, woff), line=cols.line, source=cols.source,
        query=object_column(query), records=None)
    regions = regions_of(reg, roff, dur, refused, thr, meta_here, None)
    if seen is not None:  # last: a batch handed to the per-row reader must not be seen yet
        seen.add_lines(table.qid, cols.line)
    return LoadedRegions(table, regions, [], 0, meta_here, in_cal, meta_line)


def _regions(region: Any, duration: Any) -> tuple[Any, Any, Any] | None:
    """``(components (m, 2), offsets, durations)`` when every region is a list of
    ``[start, end]`` pairs and every duration given, else None."""
    if region.null_count or duration.null_count:
        return None
    pairs = region.flatten()
    if pairs.null_count:
        return None
    off = np.asarray(region.offsets.to_numpy(), dtype=np.int64)
    lens = np.diff(np.asarray(pairs.offsets.to_numpy(), dtype=np.int64))
    values = pairs.flatten()
    if (lens != 2).any() or values.null_count:
        return None
    reg = np.asarray(values.to_numpy(zero_copy_only=False), dtype=np.float64).reshape(-1, 2)
    dur = np.asarray(duration.to_numpy(zero_copy_only=False), dtype=np.float64)
    return reg, off - off[0], dur
