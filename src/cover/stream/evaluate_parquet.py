"""Parquet regions for ``cover evaluate`` (``cover certify`` on a Parquet file), a batch
of rows at a time, as the records a JSON line would give."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.errors import InputError
from cover.io.jsonl import RawRows
from cover.io.opener import parquet_file


def parquet_region_batches(path: str | Path, batch_rows: int, columns: str | None
                     ) -> Iterator[RawRows]:
    """Rows of a Parquet ``cover certify`` output as the records a JSON line would give:
    qid, vid, query and windows through the column mapping, the ``cover`` struct with
    the calibrator fields of the schema metadata (``cover.calibrator``)."""
    from cover.io.generic import arrow_columns, parse_columns, pyarrow_modules
    from cover.stream.arrow import DEFAULT_COLUMNS
    from cover.stream.evaluate_csv import block_fields

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
    given = parse_columns(columns) if columns else {
        f: c for f, c in {**DEFAULT_COLUMNS, "query": "query"}.items()
        if f != "duration" and c in schema.names}
    mapping = {f: c for f, c in given.items() if f in ("qid", "vid", "query", "windows",
                                                       "start", "end")}
    first = 0
    for batch in reader.iter_batches(batch_size=batch_rows):
        batch = pa.Table.from_batches([batch])
        cols, _ = arrow_columns(batch, mapping, name, first, with_records=False)
        off = cols.offsets.tolist()
        win = cols.windows.tolist()
        blocks = batch.column("cover").to_pylist()
        query = [None] * len(cols) if cols.query is None else cols.query.tolist()
        records = [{"qid": q, "vid": v, "query": t, "pred_relevant_windows": win[a:b],
                    "cover": {**(c or {}), **meta}}
                   for q, v, t, a, b, c in zip(_ids(batch, mapping, "qid", cols.qid),
                                               _ids(batch, mapping, "vid", cols.vid), query,
                                               off[:-1], off[1:], blocks, strict=True)]
        first += len(records)
        yield RawRows(name, records, cols.line)


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
