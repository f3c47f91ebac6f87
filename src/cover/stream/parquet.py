"""Certify a Parquet file of any size in bounded memory: batch in, batch out.

Memory is one batch (``batch_rows`` rows) plus the writer's row group, independent
of the file's size. The output is the input's columns, unchanged, plus the ``cover``
struct column (:mod:`cover.stream.arrow`), written to a temporary file beside the
target and renamed on success (:mod:`cover.io.output`): an interrupted run leaves the
previous output intact.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.calibrator import Calibrator
from cover.data.rules import increasing
from cover.errors import ProblemTally, RowProblem
from cover.io.generic import arrow_column, parse_columns
from cover.io.jsonl import OnError
from cover.io.opener import parquet_file
from cover.io.output import atomic_open
from cover.io.seen import repeated_rows
from cover.stream.arrow import (
    DEFAULT_COLUMNS,
    calibrator_metadata,
    certify_rows,
    cover_type,
    pa,
    repeat_reasons,
)
from cover.stream.stage import CertifyStage, StreamCounts

__all__ = ["DEFAULT_BATCH_ROWS", "StreamCounts", "certify_parquet"]

#: Rows per batch: ~20-60 MB of columns for Moment-DETR-shaped rows with saliency.
DEFAULT_BATCH_ROWS = 131_072


def certify_parquet(
    cal: Calibrator,
    src: str | Path,
    dst: str | Path,
    *,
    columns: dict[str, str] | str | None = None,
    videos: tuple[NDArray[np.str_], NDArray[np.float64]] | None = None,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    compact: bool = False,
    on_error: OnError = "reject",
    inputs: list[str | Path | None] | None = None,
    stage: CertifyStage | None = None,
    before_commit: Callable[[NDArray[np.str_]], list[RowProblem]] | None = None,
) -> StreamCounts:
    """Stream ``src`` through :func:`cover.stream.arrow.certify_rows` into ``dst``
    (``compact``: only the qid and vid columns and ``cover``); ``stage`` is the run's
    certify stage (else one of ``cal`` and ``videos``; with its ``--qids`` list, only the
    listed rows and the rejected ones are written). ``before_commit(the listed qids some
    row has)``: the problems found once every batch is read (listed qids no row has),
    counted as the rows' are. Under ``on_error="raise"`` a rejected row stops the run
    once every batch is read, ``dst`` untouched.

    Rows are numbered from 1 in file order in every message; ``rows == certified +
    refused + rejected`` always holds.
    """
    p = pa()
    import pyarrow.parquet as pq

    if batch_rows < 1:
        raise ValueError(f"batch_rows must be >= 1, got {batch_rows}")
    stage = stage or CertifyStage.of(cal, videos=videos)
    reader = parquet_file(src)
    schema = reader.schema_arrow
    mapping = parse_columns(columns if columns is not None else DEFAULT_COLUMNS)
    keep = [c for c in schema.names if not compact or c in
            (mapping["qid"].split(".")[0], mapping.get("vid", "").split(".")[0])]
    out_schema = p.schema([schema.field(c) for c in keep]).append(
        p.field("cover", cover_type(stage.p_values)))
    out_schema = out_schema.with_metadata({**(schema.metadata or {}),
                                           **calibrator_metadata(cal)})
    counts = StreamCounts()
    repeats = _Repeats(reader, mapping["qid"], str(src))
    bad = ProblemTally()  # under on_error="raise": every rejected row, raised at the end
    with atomic_open(dst, "wb", inputs=[src, *(inputs or [])]) as fh:
        # Dictionary-encode only the status; trying it on float columns costs ~40% of a
        # write for nothing.
        writer: Any = pq.ParquetWriter(fh, out_schema, use_dictionary=["cover.status"])
        try:
            read = 0  # rows read so far (those written are fewer with a --qids list)
            for batch in reader.iter_batches(batch_size=batch_rows):
                table = p.Table.from_batches([batch])
                done = certify_rows(
                    cal, table, columns=mapping, first_line=read + 1, source=str(src),
                    repeats=repeats.reasons(table, read), stage=stage, counts=counts)
                read += table.num_rows
                out = done.table.select([*keep, "cover"])
                if on_error == "raise":
                    bad.add([q for q in done.problems if q.action == "rejected"])  # in order
                if not bad:  # else the output is dropped: nothing more to write
                    writer.write_table(out.replace_schema_metadata(out_schema.metadata))
        finally:
            writer.close()
        late = [] if before_commit is None else before_commit(stage.listed_seen(counts))
        # Every batch read, as a whole read reads every row; dst is left as it was.
        stage.end_of_input(bad, counts, on_error, str(src), late)
    return counts


class _Repeats:
    """The rows repeating an earlier row's qid, batch by batch. While the qids are
    integers increasing from row to row (batches included), none repeats and this is
    all it checks; at the first batch where they are not, the qid column alone is read
    whole, once, and every repeat found exactly in a few bytes per row
    (:func:`cover.io.seen.repeated_rows`; a set of 1e7 qid strings would take ~800 MB).
    A row repeats only an *earlier* one, so the rows already passed keep their fate."""

    def __init__(self, reader: Any, where: str, source: str) -> None:
        self.reader, self.where, self.source = reader, where, source
        self.last: int | None = None  # the largest qid so far, while they increase
        self.found: tuple[NDArray[np.int64], NDArray[np.int64]] | None = None
        self.row_number = np.zeros(0, dtype=np.int64)  # row -> its number in messages

    def reasons(self, table: Any, start: int) -> dict[int, str]:
        """Row in ``table`` (file rows ``start ..``) -> why it is a repeat."""
        n = table.num_rows
        if self.found is None and n:
            col = arrow_column(table, self.where, self.source) \
                if self.where.split(".")[0] in table.column_names else None
            if col is not None and pa().types.is_integer(col.type) and not col.null_count:
                keys = col.to_numpy()
                if (self.last is None or keys[0] > self.last) and increasing(keys):
                    self.last = int(keys[-1])
                    return {}
            self.found = self._read()
        if self.found is None:
            return {}
        return repeat_reasons(self.found, self.row_number, start, n)

    def _read(self) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        head = self.where.split(".")[0]
        self.row_number = np.arange(1, self.reader.metadata.num_rows + 1, dtype=np.int64)
        if head not in self.reader.schema_arrow.names:  # certify_batch names the column
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return repeated_rows(arrow_column(self.reader.read(columns=[head]), self.where,
                                          self.source))

