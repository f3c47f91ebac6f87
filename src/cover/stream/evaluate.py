"""Evaluate a certified regions file of any size, a batch of rows at a time.

The ground truth is held whole (a few numbers per query); the regions file (JSON lines
as ``cover certify`` writes them, echoed or ``--compact``, or Parquet) is read
``batch_rows`` rows at a time. Each batch goes through the checks of
:func:`cover.io.regions_jsonl.read_regions`, is joined to the truth of its own qids
(:func:`cover.data.join.attach_truth`) and only the sums behind the metrics are kept
(:class:`cover.metrics.EvaluationSums`, :class:`cover.grounding_metrics.GroundingSums`):
the numbers are those of the whole file in memory, bit for bit. Memory is one batch
plus the truth, the qids seen (the duplicate check) and per-video sums (the cluster sd).

One rule needs the whole file: when the regions' qids do not all name a truth row of
the same video, ``cover evaluate`` may join on (vid, query text) instead
(:func:`cover.io.order_join.align_truth`), a decision over every row. The stream
counts, per batch, the rows that could match by content; while that count cannot beat
the qid matches the join stays by qid (what the whole-file rule would decide), and
otherwise :func:`evaluate_stream` returns None so the caller reads the file whole.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from cover.data.join import attach_truth, index_of
from cover.data.table import GroundingTable
from cover.errors import InputError, RowProblem
from cover.grounding_metrics import GroundingSums
from cover.io.content_join import known_vids, normalise
from cover.io.jsonl import RawRows, parse_json_lines
from cover.io.opener import parquet_file
from cover.io.order_join import order_qids
from cover.io.regions_jsonl import LoadedRegions, regions_from_rows
from cover.io.seen import SeenLines
from cover.metrics import EvaluationSums

RegionsKind = Literal["jsonl", "parquet", "csv"]
PARQUET_SUFFIXES = (".parquet", ".pq")
#: Rows per batch: as ``cover certify``'s JSON-lines default (~1.1 KB per echoed line).
DEFAULT_BATCH_ROWS = 16_384


def regions_kind(path: str | Path) -> RegionsKind:
    """``parquet`` for a ``.parquet``/``.pq`` file, ``csv`` for ``.csv``/``.tsv`` (gzipped
    or not), else ``jsonl``."""
    from cover.stream.evaluate_csv import is_csv

    if Path(path).suffix.lower() in PARQUET_SUFFIXES:
        return "parquet"
    return "csv" if is_csv(path) else "jsonl"


def region_batches(path: str | Path, batch_rows: int, *, columns: str | None = None,
                   calibrator: str | None = None) -> Iterator[RawRows]:
    """Parsed rows of a regions file, ``batch_rows`` at a time (lines numbered as in the
    file; Parquet rows from 1). An empty file is an error, as for the whole-file reader.
    CSV regions take their calibrator fields from ``calibrator`` (a saved calibrator;
    None: not known, :mod:`cover.stream.evaluate_csv`)."""
    from cover.stream.evaluate_csv import calibrator_fields, csv_region_batches
    from cover.stream.jsonl import line_batches

    if batch_rows < 1:
        raise ValueError(f"batch_rows must be >= 1, got {batch_rows}")
    if regions_kind(path) == "parquet":
        yield from _parquet_batches(path, batch_rows, columns)
        return
    if regions_kind(path) == "csv":
        yield from csv_region_batches(path, batch_rows, columns, calibrator_fields(calibrator))
        return
    empty = True
    for batch in line_batches(path, batch_rows):
        empty = False
        yield parse_json_lines(str(path), batch)
    if empty:
        raise InputError(f"{path}: the file is empty (expected one JSON object per line)")


def _batch_readers(path: str | Path, batch_rows: int, columns: str | None,
                   calibrator: str | None) -> Iterator[Callable[..., LoadedRegions]]:
    """Per batch, a call ``read(seen=..., first=...)`` that checks it as
    :func:`cover.io.regions_jsonl.regions_from_rows` does: JSON lines in bulk where the
    batch is clean (:func:`cover.io.regions_batch.load_regions`), Parquet and CSV by their
    records."""
    from cover.io.regions_batch import load_regions
    from cover.stream.jsonl import line_batches

    if regions_kind(path) != "jsonl":
        from cover.stream.evaluate_csv import calibrator_thresholds_of

        limits = calibrator_thresholds_of(calibrator)
        for raw in region_batches(path, batch_rows, columns=columns, calibrator=calibrator):
            yield partial(regions_from_rows, raw, thresholds=limits)
        return
    if batch_rows < 1:
        raise ValueError(f"batch_rows must be >= 1, got {batch_rows}")
    empty = True
    for batch in line_batches(path, batch_rows):
        empty = False
        yield partial(load_regions, str(path), batch)
    if empty:
        raise InputError(f"{path}: the file is empty (expected one JSON object per line)")


def _parquet_batches(path: str | Path, batch_rows: int, columns: str | None
                     ) -> Iterator[RawRows]:
    """Rows of a Parquet ``cover certify`` output as the records a JSON line would give:
    qid, vid, query and windows through the column mapping, the ``cover`` struct with
    the calibrator fields of the schema metadata (``cover.calibrator``)."""
    from cover.io.generic import arrow_columns, parse_columns, pyarrow_modules
    from cover.stream.arrow import DEFAULT_COLUMNS

    pyarrow_modules()
    import pyarrow as pa
    name = str(path)
    reader = parquet_file(path)
    schema = reader.schema_arrow
    raw_meta = (schema.metadata or {}).get(b"cover.calibrator")
    if "cover" not in schema.names or raw_meta is None:
        raise InputError(f"{name}: no 'cover' column with cover.calibrator metadata (is this "
                         "the output of `cover certify`?)")
    cal = json.loads(raw_meta)
    meta = {k: cal.get(k) for k in ("score", "rule", "alpha", "k", "n_calibration")}
    if cal.get("fitted_on"):
        meta["calibration_sha256"] = cal["fitted_on"]
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


def read_parquet_regions(path: str | Path, *, columns: str | None = None,
                         calibrator: str | None = None) -> LoadedRegions:
    """A Parquet or CSV regions file read whole (``cover evaluate --in-memory``): the rows
    of :func:`region_batches` in one :func:`cover.io.regions_jsonl.regions_from_rows`."""
    batches = list(region_batches(path, 1 << 20, columns=columns, calibrator=calibrator))
    records = [r for b in batches for r in b.records]
    lines = np.concatenate([b.lines for b in batches]) if batches else np.zeros(0, np.int64)
    from cover.stream.evaluate_csv import calibrator_thresholds_of

    return regions_from_rows(RawRows(str(path), records, lines),
                             thresholds=calibrator_thresholds_of(calibrator))


@dataclass
class StreamedEvaluation:
    """What :func:`evaluate_stream` kept: the sums, the counts and every problem."""

    sums: EvaluationSums
    grounding: GroundingSums
    meta: dict[str, Any]
    read_problems: list[RowProblem] = field(default_factory=list)
    join_problems: list[RowProblem] = field(default_factory=list)
    rejected_at_certify: int = 0
    ground_truth_not_certified: int = 0
    in_calibration: int = 0
    same_as_calibration: bool = False
    windows: int = 0
    batches: int = 0


class _Truth:
    """The ground truth, indexed once by qid (each batch costs a binary search)."""

    def __init__(self, gt: GroundingTable) -> None:
        self.table = gt
        self.order = np.argsort(gt.qid, kind="stable")
        self.sorted = gt.qid[self.order]
        self.used = np.zeros(len(gt), dtype=bool)
        self._bases: NDArray[np.str_] | None = None

    def find(self, qid: NDArray[np.str_]) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
        if self.sorted.size == 0:
            return np.zeros(qid.size, dtype=np.int64), np.zeros(qid.size, dtype=bool)
        pos = np.minimum(np.searchsorted(self.sorted, qid), self.sorted.size - 1)
        j = self.order[pos]
        return j, self.table.qid[j] == qid

    def content_hits(self, t: GroundingTable) -> int:
        """Rows of ``t`` whose (vid, normalised query) some truth row has: an upper bound
        on what a join on content can match (:func:`cover.io.content_join.rekey_truth`)."""
        if self._bases is None:
            self._bases = np.unique(_bases(self.table))
        return int(np.isin(_bases(t), self._bases).sum())


def _bases(t: GroundingTable) -> NDArray[np.str_]:
    return np.char.add(np.char.add(t.vid.astype(str), "\x1f"), normalise(t.query, len(t)))


def evaluate_stream(
    path: str | Path,
    gt: GroundingTable,
    *,
    target: str = "envelope",
    refusal_policy: str = "whole-video",
    batch_rows: int = DEFAULT_BATCH_ROWS,
    columns: str | None = None,
    calibrator: str | None = None,
) -> StreamedEvaluation | None:
    """The sums of ``cover evaluate`` over ``path`` against ``gt``, one batch at a time
    (see the module doc); None when the whole-file path must decide a join on content.
    Bad rows are collected, never raised: the caller applies ``--on-error``."""
    truth = _Truth(gt)
    known = np.unique(gt.vid)
    seen = SeenLines()
    ref: tuple[dict[str, Any], int] | None = None
    out = StreamedEvaluation(EvaluationSums(target=target, refusal_policy=refusal_policy,
                                            units=True), GroundingSums(), {})
    agree = bound = 0
    n_cal: int | None = None
    digest_qids: list[NDArray[np.str_]] | None = []
    n_joined = 0
    for read in _batch_readers(path, batch_rows, columns, calibrator):
        out.batches += 1
        loaded = read(seen=seen, first=ref)
        if ref is None and loaded.meta_line is not None:
            ref = loaded.meta, loaded.meta_line
            n_cal = loaded.meta.get("n_calibration")
        out.read_problems += loaded.problems
        out.rejected_at_certify += loaded.rejected_at_certify
        j, hit = truth.find(loaded.table.qid)
        rtab = loaded.table
        if not (hit & (gt.vid[j] == rtab.vid)).all():  # else every vid is known as written
            rtab = replace(rtab, vid=known_vids(rtab.vid, known))
        both = hit & (gt.vid[j] == rtab.vid)
        agree += int(both.sum())
        bound += int(both.sum()) if both.all() else (
            len(rtab) if order_qids(rtab) else truth.content_hits(rtab))  # order: any may
        if bound > agree:
            return None  # a join on content might match more: the whole-file rule decides
        truth.used[j[hit]] = True
        joined, problems = attach_truth(rtab, gt.take(np.sort(j[hit])), strict=False)
        out.join_problems += problems
        idx, _ = index_of(loaded.table.qid, joined.qid)
        if loaded.in_calibration is not None:
            out.in_calibration += int(loaded.in_calibration[idx].sum())
        regions = replace(loaded.regions.take(idx), duration=joined.duration)
        out.sums.add(regions, joined)
        out.grounding.add(joined)
        if joined.pred_windows is not None:
            out.windows += int(joined.pred_windows.values.shape[0])
        # The digest check needs the qids only while they could be the calibration set.
        n_joined += len(joined)
        if digest_qids is not None:
            digest_qids.append(joined.qid)
            if isinstance(n_cal, int) and n_joined > n_cal:
                digest_qids = None
    out.meta = ref[0] if ref is not None else loaded.meta
    out.ground_truth_not_certified = int((~truth.used).sum())
    digest = out.meta.get("calibration_sha256")
    if digest_qids is not None and isinstance(digest, str) and n_joined:
        from cover.data.fitted_on import fitted_on

        out.same_as_calibration = fitted_on(np.concatenate(digest_qids))["sha256"] == digest
    return out
