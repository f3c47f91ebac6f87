"""A batch of ``cover certify`` output lines read in bulk for ``cover evaluate``: the
checks of :func:`cover.io.regions_jsonl.regions_from_rows`, done over the whole batch.

The per-row reader looks at each row's ``cover`` block and windows in Python, several
times the cost of the parse. Here lines are parsed a few at a time with collection
paused (as :mod:`cover.io.jsonl_batch` does for predictions), only the fields evaluate
reads are kept (qid, vid, query, the predicted windows, the ``cover`` block; never the
saliency), and the checks run column by column. A batch passes only when every row is
plainly clean: anything else (a line that is not a JSON object, a bad or repeated qid,
an absent vid, a region or window that is not a list of numbers, a region outside
``[0, T]``, a bad duration, windows of mixed widths, another calibrator's fields)
makes :func:`decode_regions` return None and :func:`load_regions` reruns the batch
through the per-row reader, so every rejection, message and count is exactly its own.
Rows certify rejected are dropped and counted on both paths, except those rejected for an
empty region (``[]``), evaluated as misses (:mod:`cover.row_status`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import chain, compress, repeat
from operator import eq, is_, itemgetter
from typing import Any

import numpy as np

from cover.data.table import GroundingTable
from cover.intervals import Intervals
from cover.io.json_columns import flat_windows, list_lengths, text_ids
from cover.io.jsonl import number_value, object_column, parse_json_lines
from cover.io.jsonl_batch import CHUNK_LINES, flat_numbers, gc_paused, parse_objects, top1_finite
from cover.io.qvhighlights import top1
from cover.io.regions_jsonl import (
    META_KEYS,
    META_OPTIONAL,
    LoadedRegions,
    meta_of,
    region_rules,
    regions_from_rows,
)
from cover.io.regions_rules import STATUSES, abstain_reasons, threshold_value
from cover.io.seen import SeenLines
from cover.ragged import Ragged, offsets_from_lengths
from cover.regions import Regions
from cover.row_status import empty_region_block

_NUMBER = frozenset({int, float})
_KEYS = ("qid", "vid", "query", "pred_relevant_windows", "cover")


def load_regions(name: str, batch: Sequence[tuple[int, bytes]], *,
                 seen: SeenLines | None = None,
                 first: tuple[dict[str, Any], int] | None = None,
                 fast: bool = True) -> LoadedRegions:
    """:func:`~cover.io.regions_jsonl.regions_from_rows` of the ``(line number, bytes)``
    pairs ``batch``: in bulk when the batch is clean (and ``fast``), else row by row.
    The bulk read keeps no parsed rows (the table's ``records`` is None)."""
    with gc_paused():
        try:
            got = decode_regions(name, batch, seen=seen, first=first) if fast else None
        except OverflowError:  # a number beyond float range: the per-row reader says so
            got = None
        if got is not None:
            return got
        return regions_from_rows(parse_json_lines(name, batch), seen=seen, first=first)


def decode_regions(name: str, batch: Sequence[tuple[int, bytes]], *,
                   seen: SeenLines | None = None,
                   first: tuple[dict[str, Any], int] | None = None) -> LoadedRegions | None:
    """The :class:`LoadedRegions` of a batch whose every row is clean, or None when a
    row needs the per-row reader (which then says what is wrong). ``seen`` gets the
    batch's qids only when the batch passes."""
    lines = list(map(itemgetter(1), batch))
    cols: list[list[Any]] = [[] for _ in _KEYS]
    for a in range(0, len(lines), CHUNK_LINES):
        part = _chunk(lines[a:a + CHUNK_LINES])
        if part is None:
            return None
        for col, got in zip(cols, part, strict=True):
            col += got
    qv, vv, query, wins, blocks = cols
    if not blocks or set(map(type, blocks)) != {dict}:
        return None
    was_rejected = np.fromiter(map(eq, map(dict.get, blocks, repeat("status")),
                                   repeat("rejected")), bool, len(blocks))
    for i in np.flatnonzero(was_rejected).tolist():  # an empty region is evaluated
        was_rejected[i] = not empty_region_block(blocks[i])
    line_no = np.fromiter(map(itemgetter(0), batch), np.int64, len(batch))
    if was_rejected.any():
        keep = (~was_rejected).tolist()
        qv, vv, query, wins, blocks = (list(compress(c, keep)) for c in cols)
        line_no = line_no[~was_rejected]
    n = len(blocks)
    if n == 0:
        return None
    if not _plain_status(blocks):
        return None
    qtext, vtext = text_ids(qv), text_ids(vv)
    if qtext is None or vtext is None or len(set(qtext)) != n:
        return None
    if seen is not None and seen.any_of(qtext):
        return None
    meta = first if first is not None else (meta_of(blocks[0]), int(line_no[0]))
    for k in (*META_KEYS, *META_OPTIONAL):  # list.count compares as the per-row dicts do
        if list(map(dict.get, blocks, repeat(k))).count(meta[0].get(k)) != n:
            return None
    regions_of = _regions(blocks)
    win = flat_windows(_window_lists(wins))
    if regions_of is None or win is None:
        return None
    reg, roff, dur = regions_of
    if any(bad.any() for bad, _ in region_rules(reg, roff, dur, np.ones(n, dtype=bool))):
        return None  # the per-row reader rejects the row, with its message
    wv, woff = win[0], offsets_from_lengths(win[1])
    # the sort-free top-1 equals the per-row reader's where every score is finite
    ps, pe = top1_finite(wv, woff) if np.isfinite(wv[:, 2]).all() else top1(wv, woff)
    table = GroundingTable(
        qid=np.array(qtext, dtype=str), vid=np.array(vtext, dtype=str), duration=dur,
        pred_start=ps, pred_end=pe,
        relevance=Ragged(np.empty(0), np.zeros(n + 1, dtype=np.int64)),
        pred_windows=Ragged(wv, woff), line=line_no, source=name,
        query=object_column(query), records=None)
    alpha = number_value(meta[0].get("alpha"))
    regions = Regions(Intervals(reg[:, 0].copy(), reg[:, 1].copy(), roff).normalized(), dur,
                      _refused(blocks), _thresholds(blocks), str(meta[0].get("score")),
                      alpha if math.isfinite(alpha) else None,
                      abstain_reason=abstain_reasons(blocks))
    if seen is not None:  # last: a batch handed to the per-row reader must not be seen yet
        seen.add_lines(table.qid, line_no)
    return LoadedRegions(table, regions, [],
                         int(was_rejected.sum()), meta[0], _flags(blocks, "in_calibration"),
                         meta[1])


def _chunk(lines: list[bytes]) -> tuple[list[Any], ...] | None:
    """The fields evaluate reads of a few lines (the rows themselves are dropped)."""
    recs = parse_objects(lines)
    if recs is None:
        return None
    return tuple(list(map(dict.get, recs, repeat(k))) for k in _KEYS)


def _regions(blocks: list[dict[str, Any]]) -> tuple[Any, Any, Any] | None:
    """``(components (m, 2), offsets, durations)`` when every region is a list of
    ``[start, end]`` number pairs and every duration a number, else None."""
    regs: list[Any] = list(map(dict.get, blocks, repeat("region")))
    if set(map(type, regs)) != {list}:
        return None
    durs = list(map(dict.get, blocks, repeat("duration")))
    if not set(map(type, durs)) <= _NUMBER:
        return None
    comps = list(chain.from_iterable(regs))
    offsets = offsets_from_lengths(list_lengths(regs))
    dur = np.array(durs, dtype=np.float64)
    if not comps:
        return np.empty((0, 2)), offsets, dur
    if set(map(type, comps)) != {list} or not (list_lengths(comps) == 2).all():
        return None
    got = flat_numbers(comps)
    if got is None:
        return None
    return got[0].reshape(-1, 2), offsets, dur


def _window_lists(vals: list[Any]) -> list[Any] | None:
    """The windows per row, absent and null read as ``[]``; None when one is not a list."""
    kinds = set(map(type, vals))
    if not kinds <= {list, type(None)}:
        return None
    return [[] if v is None else v for v in vals] if type(None) in kinds else vals


def _plain_status(blocks: list[dict[str, Any]]) -> bool:
    """Every status is one evaluate reads and every ``refused`` (when given) the boolean
    that agrees with it (:func:`cover.io.regions_rules.status_problems` finds nothing)."""
    status = list(map(dict.get, blocks, repeat("status")))
    if not set(status) <= set(STATUSES):
        return False
    refused = [b.get("refused", s == "refused") for b, s in zip(blocks, status, strict=True)]
    return set(map(type, refused)) <= {bool} and refused == _refused(blocks).tolist()


def _refused(blocks: list[dict[str, Any]]) -> Any:
    """``status == "refused"`` per row."""
    return np.fromiter(map(eq, map(dict.get, blocks, repeat("status")), repeat("refused")),
                       bool, len(blocks))


def _flags(blocks: list[dict[str, Any]], key: str) -> Any:
    """``block[key] is True`` per row."""
    return np.fromiter(map(is_, map(dict.get, blocks, repeat(key)), repeat(True)), bool,
                       len(blocks))


def _thresholds(blocks: list[dict[str, Any]]) -> Any:
    """``cover.threshold`` as the per-row reader reads it (``"inf"`` strings, null NaN)."""
    vals = list(map(dict.get, blocks, repeat("threshold")))
    if set(map(type, vals)) <= _NUMBER:
        return np.array(vals, dtype=np.float64)
    return np.fromiter(map(threshold_value, vals), np.float64, len(vals))
