"""A large Parquet / CSV / JSON-lines table read a batch of rows at a time, with the
column mapping of :mod:`cover.io.generic`, in bounded memory.

:func:`column_batches` is the one batch source behind every mapped read of such a file:
the CSV lines of :func:`cover.io.csv_lines.csv_batches`, the Parquet row groups through
:func:`cover.io.opener.parquet_file`, the JSON lines of :func:`cover.io.lines.line_batches`
parsed as the whole-file reader parses them. Streamed calibration reads its batches
from it; :func:`iter_batches` makes each batch a table."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from cover.data.table import DEFAULT_CLIP_SECONDS
from cover.io.columns import Columns, role_table
from cover.io.csv_lines import csv_batches
from cover.io.generic import (
    CSV_SUFFIXES,
    PARQUET_SUFFIXES,
    Role,
    arrow_columns,
    kind_suffix,
    parse_columns,
    pyarrow_module,
    record_columns,
)
from cover.io.jsonl import OnError, parse_json_lines
from cover.io.lines import line_batches
from cover.io.opener import check_input, parquet_file
from cover.io.qvhighlights import Loaded
from cover.io.seen import SeenIds

Batch = tuple[Columns, NDArray[np.object_], dict[int, str]]


def column_batches(path: str | Path, mapping: dict[str, str], batch_rows: int, *,
                   with_records: bool = True) -> Iterator[Batch]:
    """``(columns, records, {row: why the reader could not read it})`` for each batch of
    about ``batch_rows`` rows of ``path``, rows numbered as the whole-file reader numbers
    them (a CSV's header is line 1; Parquet rows from 1). ``with_records=False``: the
    Arrow formats build no record per row (a JSON line is parsed into one anyway)."""
    p, name = Path(path), str(path)
    check_input(p)
    if kind_suffix(p) in CSV_SUFFIXES:
        for _, table, lines, bad in csv_batches(p, mapping, batch_rows):
            c, records = arrow_columns(table, mapping, name, with_records=with_records)
            c.line = lines
            yield c, records, bad
    elif kind_suffix(p) in PARQUET_SUFFIXES:
        pa = pyarrow_module()
        done = 0
        # one thread, no read-ahead kept: a decoder pool per thread held ~20 MB more for a
        # 2% faster read
        for batch in parquet_file(p, pre_buffer=False).iter_batches(batch_size=batch_rows,
                                                                    use_threads=False):
            yield (*arrow_columns(pa.Table.from_batches([batch]), mapping, name, done,
                                  with_records=with_records), {})
            done += batch.num_rows
    else:
        for numbered in line_batches(p, batch_rows):
            raw = parse_json_lines(name, numbered)
            yield record_columns(raw.records, raw.lines, raw.problems, mapping, name)


def iter_batches(path: str | Path, columns: str | dict[str, str], *, role: Role,
                 batch_rows: int = 65536, clip: float = DEFAULT_CLIP_SECONDS,
                 on_error: OnError = "raise") -> Iterator[Loaded]:
    """Read a large Parquet / CSV / JSON-lines file ``batch_rows`` rows at a time, one
    :class:`Loaded` per batch, in bounded memory (:func:`column_batches`). Lines stay
    those of the whole file; a qid repeated from an earlier batch is rejected like any
    duplicate."""
    seen = SeenIds()
    for c, records, reasons in column_batches(path, parse_columns(columns), batch_rows):
        dup = np.flatnonzero(seen.add(c.qid))
        reasons |= {int(i): "duplicate qid (seen in an earlier batch)" for i in dup.tolist()
                    if int(i) not in reasons}
        yield role_table(role, c, clip=clip, on_error=on_error, records=records,
                         reasons=reasons)
