"""Calibrate on a prediction file of any size, a batch at a time: Moment-DETR JSON lines,
or Parquet / CSV read through a column mapping.

A split-conformal fit needs one score per calibration row (SPEC §4), not the rows:
each batch of lines is parsed, joined with the ground truth of its own qids, scored,
and dropped. What is kept per row is the score (8 bytes, 24 with per-side scores),
its refusal flags, the qid and vid (for the ``fitted_on`` digest and the grouping)
and duration + predicted window (for a Mondrian grouping fitted on the calibration
rows); the relevance signals, the truth and the records are not. The ground truth is
held whole: it is a few hundred bytes per query and usually far smaller than the
predictions. The thresholds are those of :meth:`Calibrator.fit` on the whole joined
table (:meth:`Calibrator.fit_scores`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.calibrator import Calibrator
from cover.data.join import attach_truth
from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable
from cover.errors import InputError, RowProblem
from cover.io.jsonl import OnError, raise_on_rejections
from cover.io.jsonl_batch import gc_paused, load_batch
from cover.io.opener import parquet_file
from cover.io.qvhighlights import Loaded
from cover.io.seen import SeenIds
from cover.scores import FAMILY_INPUT, Scores, check_family, compute_scores, missing_family_input
from cover.stream.jsonl import DEFAULT_BATCH_LINES, line_batches


@dataclass
class _Parts:
    """Per-batch arrays, concatenated once at the end."""

    cols: dict[str, list[NDArray[np.generic]]] = field(default_factory=dict)

    def add(self, **arrays: NDArray[np.generic] | None) -> None:
        for k, a in arrays.items():
            if a is not None:
                self.cols.setdefault(k, []).append(a)

    def get(self, key: str, dtype: type) -> NDArray[Any]:
        parts = self.cols.get(key)
        return np.concatenate(parts) if parts else np.empty(0, dtype=dtype)


@dataclass
class StreamedFit:
    """What a streamed calibration kept: the scores, the slim table they belong to
    (qid, vid, duration, predicted window) and every problem found on the way."""

    scores: Scores
    table: GroundingTable
    problems: list[RowProblem]
    batches: int
    #: The score families some row has the input of (:mod:`cover.scores`).
    families: set[str] = field(default_factory=set)


def score_jsonl(
    preds: str | Path,
    gt: GroundingTable,
    *,
    family: str,
    min_scale: float,
    target: str,
    qids: NDArray[np.str_] | None = None,
    clip: float = DEFAULT_CLIP_SECONDS,
    strict: bool = False,
    on_error: OnError = "raise",
    batch_lines: int = DEFAULT_BATCH_LINES,
    fast: bool = True,
) -> StreamedFit:
    """Scores of ``family`` for every prediction line of ``preds`` joined with ``gt`` by
    qid (only the qids in ``qids`` when given), ``batch_lines`` lines at a time.

    Row checks are those of :func:`cover.data.join.attach_truth` on the whole file: a
    prediction without truth, a truth without prediction (after all batches), a vid,
    query or duration that disagrees, and a qid seen on an earlier line are rejected.
    Clean batches are read a batch at a time (:mod:`cover.io.jsonl_batch`); ``fast=False``
    reads every batch row by row (same result).
    """
    if batch_lines < 1:
        raise ValueError(f"batch_lines must be >= 1, got {batch_lines}")
    name = str(preds)

    def loaded() -> Iterator[Loaded]:
        for batch in line_batches(preds, batch_lines):
            with gc_paused():  # see cover.stream.jsonl: the batch's rows hold no cycles
                yield load_batch(name, batch, clip=clip, on_error=on_error, fast=fast,
                                 keep_records=False).loaded

    return score_batches(loaded(), name, gt, family=family, min_scale=min_scale,
                         target=target, qids=qids, clip=clip, strict=strict,
                         on_error=on_error)


def score_columns(
    preds: str | Path,
    gt: GroundingTable,
    *,
    columns: dict[str, str] | str,
    family: str,
    min_scale: float,
    target: str,
    qids: NDArray[np.str_] | None = None,
    clip: float = DEFAULT_CLIP_SECONDS,
    strict: bool = False,
    on_error: OnError = "raise",
    batch_rows: int = DEFAULT_BATCH_LINES,
) -> StreamedFit:
    """:func:`score_jsonl` for a Parquet or CSV/TSV prediction file read through a column
    mapping (``--columns``), ``batch_rows`` rows at a time; rows are numbered as the
    whole-file reader numbers them (a CSV's header is line 1)."""
    from cover.io.columns import prediction_table
    from cover.io.generic import arrow_columns, kind_suffix, parse_columns
    from cover.stream.csv import csv_batches

    name = str(preds)
    mapping = parse_columns(columns)

    def as_loaded(arrow: Any, lines: NDArray[np.int64],
                  unread: dict[int, str] | None = None) -> Loaded:
        cols, _ = arrow_columns(arrow, mapping, name, with_records=False)
        cols.line = lines
        return prediction_table(cols, clip=clip, on_error=on_error, reasons=unread)

    def loaded() -> Iterator[Loaded]:
        if kind_suffix(Path(preds)) in (".parquet", ".pq"):
            import pyarrow as pa

            row = 1
            for batch in parquet_file(preds).iter_batches(batch_size=batch_rows):
                yield as_loaded(pa.Table.from_batches([batch]),
                                np.arange(row, row + batch.num_rows, dtype=np.int64))
                row += batch.num_rows
        else:
            for _, arrow, lines, unread in csv_batches(preds, mapping, batch_rows):
                yield as_loaded(arrow, lines, unread)

    return score_batches(loaded(), name, gt, family=family, min_scale=min_scale,
                         target=target, qids=qids, clip=clip, strict=strict,
                         on_error=on_error)


def score_batches(
    batches: Iterable[Loaded],
    name: str,
    gt: GroundingTable,
    *,
    family: str,
    min_scale: float,
    target: str,
    qids: NDArray[np.str_] | None,
    clip: float,
    strict: bool,
    on_error: OnError,
) -> StreamedFit:
    """The scores of prediction batches already read (any format) joined with ``gt``:
    the loop behind :func:`score_jsonl` and :func:`score_columns`."""
    gtruth = gt if qids is None else gt.select_qids(qids)
    parts = _Parts()
    problems: list[RowProblem] = []
    seen = SeenIds()
    n_batches = 0
    families: set[str] = set()
    for loaded in batches:
        n_batches += 1
        found = list(loaded.problems)
        table = loaded.table if qids is None else loaded.table.select_qids(qids)
        dup = seen.add(table.qid)
        if dup.any():
            found += [RowProblem(name, int(ln), str(q), "duplicate qid (seen on an earlier "
                                 "line)", "rejected")
                      for ln, q in zip(_lines(table)[dup].tolist(), table.qid[dup].tolist(),
                                       strict=True)]
            table = table.take(~dup)
        mine = gtruth.take(np.flatnonzero(np.isin(gtruth.qid, table.qid)))
        joined, more = attach_truth(table, mine, strict=strict)
        found += more
        raise_on_rejections([p for p in found if p.path == name], on_error, name)
        problems += found
        families |= {f for f in FAMILY_INPUT if f not in families and len(joined)
                     and missing_family_input(joined, f) is None}
        s = compute_scores(joined, family, min_scale=min_scale, target=target)
        parts.add(values=s.values, refused=s.refused, floored=s.floored,
                  beyond=s.beyond_signal, start=s.start, end=s.end, qid=joined.qid,
                  vid=joined.vid, duration=joined.duration, ps=joined.pred_start,
                  pe=joined.pred_end)
    if n_batches == 0:
        raise InputError(f"{name}: no prediction lines")
    orphan = np.flatnonzero(~np.isin(gtruth.qid, seen.array()))
    problems += [RowProblem(gtruth.source, int(ln), str(q),
                            f"no prediction for this qid in {name}", "rejected")
                 for ln, q in zip(_lines(gtruth)[orphan].tolist(),
                                  gtruth.qid[orphan].tolist(), strict=True)]
    scores = Scores(check_family(family), values=parts.get("values", np.float64),
                    refused=parts.get("refused", np.bool_),
                    floored=parts.get("floored", np.bool_),
                    beyond_signal=parts.get("beyond", np.bool_),
                    start=parts.get("start", np.float64) if "start" in parts.cols else None,
                    end=parts.get("end", np.float64) if "end" in parts.cols else None)
    slim = GroundingTable.from_arrays(
        qid=parts.get("qid", np.str_), vid=parts.get("vid", np.str_),
        duration=parts.get("duration", np.float64), pred_start=parts.get("ps", np.float64),
        pred_end=parts.get("pe", np.float64), clip=clip)
    return StreamedFit(scores, slim, problems, n_batches, families)


def calibrate_jsonl(cal: Calibrator, preds: str | Path, gt: GroundingTable, **kw: object
                    ) -> tuple[Calibrator, StreamedFit]:
    """Fit ``cal`` on ``preds`` streamed against ``gt`` (:func:`score_jsonl` takes the
    keywords); the thresholds equal those of ``cal.fit`` on the whole joined table."""
    got = score_jsonl(preds, gt, family=cal.score, min_scale=cal.min_scale,
                      target=cal.target, **kw)  # type: ignore[arg-type]
    if len(got.table) == 0:
        raise InputError("no calibration rows left after validation")
    return cal.fit_scores(got.scores, got.table), got


def _lines(t: GroundingTable) -> NDArray[np.int64]:
    return t.line if t.line is not None else np.zeros(len(t), dtype=np.int64)
