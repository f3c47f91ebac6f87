"""A batch of ``cover certify`` output lines read in bulk for ``cover evaluate``: the
checks of :func:`cover.io.regions_jsonl.regions_from_rows`, done over the whole batch.

The per-row reader looks at each row's ``cover`` block and windows in Python, several
times the cost of the parse. Here each line is decoded by msgspec into a small struct of
the fields evaluate reads: qid, vid, query, the predicted windows and the ``cover``
block's fields (windows and region kept as raw bytes, each read in one decode for the
batch: :func:`cover.io.jsonl_typed.windows_column`). Everything else, the echoed saliency
scores first of all, is skipped without building a Python object: the per-row reader
does not read a certified row's saliency either. The checks then run column by column.

A batch passes only when every row is plainly clean: anything else (a line that is not
a JSON object or not UTF-8 text, NaN or a number beyond float range, a bad or repeated
qid, an absent vid, a region or window that is not a list of numbers, a region outside
``[0, T]``, a bad duration, windows of mixed widths, another calibrator's fields) makes
:func:`decode_regions` return None and :func:`load_regions` reruns the batch through the
per-row reader, so every rejection, message and count is exactly its own. So does an
integer outside ``[-2**63, 2**64)`` where its value is kept (the calibrator fields, a
duration, a threshold, a query, a reason): orjson, the per-row reader's first parser,
reads it as a float (:func:`cover.io.jsonl_typed.exact_values`). Rows certify rejected
are dropped and counted on both paths, except those rejected for an empty region
(``[]``), evaluated as misses (:mod:`cover.row_status`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress, repeat
from operator import attrgetter, eq, is_, itemgetter
from typing import Any

import msgspec
import numpy as np
from msgspec import UNSET, Raw, UnsetType
from numpy.typing import NDArray

from cover.io.jsonl import parse_json_lines
from cover.io.jsonl_batch import gc_paused
from cover.io.jsonl_typed import exact_values, pairs_column, typed_lines, windows_column
from cover.io.regions_block import META_KEYS, META_OPTIONAL, meta_of, threshold_value
from cover.io.regions_columns import RegionColumns, RowIds, bulk_regions
from cover.io.regions_read import LoadedRegions, regions_from_rows
from cover.io.regions_windows import RowSources
from cover.io.seen import SeenLines
from cover.ragged import offsets_from_lengths
from cover.row_status import STATUSES


class _Block(msgspec.Struct, gc=False):
    """The fields of a ``cover`` block evaluate reads (absent: None, or UNSET where
    the per-row reader tells absent from null)."""

    status: str | None = None  # anything else: the per-row reader says what is wrong
    region: Raw | UnsetType = UNSET
    refused: Any = UNSET
    duration: Any = None
    score: Any = None
    rule: Any = None
    alpha: Any = None
    k: Any = None
    n_calibration: Any = None
    calibration_sha256: Any = None
    relevance: Any = None
    threshold: Any = None
    in_calibration: Any = None
    reason: Any = UNSET


class _Row(msgspec.Struct, gc=False):
    """The fields of a certified row evaluate reads (``cover``: None when absent or null;
    a ``cover`` that is not an object is refused)."""

    qid: Any = None
    vid: Any = None
    query: Any = None
    pred_relevant_windows: Raw | UnsetType = UNSET
    cover: _Block | None = None
    start: Any = None  # the base window of a row without pred_relevant_windows
    end: Any = None  # (:func:`cover.io.regions_windows.base_windows`)


_DECODE = msgspec.json.Decoder(_Row).decode
_FIELDS = attrgetter("qid", "vid", "query", "pred_relevant_windows", "cover", "start", "end")
_NUMBER = frozenset({int, float})
_STATUS = attrgetter("status")
_META = (*META_KEYS, *META_OPTIONAL)
_STATUSES = frozenset(STATUSES)


def load_regions(name: str, batch: Sequence[tuple[int, bytes]], *,
                 seen: SeenLines | None = None,
                 first: tuple[dict[str, Any], int] | None = None,
                 windows: RowSources | None = None) -> LoadedRegions:
    """:func:`~cover.io.regions_jsonl.regions_from_rows` of the ``(line number, bytes)``
    pairs ``batch``: in bulk when the batch is clean, else row by row. The bulk read
    keeps no parsed rows (the table's ``records`` is None). ``windows``: where a row's
    base windows are, named by ``--columns`` (:func:`cover.io.regions_windows.windows_of`):
    such a batch is read row by row."""
    with gc_paused():
        try:
            got = (decode_regions(name, batch, seen=seen, first=first) if windows is None
                   else None)
        except OverflowError:  # a number beyond float range: the per-row reader says so
            got = None
        if got is not None:
            return got
        return regions_from_rows(parse_json_lines(name, batch), seen=seen, first=first,
                                 windows=windows)


def decode_regions(name: str, batch: Sequence[tuple[int, bytes]], *,
                   seen: SeenLines | None = None,
                   first: tuple[dict[str, Any], int] | None = None) -> LoadedRegions | None:
    """The :class:`LoadedRegions` of a batch whose every row is clean, or None when a
    row needs the per-row reader (which then says what is wrong). ``seen`` gets the
    batch's qids only when the batch passes."""
    cols = _typed_rows(list(map(itemgetter(1), batch)))
    if cols is None or None in cols[4]:
        return None  # a row without a cover block
    blocks: list[_Block] = cols[4]
    was_rejected = np.fromiter(map(eq, map(_STATUS, blocks), repeat("rejected")), bool,
                               len(blocks))
    # An empty region (``[]``, JSON blanks aside) is evaluated: cover.row_status.
    for i in np.flatnonzero(was_rejected).tolist():
        region = blocks[i].region
        was_rejected[i] = (region is UNSET
                           or bytes(region).translate(None, b" \t\r\n") != b"[]")
    line_no = np.fromiter(map(itemgetter(0), batch), np.int64, len(batch))
    if was_rejected.any():
        keep = (~was_rejected).tolist()
        cols = tuple(list(compress(c, keep)) for c in cols)
        line_no = line_no[~was_rejected]
    qv, vv, query, wins, blocks, starts, ends = cols
    n = len(blocks)
    if n == 0 or not exact_values(query):
        return None
    win: tuple[NDArray[np.float64], NDArray[np.int64]] | None = None
    if wins.count(UNSET) == n:  # every row of another layout: their numbers as columns
        win = _start_end_column(starts, ends)
    if win is None and UNSET in wins:  # some rows: each its start and end, as the per-row
        paired = _start_end_windows(wins, starts, ends)  # reader reads them
        if paired is None:
            return None
        wins = paired
    # the typed fields as the per-row reader's dict has them (absent: None, as meta_of reads)
    first = first if first is not None else (
        meta_of({k: getattr(blocks[0], k) for k in _META}), int(line_no[0]))
    if not exact_values(list(first[0].values())):
        return None
    for k in _META:  # list.count compares as the per-row dicts do
        if list(map(attrgetter(k), blocks)).count(first[0].get(k)) != n:
            return None
    got = _regions(blocks)
    win = win if win is not None else windows_column(wins)
    refused = _refused(blocks)
    thresholds, reasons = _thresholds(blocks), _abstain_reasons(blocks)
    if got is None or win is None or refused is None or thresholds is None or reasons is False:
        return None
    status = np.array(list(map(_STATUS, blocks)), dtype=object)
    in_cal = np.fromiter(map(is_, map(attrgetter("in_calibration"), blocks), repeat(True)),
                         bool, n)
    rc = RegionColumns(status, refused, got[0], got[1], got[2], thresholds, in_cal)
    ids = RowIds(name, qv, vv, query, win[0], offsets_from_lengths(win[1]), line_no)
    return bulk_regions(rc, ids, first[0], seen=seen, first=first, statuses=_STATUSES,
                        abstained=reasons, rejected_at_certify=int(was_rejected.sum()))


def _start_end_column(starts: list[Any], ends: list[Any]
                      ) -> tuple[NDArray[np.float64], NDArray[np.int64]] | None:
    """``(windows (n, 3), one a row)`` when every row's start and end are numbers (a file
    of another layout, DisTime's), read as two columns, no Python object a row; None
    otherwise (:func:`_start_end_windows` reads them row by row)."""
    if not (set(map(type, starts)) <= _NUMBER and set(map(type, ends)) <= _NUMBER
            and exact_values(starts) and exact_values(ends)):
        return None
    s, e = np.array(starts, dtype=np.float64), np.array(ends, dtype=np.float64)
    # scored as the per-row reader scores a lone two-number window (by list order: -0.0)
    return np.column_stack([s, e, np.full(s.size, -0.0)]), np.ones(s.size, dtype=np.int64)


def _start_end_windows(wins: list[Any], starts: list[Any], ends: list[Any]
                       ) -> list[Any] | None:
    """``wins`` with each absent one made ``[[start, end]]`` where the row's start and end
    both hold numbers (:func:`cover.io.regions_windows.base_windows`); None when one is an
    integer the two parsers read apart."""
    pick = [w is UNSET and type(s) in _NUMBER and type(e) in _NUMBER
            for w, s, e in zip(wins, starts, ends, strict=True)]
    if not any(pick):
        return wins
    pairs = [v for p, s, e in zip(pick, starts, ends, strict=True) if p for v in (s, e)]
    if not exact_values(pairs):
        return None
    # Scored as the per-row reader scores a lone two-number window (by list order: -0.0),
    # so a batch mixing these rows with Moment-DETR's three-number ones stays in bulk.
    return [Raw(f"[[{s!r}, {e!r}, -0.0]]".encode()) if p else w
            for p, w, s, e in zip(pick, wins, starts, ends, strict=True)]


def _typed_rows(lines: list[bytes]) -> tuple[list[Any], ...] | None:
    """``(qids, vids, queries, raw windows, blocks)`` of the lines, or None when a line
    needs the per-row reader (refused by the structs, or not UTF-8: msgspec does not
    look inside a skipped string)."""
    rows = typed_lines(_DECODE, lines)
    if not rows:
        return None
    return tuple(map(list, zip(*map(_FIELDS, rows), strict=True)))


def _regions(blocks: list[_Block]) -> tuple[Any, Any, Any] | None:
    """``(components (m, 2), offsets, durations)`` when every region is a list of
    ``[start, end]`` number pairs and every duration a number, else None."""
    durs = list(map(attrgetter("duration"), blocks))
    if not set(map(type, durs)) <= _NUMBER or not exact_values(durs):
        return None
    got = pairs_column(list(map(attrgetter("region"), blocks)))
    if got is None:
        return None
    return got[0], offsets_from_lengths(got[1]), np.array(durs, dtype=np.float64)


def _refused(blocks: list[_Block]) -> NDArray[np.bool_] | None:
    """Each ``cover.refused`` (when absent: whether the status is ``refused``), or None
    when one is not a boolean (:func:`cover.io.regions_block.status_problems` says so)."""
    refused = [s == "refused" if r is UNSET else r
               for r, s in zip(map(attrgetter("refused"), blocks), map(_STATUS, blocks),
                               strict=True)]
    return np.array(refused, dtype=bool) if set(map(type, refused)) <= {bool} else None


def _abstain_reasons(blocks: list[_Block]) -> Any:
    """:func:`cover.io.regions_block.abstain_reasons` of typed blocks; False for a reason
    the two parsers read apart."""
    if "abstained" not in map(_STATUS, blocks):
        return None
    if not exact_values([b.reason for b in blocks
                         if b.status == "abstained" and b.reason is not UNSET]):
        return False
    return np.array([("abstained" if b.reason is UNSET else str(b.reason))
                     if b.status == "abstained" else None for b in blocks], dtype=object)


def _thresholds(blocks: list[_Block]) -> Any:
    """``cover.threshold`` as the per-row reader reads it (``"inf"`` strings, null NaN);
    None for an integer the two parsers read apart."""
    vals = list(map(attrgetter("threshold"), blocks))
    if not exact_values(vals):
        return None
    if set(map(type, vals)) <= _NUMBER:
        return np.array(vals, dtype=np.float64)
    return np.fromiter(map(threshold_value, vals), np.float64, len(vals))
