"""CSV (or TSV) and Parquet regions for ``cover evaluate`` (``cover certify`` on such a
file), read a batch of rows at a time. A batch becomes the records a JSON line would
give, so every check and message is :func:`cover.io.regions_jsonl.regions_from_rows`'s.

qid and vid (and query, and the predicted windows or top-1 ``start``/``end``, which the
field's metrics use) come through ``--columns``, by default the columns of those names.
A Parquet row carries its ``cover`` struct, with the calibrator fields of the schema
metadata (``cover.calibrator``: :func:`cover.stream.arrow.calibrator_metadata`). A CSV
row carries the cover columns (:data:`cover.stream.output_fields.COVER_COLUMNS`: status, region as
JSON text, refused, duration, threshold, threshold_end, reason) after the input's own,
and no calibrator fields (score, alpha, k, n_calibration, the calibration digest). With
``--calibrator`` (the file certify used) they are those of the Parquet metadata and the
test band is reported; without it the coverage is measured as ever but the band is not
known.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.calibrator import Calibrator
from cover.calibrate.registry import get_rule
from cover.errors import InputError, RowProblem
from cover.io.columns import Columns
from cover.io.csv_lines import csv_batches
from cover.io.generic import arrow_columns, parse_columns, pyarrow_modules
from cover.io.jsonl import RawRows
from cover.io.opener import parquet_file
from cover.io.regions_columns import (
    RowIds,
    arrow_floats,
    bulk_regions,
    cell_columns,
    struct_columns,
)
from cover.io.regions_read import LoadedRegions, Thresholds, regions_from_rows
from cover.io.seen import SeenLines
from cover.ragged import offsets_from_lengths
from cover.stream.arrow import (
    DEFAULT_COLUMNS,
    METADATA_KEYS,
    block_fields,
    calibrator_metadata,
)
from cover.stream.output_fields import COVER_COLUMNS

_STRINGS = ("cover_status", "cover_region", "cover_refused")
#: ``cover_refused`` as certify writes it; any other text is kept for the reader to reject.
_BOOLS = {"true": True, "false": False}
_NUMBERS = ("cover_duration", "cover_threshold")


def calibrator_of(path: str | Path | None) -> tuple[dict[str, Any], Thresholds | None]:
    """The ``cover`` block's calibrator fields from a saved calibrator, and the
    thresholds it gives: each row's ``cover_threshold`` must be one, else the rows came
    from another calibrator. Without one: all fields None (the regions are evaluated,
    the test band is not known) and no thresholds; a rule with a threshold per row from
    its covariates (``conditional``) has no list to check against either: its rows pass
    as JSON-lines rows of that rule do."""
    if path is None:
        return dict.fromkeys(METADATA_KEYS), None
    cal = Calibrator.load(path)
    fields = block_fields(calibrator_metadata(cal)[b"cover.calibrator"])
    if get_rule(cal.rule).per_row is not None:
        return fields, None
    # cover.threshold of a row is the start side's, as certify writes it
    lams = [lam_start for lam_start, _ in cal.group_lams().values()]
    return fields, Thresholds(np.unique(np.array(lams, dtype=np.float64)), str(path))


def _csv_parts(path: str | Path, batch_rows: int, columns: str | None,
               meta: dict[str, Any]) -> Iterator[_CsvPart]:
    import pyarrow as pa

    given = parse_columns(columns) if columns else {"qid": "qid"}
    csv_in = csv_batches(path, given, batch_rows)  # checks the mapped columns are there
    missing = [c for c in COVER_COLUMNS[:4] if c not in csv_in.names]
    if missing:
        raise InputError(f"{path}:1: no column {missing[0]!r} in the header (is this the "
                         "CSV output of `cover certify`?)")
    if not columns:
        given |= {f: f for f in ("vid", "query", "start", "end") if f in csv_in.names}
    mapping = {f: c for f, c in given.items() if f in ("qid", "vid", "query", "start", "end")}
    types = {c: pa.string() for c in _STRINGS}
    types |= {c: pa.float64() for c in _NUMBERS}
    types |= {mapping[f]: pa.string() for f in ("qid", "vid", "query") if f in mapping}
    types |= {mapping[f]: pa.float64() for f in ("start", "end") if f in mapping}
    for batch, table, lines, bad in csv_in.parsed(types):
        yield _CsvPart(str(path), batch, table, lines, bad, mapping, meta, list(types))


@dataclass(frozen=True)
class _CsvPart:
    """One batch of a CSV regions file: its lines, the typed table and what pyarrow
    could not read, the mapping, the calibrator fields and the columns read."""

    name: str
    batch: list[tuple[int, bytes]]
    table: Any
    lines: NDArray[np.int64]
    bad: dict[int, str]
    mapping: dict[str, str]
    meta: dict[str, Any]
    read: list[str]

    def records(self) -> RawRows:
        cols = {c: self.table.column(c).to_pylist() for c in self.read}
        return _set_aside(self.name, self.batch, _records(cols, self.mapping, self.meta),
                          self.lines, self.bad)

    def bulk(self, **kw: Any) -> LoadedRegions | None:
        m, t = self.mapping, self.table
        if self.bad or "vid" not in m:
            return None
        rc = cell_columns(*(t.column(c).to_pylist() for c in _STRINGS),
                          *(t.column(c) for c in _NUMBERS))
        if rc is None:
            return None
        n = t.num_rows
        if "start" in m and "end" in m:  # a window where both cells hold a number
            s, e = t.column(m["start"]), t.column(m["end"])
            has = ~(s.is_null().to_numpy() | e.is_null().to_numpy())
            win = np.column_stack([arrow_floats(s)[has], arrow_floats(e)[has]])
            off = offsets_from_lengths(has)
        else:
            win, off = np.empty((0, 2)), np.zeros(n + 1, dtype=np.int64)
        query = t.column(m["query"]).to_pylist() if "query" in m else [None] * n
        ids = RowIds(self.name, t.column(m["qid"]).to_pylist(), t.column(m["vid"]).to_pylist(),
                     query, win, off, self.lines)
        return bulk_regions(rc, ids, self.meta, **kw)


def _set_aside(name: str, batch: list[tuple[int, bytes]], records: list[dict[str, Any]],
               lines: Any, bad: dict[int, str]) -> RawRows:
    """A batch's records as rows, those of the lines pyarrow cannot read (``bad``: row ->
    why, :func:`cover.io.csv_lines.parse_lines`) rejected with their reason."""
    if not bad:
        return RawRows(name, records, lines)
    keep = [i for i in range(len(records)) if i not in bad]
    raw = RawRows(name, [records[i] for i in keep], lines[keep])
    for i, why in sorted(bad.items()):
        qid = records[i].get("qid") or None
        raw.set_aside(RowProblem(name, int(lines[i]), qid, why, "rejected"),
                      batch[i][1].decode("utf-8", "backslashreplace"))
    return raw


def _records(cols: dict[str, list[Any]], mapping: dict[str, str], meta: dict[str, Any]
             ) -> list[dict[str, Any]]:
    """One record per row: ids, query, the top-1 window, the ``cover`` block."""
    n = len(cols["cover_status"])
    ids = [f for f in ("qid", "vid", "query") if f in mapping]
    start, end = (cols[mapping[f]] if f in mapping else [None] * n for f in ("start", "end"))
    # the cover columns zipped in the order of _STRINGS, then _NUMBERS
    return [{**{f: cols[mapping[f]][i] for f in ids},
             "pred_relevant_windows": [] if s is None or e is None else [[s, e]],
             "cover": {"status": status, "region": _region(region),
                       "refused": _BOOLS.get(refused, refused), "duration": dur, **meta,
                       "threshold": thr}}
            for i, s, e, status, region, refused, dur, thr in zip(
                range(n), start, end, *(cols[c] for c in (*_STRINGS, *_NUMBERS)), strict=True)]


def _region(text: str) -> Any:
    """The region's JSON (the text itself when it is not JSON: the reader rejects it)."""
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def region_readers(path: str | Path, kind: str, batch_rows: int, columns: str | None,
                   meta: dict[str, Any], thresholds: Thresholds | None
                   ) -> Iterator[Callable[..., LoadedRegions]]:
    """Per batch of a Parquet or CSV ``cover certify`` output (``kind``; ``meta``, for
    CSV: the calibrator fields of every block), ``read(seen=..., first=...)``: the
    batch's columns checked in bulk (:func:`cover.io.regions_columns.bulk_regions`)
    when every row is plainly clean, else its records through the per-row reader
    (:func:`cover.io.regions_read.regions_from_rows`), which then says what is wrong."""
    parts: Iterator[_ParquetPart] | Iterator[_CsvPart] = (
        _parquet_parts(path, batch_rows, columns) if kind == "parquet" else
        _csv_parts(path, batch_rows, columns, meta))
    for part in parts:
        yield partial(_read_part, part, thresholds)


def _read_part(part: _ParquetPart | _CsvPart, thresholds: Thresholds | None, *,
               seen: SeenLines | None = None,
               first: tuple[dict[str, Any], int] | None = None) -> LoadedRegions:
    got = part.bulk(thresholds=thresholds, seen=seen, first=first)
    if got is not None:
        return got
    return regions_from_rows(part.records(), seen=seen, first=first, thresholds=thresholds)


@dataclass(frozen=True)
class _ParquetPart:
    """One batch of a Parquet regions file: the Arrow table, its mapped columns, the
    mapping and the file's calibrator fields."""

    batch: Any
    cols: Columns
    mapping: dict[str, str]
    meta: dict[str, Any]

    def ids(self) -> tuple[list[Any], list[Any]]:
        return (_ids(self.batch, self.mapping, "qid", self.cols.qid),
                _ids(self.batch, self.mapping, "vid", self.cols.vid))

    def records(self) -> RawRows:
        """The batch's records, as JSON lines would give them."""
        cols = self.cols
        off = cols.offsets.tolist()
        win = cols.windows.tolist()
        blocks = self.batch.column("cover").to_pylist()
        query = [None] * len(cols) if cols.query is None else cols.query.tolist()
        records = [{"qid": q, "vid": v, "query": t, "pred_relevant_windows": win[a:b],
                    "cover": {**(c or {}), **self.meta}}
                   for q, v, t, a, b, c in zip(*self.ids(), query, off[:-1], off[1:], blocks,
                                               strict=True)]
        if "vid" not in self.mapping:  # no vid column: the rows name none (JSON lines')
            for r in records:
                del r["vid"]
        return RawRows(cols.source, records, cols.line)

    def bulk(self, **kw: Any) -> LoadedRegions | None:
        cols = self.cols
        if cols.reasons or cols.problems:
            return None
        rc = struct_columns(self.batch.column("cover").combine_chunks())
        if rc is None:
            return None
        query = [None] * len(cols) if cols.query is None else cols.query.tolist()
        ids = RowIds(cols.source, *self.ids(), query, cols.windows, cols.offsets, cols.line)
        got = bulk_regions(rc, ids, self.meta, **kw)
        if got is None or "vid" in self.mapping:
            return got
        return replace(got, vid_absent=np.ones(len(got.table), dtype=bool))  # vid = qid


def _parquet_parts(path: str | Path, batch_rows: int, columns: str | None
                   ) -> Iterator[_ParquetPart]:
    pyarrow_modules()
    import pyarrow as pa
    name = str(path)
    reader = parquet_file(path, pre_buffer=False)  # a stream: no read-ahead kept
    schema = reader.schema_arrow
    raw_meta = (schema.metadata or {}).get(b"cover.calibrator")
    if "cover" not in schema.names or raw_meta is None:
        raise InputError(f"{name}: no 'cover' column with cover.calibrator metadata (is this "
                         "the output of `cover certify`?)")
    meta = block_fields(raw_meta)
    # The base window by name, as a row of JSON lines has it
    # (:func:`cover.io.regions_windows.base_windows`): pred_relevant_windows, else start and end.
    named = {**DEFAULT_COLUMNS, "query": "query"}
    if DEFAULT_COLUMNS["windows"] not in schema.names:
        named |= {"start": "start", "end": "end"}
    given = parse_columns(columns) if columns else {
        f: c for f, c in named.items() if f != "duration" and c in schema.names}
    mapping = {f: c for f, c in given.items() if f in ("qid", "vid", "query", "windows",
                                                       "start", "end")}
    first = 0
    for batch in reader.iter_batches(batch_size=batch_rows):
        table = pa.Table.from_batches([batch])
        cols, _ = arrow_columns(table, mapping, name, first, with_records=False)
        first += table.num_rows
        yield _ParquetPart(table, cols, mapping, meta)


def _ids(batch: Any, mapping: dict[str, str], key: str, parsed: NDArray[np.str_]
         ) -> list[Any]:
    """The ids of a Parquet string column as written (numpy text drops a trailing NUL,
    which would join ``"5\\0"`` to ``"5"``; the reader's id rule rejects it), else the
    parsed ones."""
    import pyarrow as pa

    name = mapping.get(key)
    if name is None or name not in batch.column_names:
        return parsed.tolist()
    col = batch.column(name)
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        return parsed.tolist()
    raw = col.to_pylist()
    return [r if isinstance(r, str) and "\x00" in r else p
            for r, p in zip(raw, parsed.tolist(), strict=True)]
