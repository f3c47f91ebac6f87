"""Streamed calibration on a Parquet or CSV/TSV prediction file read through a column
mapping (``--columns``): the batches of :func:`cover.stream.calibrate.score_batches`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.relevance import SALIENCY
from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable
from cover.errors import KEEP
from cover.io.batch_join import QidList
from cover.io.jsonl import OnError
from cover.io.opener import parquet_file
from cover.io.qvhighlights import Loaded
from cover.io.truth_index import CompactTruth
from cover.stream.calibrate import StreamedFit, score_batches
from cover.stream.jsonl import DEFAULT_BATCH_LINES


def score_columns(
    preds: str | Path,
    gt: GroundingTable | CompactTruth,
    *,
    columns: dict[str, str] | str,
    family: str,
    min_scale: float,
    target: str,
    qids: QidList | NDArray[np.str_] | None = None,
    clip: float = DEFAULT_CLIP_SECONDS,
    strict: bool = False,
    on_error: OnError = "raise",
    batch_rows: int = DEFAULT_BATCH_LINES,
    gt_name: str | None = None,
    relevance: str = SALIENCY,
    windows: bool = True,
    own_truth: bool = False,
    sides: bool = True,
    durations: bool = True,
    keep_problems: int | None = KEEP,
    truth_rejected: NDArray[np.str_] | None = None,
) -> StreamedFit:
    """:func:`cover.stream.calibrate.score_jsonl` for a Parquet or CSV/TSV prediction
    file read through a column mapping (``--columns``), ``batch_rows`` rows at a time;
    rows are numbered as the whole-file reader numbers them (a CSV's header is line 1);
    ``keep_problems``: :func:`~cover.stream.calibrate.score_batches`."""
    from cover.io.columns import prediction_table
    from cover.io.generic import arrow_columns, kind_suffix, parse_columns
    from cover.stream.csv import csv_batches

    name = str(preds)
    mapping = parse_columns(columns)

    def as_loaded(arrow: Any, lines: NDArray[np.int64],
                  unread: dict[int, str] | None = None) -> Loaded:
        cols, _ = arrow_columns(arrow, mapping, name, with_records=False)
        cols.line = lines
        # Rejected rows set aside; under on_error="raise" the join raises at the end.
        return prediction_table(cols, clip=clip, on_error="reject", reasons=unread)

    is_parquet = kind_suffix(Path(preds)) in (".parquet", ".pq")
    parquet = parquet_file(preds, pre_buffer=False) if is_parquet else None  # no read-ahead kept

    def loaded() -> Iterator[Loaded]:
        if parquet is not None:
            import pyarrow as pa

            row = 1
            # one thread: a decoder pool per thread held ~20 MB more for a 2% faster read
            for batch in parquet.iter_batches(batch_size=batch_rows, use_threads=False):
                yield as_loaded(pa.Table.from_batches([batch]),
                                np.arange(row, row + batch.num_rows, dtype=np.int64))
                row += batch.num_rows
        else:
            for _, arrow, lines, unread in csv_batches(preds, mapping, batch_rows):
                yield as_loaded(arrow, lines, unread)

    return score_batches(loaded(), name, gt, family=family, min_scale=min_scale,
                         target=target, qids=qids, clip=clip, strict=strict,
                         on_error=on_error, gt_name=gt_name, relevance=relevance,
                         rows=0 if parquet is None else parquet.metadata.num_rows,
                         windows=windows, own_truth=own_truth, sides=sides,
                         durations=durations, keep_problems=keep_problems,
                         truth_rejected=truth_rejected)
