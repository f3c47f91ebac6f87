"""A large Parquet / CSV / JSON-lines table read a batch of rows at a time, with the
column mapping of :mod:`cover.io.generic`, in bounded memory."""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

from cover.data.table import DEFAULT_CLIP_SECONDS
from cover.errors import InputError, RowProblem
from cover.io.columns import Columns, prediction_table, truth_table
from cover.io.generic import (
    PARQUET_SUFFIXES,
    TABLE_SUFFIXES,
    Role,
    arrow_columns,
    arrow_source,
    kind_suffix,
    parse_columns,
    pyarrow_modules,
    record_columns,
)
from cover.io.jsonl import OnError, json_loads
from cover.io.opener import check_input, open_input, parquet_file
from cover.io.qvhighlights import Loaded
from cover.io.seen import SeenIds


def iter_batches(path: str | Path, columns: str | dict[str, str], *, role: Role,
                 batch_rows: int = 65536, clip: float = DEFAULT_CLIP_SECONDS,
                 on_error: OnError = "raise") -> Iterator[Loaded]:
    """Read a large Parquet / CSV / JSON-lines file ``batch_rows`` rows (CSV: about) at a
    time, one
    :class:`Loaded` per batch, in bounded memory. Lines stay those of the whole file;
    a qid repeated from an earlier batch is rejected like any duplicate."""
    m = parse_columns(columns)
    name = str(path)
    seen = SeenIds()
    for c, records, reasons in _batches(Path(path), m, name, batch_rows):
        dup = np.flatnonzero(seen.add(c.qid))
        reasons |= {int(i): "duplicate qid (seen in an earlier batch)" for i in dup.tolist()
                    if int(i) not in reasons}
        if role == "ground_truth":
            yield truth_table(c, on_error=on_error, records=records, reasons=reasons)
        else:
            yield prediction_table(c, clip=clip, on_error=on_error, records=records,
                                   reasons=reasons)


def _batches(p: Path, m: dict[str, str], name: str, batch_rows: int
             ) -> Iterator[tuple[Columns, NDArray[np.object_], dict[int, str]]]:
    check_input(p)
    suffix = kind_suffix(p)
    if suffix in TABLE_SUFFIXES:
        pa_mod = _pyarrow()
        _, pcsv, _ = pyarrow_modules()
        if suffix in PARQUET_SUFFIXES:
            stream: Any = parquet_file(p).iter_batches(batch_size=batch_rows)
        else:
            with open_input(p) as fh:  # CSV batches are by bytes: size them from the head
                head = fh.read(1 << 16)
            per_row = len(head) / max(1, head.count(b"\n"))
            block = int(per_row * max(batch_rows, 4)) + 64
            stream = pcsv.open_csv(
                arrow_source(p), read_options=pcsv.ReadOptions(block_size=block),
                parse_options=pcsv.ParseOptions(delimiter="\t" if suffix == ".tsv" else ","))
        done = 0
        for batch in stream:
            c, records = arrow_columns(pa_mod.Table.from_batches([batch]), m, name, done)
            done += batch.num_rows
            yield c, records, {}
        return
    rows: list[dict[str, Any]] = []
    lines: list[int] = []
    problems: list[Any] = []
    with open_input(p) as fh:
        for lineno, raw in enumerate(_lines(fh, name), start=1):
            if not raw.strip():
                continue
            try:
                obj = json_loads(raw)
            except ValueError as exc:
                problems.append(RowProblem(name, lineno, None, f"malformed JSON ({exc})",
                                           "rejected"))
                continue
            if not isinstance(obj, dict):
                problems.append(RowProblem(name, lineno, None, "expected a JSON object",
                                           "rejected"))
                continue
            rows.append(obj)
            lines.append(lineno)
            if len(rows) >= batch_rows:
                yield record_columns(rows, np.asarray(lines, dtype=np.int64), problems, m, name)
                rows, lines, problems = [], [], []
    if rows or problems:
        yield record_columns(rows, np.asarray(lines, dtype=np.int64), problems, m, name)


def _lines(fh: IO[bytes], name: str) -> Iterator[bytes]:
    """Lines of ``fh``; a damaged gzip stream is an :class:`InputError` naming the file."""
    try:
        yield from fh
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{name}: damaged or truncated gzip file ({exc})") from None


def _pyarrow() -> Any:
    pyarrow_modules()
    import pyarrow

    return pyarrow
