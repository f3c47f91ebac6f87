"""Certify one Arrow batch: the kernel shared by file streaming and distributed engines.

A batch of prediction rows (any Arrow table; the fields are found through a column
mapping, see :mod:`cover.io.generic`) goes in; the same batch comes out with one
struct column ``cover`` appended, the Arrow twin of the JSON ``cover`` block::

    cover: struct<status: string,            # certified | refused | rejected
                  region: list<list<double>>, # [[start, end], ...] s; null if rejected
                  refused: bool, duration: double,
                  threshold: double, threshold_end: double,
                  in_calibration: bool,       # a row the calibrator was fitted on
                  reason: string,             # rejected and abstained rows only
                  p_value: double>            # calibrators fitted with --keep-scores only

A row whose region is empty is rejected with its reason and region ``[]``
(:mod:`cover.row_status`).

Every input row comes out, in input order: nothing is dropped, except, with a
``--qids`` list (the stage's ``qids``), the rows it does not list that are not rejected,
as on every path (:func:`certify_rows` says which rows come out). The calibrator's
score, rule, alpha, k and n go into the schema metadata (:func:`calibrator_metadata`).
The work is columnar: no Python object per row except the qid text the checks need.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from typing import Any, NamedTuple, ParamSpec

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.calibrator import Calibrator
from cover.data.rules import duplicate_reason
from cover.errors import RowProblem
from cover.io.columns import prediction_table
from cover.io.generic import arrow_columns, parse_columns
from cover.io.generic import pyarrow_module as pa  # pyarrow, or the extra to install
from cover.regions import Regions
from cover.row_status import STATUSES, status_codes, status_reasons
from cover.stream.output_fields import calibrator_fields, refuse_certified
from cover.stream.stage import CertifyStage, StreamCounts

P = ParamSpec("P")

#: Default field mapping: Moment-DETR / Lighthouse names as Parquet columns.
DEFAULT_COLUMNS = {"qid": "qid", "vid": "vid", "duration": "duration",
                   "windows": "pred_relevant_windows"}


def cover_type(p_value: bool = False) -> Any:
    """The Arrow type of the ``cover`` column; ``p_value``: with the field ``p_value``
    last (the calibrator kept its scores, :attr:`CertifyStage.p_values`), as a JSON
    block has ``p_value`` only then."""
    p = pa()
    return p.struct([
        ("status", p.string()), ("region", p.list_(p.list_(p.float64()))),
        ("refused", p.bool_()), ("duration", p.float64()), ("threshold", p.float64()),
        ("threshold_end", p.float64()), ("in_calibration", p.bool_()),
        ("reason", p.string()), *([("p_value", p.float64())] if p_value else []),
    ])


def calibrator_metadata(cal: Calibrator) -> dict[bytes, bytes]:
    """Schema metadata ``cover.calibrator``: what a reader needs to trust the regions."""
    meta = calibrator_fields(cal, fitted_on=(cal.fitted_on_ or {}).get("sha256"))
    return {b"cover.calibrator": json.dumps(meta).encode()}


#: The calibrator fields of a ``cover`` block that the metadata holds by these names.
METADATA_KEYS = ("score", "rule", "alpha", "k", "n_calibration", "relevance")


def block_fields(metadata: bytes) -> dict[str, Any]:
    """The ``cover`` block's calibrator fields of the ``cover.calibrator`` metadata (the
    inverse of :func:`calibrator_metadata`, as a JSON block names them)."""
    cal = json.loads(metadata)
    meta = {k: cal.get(k) for k in METADATA_KEYS}
    if cal.get("fitted_on"):
        meta["calibration_sha256"] = cal["fitted_on"]
    return meta


def _regions_array(regions: Regions, kept: NDArray[np.int64], valid: NDArray[np.bool_]
                   ) -> Any:
    """``list<list<double>>`` of ``n`` rows: row ``kept[j]`` holds region ``j``, the
    others are null. Built from the flat interval buffers, no Python list per row."""
    p = pa()
    iv = regions.intervals
    n = valid.size
    every = kept.size == n  # every row kept, in order: the intervals' own offsets
    if every:
        offsets = (iv.offsets - iv.offsets[0]).astype(np.int32)
    else:
        comps = np.zeros(n, dtype=np.int64)
        comps[kept] = iv.n_components
        offsets = np.zeros(n + 1, dtype=np.int32)
        np.cumsum(comps, out=offsets[1:])
    pairs = np.empty(2 * iv.starts.size, dtype=np.float64)
    pairs[0::2], pairs[1::2] = iv.starts, iv.ends
    inner = p.ListArray.from_arrays(np.arange(0, pairs.size + 1, 2, dtype=np.int32), pairs)
    return p.ListArray.from_arrays(offsets, inner, mask=None if every else p.array(~valid))


class CertifiedRows(NamedTuple):
    """One batch certified: the rows written (``table``, the input's columns plus
    ``cover``), every problem found, and which input rows they are (``rows``, positions in
    the batch; None: every row)."""

    table: Any
    problems: list[RowProblem]
    rows: NDArray[np.int64] | None


def certify_rows(
    cal: Calibrator,
    batch: Any,
    *,
    columns: dict[str, str] | str | None = None,
    videos: tuple[NDArray[np.str_], NDArray[np.float64]] | None = None,
    first_line: int = 1,
    source: str = "<batch>",
    lines: NDArray[np.int64] | None = None,
    reasons: dict[int, str] | None = None,
    stage: CertifyStage | None = None,
    repeats: dict[int, str] | None = None,
    counts: StreamCounts | None = None,
) -> CertifiedRows:
    """One Arrow ``RecordBatch`` or ``Table`` certified (:class:`CertifiedRows`).

    The rows go through the one certify stage of every format
    (:class:`~cover.stream.stage.CertifyStage`: ids, durations from the row or
    ``videos`` = ``(sorted vids, durations)``, clipping, ``--strict``, the calibrator,
    the calibration-row mark); ``stage`` is the run's, else one is made of ``cal`` and
    ``videos``. ``first_line`` numbers the batch's rows in messages (row ``i`` is line
    ``first_line + i``), or ``lines`` gives each row's line (increasing). ``reasons``
    (row index -> why) rejects rows the caller found bad (e.g. a line it could not
    read); ``repeats`` the rows repeating a qid of an earlier row
    (:func:`repeat_reasons`), after the reader's own findings, as a whole read orders
    them. Bad rows are rejected with a reason, never raised; ``problems`` lists them
    and the clipped rows. With a ``--qids`` list, a row it does not list is written only
    when rejected (a repeated qid, a row that cannot be read), as the JSON-lines stream
    writes it. ``counts``, when given, counts the rows written
    (:meth:`~cover.stream.stage.StreamCounts.add_staged`).
    """
    p = pa()
    stage = stage or CertifyStage.of(cal, videos=videos)
    mapping = parse_columns(columns if columns is not None else DEFAULT_COLUMNS)
    table = batch if isinstance(batch, p.Table) else p.Table.from_batches([batch])
    n = table.num_rows
    refuse_certified(source, table.column_names)
    cols, _ = arrow_columns(table, mapping, source, with_records=False, raw_ids=True)
    cols.line = (np.arange(first_line, first_line + n, dtype=np.int64) if lines is None
                 else np.asarray(lines, dtype=np.int64))
    loaded = prediction_table(cols, clip=cal.clip_ or 2.0, on_error="reject",
                              reasons=dict(reasons or {}), repeats=repeats)
    done = stage.run(loaded)
    regions = done.regions
    assert done.table.line is not None
    every = len(done.table) == n  # no row rejected: the columns go out as they are
    kept = np.arange(n) if every else np.searchsorted(cols.line, done.table.line)
    valid = np.zeros(n, dtype=bool)
    valid[kept] = True
    codes = np.zeros(n, dtype=np.int8)  # cover.row_status.STATUSES: 0 is rejected
    codes[kept] = status_codes(regions)
    why = {int(np.searchsorted(cols.line, prob.line)): prob.problem for prob in done.bad}
    # the rows written: those kept and those rejected (a --qids list drops the others)
    rows = None
    if stage.qids is not None:
        shown = valid.copy()
        shown[list(why)] = True
        rows = None if shown.all() else np.flatnonzero(shown)
    if counts is not None:
        counts.add_staged(dict(zip(STATUSES, np.bincount(
            codes if rows is None else codes[rows], minlength=len(STATUSES)).tolist(),
            strict=True)), done)
    why.update({int(kept[i]): why_not  # rejected ([] kept) or abstained
                for i, why_not in status_reasons(regions).items()})

    def per_row(values: NDArray[Any], flag: bool = False) -> Any:
        """One value per input row: a rejected row's is null (a flag: False)."""
        values = np.asarray(values, dtype=bool if flag else np.float64)
        if every:
            return p.array(values)
        out = np.zeros(n, dtype=bool) if flag else np.full(n, np.nan)
        out[kept] = values
        return p.array(out, mask=None if flag else ~valid)

    in_cal = (np.zeros(len(kept), dtype=bool) if done.in_calibration is None
              else done.in_calibration)
    t_end = regions.threshold if regions.threshold_end is None else regions.threshold_end
    fields = [p.array(STATUSES, p.string()).take(p.array(codes)),
              _regions_array(regions, kept, valid),
              per_row(regions.refused, flag=True),
              per_row(regions.duration), per_row(regions.threshold), per_row(t_end),
              per_row(in_cal, flag=True), _text_at(n, why)]
    if stage.p_values:
        assert regions.p_value is not None  # the calibrator kept its scores
        fields.append(per_row(regions.p_value))
    block = p.StructArray.from_arrays(fields, fields=list(cover_type(stage.p_values)))
    out = table.append_column("cover", block)
    return CertifiedRows(out if rows is None else out.take(rows), done.problems, rows)


def _pair(rows: Callable[P, CertifiedRows]) -> Callable[P, tuple[Any, list[RowProblem]]]:
    """``rows`` giving ``(table, problems)`` of its :class:`CertifiedRows`, with the same
    typed arguments."""
    @functools.wraps(rows)
    def pair(*args: P.args, **kwargs: P.kwargs) -> tuple[Any, list[RowProblem]]:
        done = rows(*args, **kwargs)
        return done.table, done.problems

    # help() and editors show the pair it returns, not the rows' result
    pair.__signature__ = inspect.signature(rows).replace(  # type: ignore[attr-defined]
        return_annotation="tuple[Any, list[RowProblem]]")
    pair.__doc__ = ("``(batch + cover column, problems)`` for one Arrow ``RecordBatch`` or "
                    "``Table``, the entry point of a distributed engine (Ray, Dask): the rows "
                    ":func:`certify_rows` writes (every row, unless ``stage`` has a "
                    "``--qids`` list), with its arguments.")
    return pair


#: :func:`certify_rows` as ``(table, problems)``: what Ray's and Dask's batches return.
certify_batch = _pair(certify_rows)


def _text_at(n: int, text: dict[int, str]) -> Any:
    """A string array of ``n`` rows: ``text[row]`` where given, else null; one Arrow
    gather, no Python object per row."""
    p = pa()
    if not text:
        return p.nulls(n, p.string())
    rows = np.fromiter(text, dtype=np.int64, count=len(text))
    at = np.zeros(n, dtype=np.int32)
    at[rows] = np.arange(rows.size, dtype=np.int32)
    given = np.zeros(n, dtype=bool)
    given[rows] = True
    return p.array(list(text.values()), p.string()).take(p.array(at, mask=~given))


def repeat_reasons(repeats: tuple[NDArray[np.int64], NDArray[np.int64]],
                   line_of: NDArray[np.int64], start: int, n: int) -> dict[int, str]:
    """Reasons for the rows ``start .. start + n - 1`` of a file (0-based) that repeat an
    earlier row's qid (:func:`cover.io.seen.repeated_rows`), keyed by position in the
    batch; ``line_of[row]`` is the line (or row number) messages name."""
    rows, first = repeats
    a, b = np.searchsorted(rows, [start, start + n])
    return {int(r - start): duplicate_reason(int(line_of[f]))
            for r, f in zip(rows[a:b].tolist(), first[a:b].tolist(), strict=True)}
