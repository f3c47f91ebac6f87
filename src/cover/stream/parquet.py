"""Certify a Parquet file of any size in bounded memory: batch in, batch out.

Memory is one batch (``batch_rows`` rows) plus the writer's row group, independent
of the file's size. The output is the input's columns, unchanged, plus the ``cover``
struct column (:mod:`cover.stream.arrow`), written to a temporary file beside the
target and renamed on success (:mod:`cover.io.output`): an interrupted run leaves the
previous output intact.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.calibrator import Calibrator
from cover.io.generic import arrow_column, parse_columns
from cover.io.jsonl import OnError, raise_on_rejections
from cover.io.opener import parquet_file
from cover.io.output import atomic_open
from cover.io.seen import repeated_rows
from cover.stream.arrow import (
    DEFAULT_COLUMNS,
    calibrator_metadata,
    certify_batch,
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
) -> StreamCounts:
    """Stream ``src`` through :func:`cover.stream.arrow.certify_batch` into ``dst``
    (``compact``: only the qid and vid columns and ``cover``); ``stage`` is the run's
    certify stage (else one of ``cal`` and ``videos``). Under ``on_error="raise"`` the
    first rejected row stops the run, ``dst`` untouched.

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
    # The qid column alone first: every row repeating an earlier row's qid, exactly, in
    # a few bytes per row (a set of 1e7 qid strings would take ~800 MB).
    head = mapping["qid"].split(".")[0]
    repeats = (repeated_rows(arrow_column(reader.read(columns=[head]), mapping["qid"],
                                          str(src)))
               if head in schema.names else (np.zeros(0, np.int64), np.zeros(0, np.int64)))
    row_number = np.arange(1, reader.metadata.num_rows + 1, dtype=np.int64)
    with atomic_open(dst, "wb", inputs=[src, *(inputs or [])]) as fh:
        # Dictionary-encode only the status; trying it on float columns costs ~40% of a
        # write for nothing.
        writer: Any = pq.ParquetWriter(fh, out_schema, use_dictionary=["cover.status"])
        try:
            for batch in reader.iter_batches(batch_size=batch_rows):
                out, problems = certify_batch(
                    cal, batch, columns=mapping, first_line=counts.rows + 1, source=str(src),
                    reasons=repeat_reasons(repeats, row_number, counts.rows, batch.num_rows),
                    stage=stage)
                out = out.select([*keep, "cover"])
                raise_on_rejections([q for q in problems if q.action == "rejected"],
                                    on_error, str(src))  # before the rename: dst untouched
                counts.add_block(out.column("cover").combine_chunks(), problems)
                writer.write_table(out.replace_schema_metadata(out_schema.metadata))
        finally:
            writer.close()
    return counts
