"""Certify Moment-DETR-style JSON lines: a file of any size a batch of lines at a time
(:func:`certify_jsonl`, ``cover certify``), each batch by :class:`CertifyKernel`, which
``cover serve`` runs on one batch per request (:mod:`cover.serve.certify`).

Memory is a few batches of lines (the one being certified, up to two being written on
the writer's thread, a few MB read ahead: :mod:`cover.io.threads`) plus the qids seen
so far (for the duplicate check), independent of the file's size. Each output line is
the input line **byte for byte** with ``,"cover":{...}`` added before its closing brace
(:func:`splice`), so every field the grounder wrote survives exactly (number formatting
and key order included); ``compact=True`` writes only ``qid``, ``vid`` and the block.
Lines that cannot keep their bytes (``NaN``/``Infinity``, see ``cover.non_finite_fields``;
an existing ``cover`` key, replaced; a line that is not an object) are re-serialised by
:func:`cover.io.regions_jsonl.echo_line`. Blocks are exactly those of the in-memory path
(:func:`cover.io.regions_jsonl.certified_rows`).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.calibrator import Calibrator
from cover.calibrate.groups import reads_input_rows
from cover.data.table import GroundingTable
from cover.errors import ProblemTally, RowProblem
from cover.io.jsonl import OnError, RawRows
from cover.io.jsonl_batch import Batch, gc_paused, load_batch
from cover.io.lines import line_batches
from cover.io.output import atomic_open
from cover.io.regions_jsonl import certified_rows, echo_line
from cover.io.seen import SeenIds
from cover.regions import Regions
from cover.row_status import row_status
from cover.stream.jsonl_out import fast_lines
from cover.stream.output_fields import refuse_certified
from cover.stream.stage import CertifyStage, Staged, StreamCounts, Videos

#: 16,384 lines of 75-clip saliency (~1.1 KB each) keep a 1e6-line certify under ~500 MB
#: peak; 65,536 reached 1.3 GB (bench/results-stream.md).
DEFAULT_BATCH_LINES = 16_384


def certify_jsonl(
    cal: Calibrator,
    src: str | Path,
    dst: str | Path,
    *,
    videos: Videos | None = None,
    videos_source: str = "--videos",
    qids: NDArray[np.str_] | None = None,
    clip: float = 2.0,
    strict: bool = False,
    compact: bool = False,
    on_error: OnError = "reject",
    batch_lines: int = DEFAULT_BATCH_LINES,
    inputs: list[str | Path | None] | None = None,
    before_commit: Callable[[NDArray[np.str_]], list[RowProblem]] | None = None,
    fast: bool = True,
    max_p: float | None = None,
    every_problem: bool = True,
) -> tuple[StreamCounts, list[RowProblem]]:
    """Stream ``src`` into ``dst`` (atomically), one output line per input line (only the
    rows in ``qids`` when given, like the in-memory path). Returns the counts (the
    problems tallied in bounded memory: ``counts.tally``) and every problem found
    (rejected and clipped rows, with file, line and qid), a list that grows with the
    rows found wanting; ``every_problem=False`` leaves it empty (``cover certify``: its
    messages read the tally, and the output names each rejected row's reason). Under
    ``on_error="raise"`` a rejected row stops the run once every batch is read (the
    count and the first rows named, as a whole read names them), and ``dst`` is left as
    it was. ``before_commit(the listed qids some row has)`` runs before the output is renamed
    into place; the problems it returns count like the rows' (e.g. listed qids that
    no row has). ``fast=False`` reads and writes every batch row by row (the reference
    the batch-at-a-time path is tested against; the output is the same). ``max_p``:
    ``--max-p`` (:class:`cover.stream.stage.CertifyStage`)."""
    if batch_lines < 1:
        raise ValueError(f"batch_lines must be >= 1, got {batch_lines}")
    name = str(src)
    kernel = CertifyKernel.of(cal, videos=videos, videos_source=videos_source, qids=qids,
                              clip=clip, strict=strict, compact=compact, fast=fast,
                              max_p=max_p)
    counts = StreamCounts()
    every: list[RowProblem] = []
    seen = SeenIds()
    bad = ProblemTally()  # under on_error="raise": every rejected row, raised at the end
    # Collection paused: each batch's rows are freed by reference counting (they hold
    # no cycles); rescanning them as they age costs more than parsing them.
    with (atomic_open(dst, "wb", inputs=[src, *(inputs or [])], threaded=True) as out,
          gc_paused()):
        for batch in line_batches(src, batch_lines):
            done = kernel.run(name, batch, seen)
            if on_error == "raise":
                bad.add(done.bad)  # in line order (the stage's)
            if not bad:  # once a row is bad the output is dropped: nothing more to write
                out.writelines(done.parts)  # joined and written on the writer's thread
            counts.add_staged(Counter(done.status.tolist()), done.staged)
            if every_problem:
                every += done.found
        late = [] if before_commit is None else before_commit(kernel.stage.listed_seen(counts))
        # Every batch read, as a whole read reads every row: the same count and the same
        # first rows named, whatever the batch size; dst is left as it was.
        kernel.stage.end_of_input(bad, counts, on_error, name, late)
        if every_problem:
            every += late
    return counts, every


def splice(line: bytes, block: dict[str, Any]) -> bytes:
    """``line`` (one JSON object) with ``"cover": block`` added before its last brace."""
    inner = line.rstrip()[:-1].rstrip()
    sep = b"" if inner.endswith(b"{") else b","
    return inner + sep + b'"cover":' + json.dumps(block, allow_nan=False).encode() + b"}"


_NON_FINITE = (b"NaN", b"Infinity")


def _out_line(raw: bytes | None, row: dict[str, Any], rec: Any, compact: bool) -> bytes:
    block = row["cover"]
    if compact:
        keep = {k: rec[k] for k in ("qid", "vid") if isinstance(rec, dict) and k in rec}
        return echo_line({**keep, "cover": block}).encode()
    if (raw is not None and isinstance(rec, dict)
            and not any(t in raw for t in _NON_FINITE)):
        return splice(raw, block)
    if isinstance(rec, dict):
        return echo_line({**rec, "cover": block}).encode()
    return echo_line(row).encode()  # a line that was not a JSON object: block with "raw"


@dataclass(frozen=True)
class BatchOut:
    """One certified batch: the output ``parts`` (written one after the other, each line
    newline-terminated), each written row's status, every problem found (``bad``: the
    rejected ones) and the batch after the stage (``staged``: what it counts)."""

    parts: list[bytes]
    status: NDArray[np.object_]
    found: list[RowProblem]
    bad: list[RowProblem]
    staged: Staged


@dataclass(frozen=True)
class CertifyKernel:
    """The certify step of one batch (see the module docstring): the bulk reader, then
    the one certify stage of every format (:mod:`cover.stream.stage`), then the
    writers, so a row gets the same bytes whichever way it comes in."""

    stage: CertifyStage
    keep_records: bool
    clip: float
    compact: bool
    fast: bool
    signal: bool = True

    @classmethod
    def of(cls, cal: Calibrator, *, videos: Videos | None = None,
           videos_source: str = "--videos", qids: NDArray[np.str_] | None = None,
           clip: float = 2.0, strict: bool = False, compact: bool = False,
           fast: bool = True, max_p: float | None = None) -> CertifyKernel:
        stage = CertifyStage.of(cal, videos=videos, videos_source=videos_source, qids=qids,
                                strict=strict, max_p=max_p)
        # Input rows are needed for a grouping keyed by one of their fields, and for rows
        # written one by one (then parsed again); the bulk reader otherwise drops them.
        keep_records = reads_input_rows(cal.groups)
        # Only SLS reads the saliency scores; the others have them checked, not decoded.
        return cls(stage, keep_records, clip, compact, fast, signal=cal.score == "sls")

    def run(self, name: str, batch: list[tuple[int, bytes]], seen: SeenIds) -> BatchOut:
        """Certify ``batch`` (``(line number, bytes)`` pairs of file ``name``); ``seen``
        holds the qids of earlier batches (a repeat is rejected) and gets this batch's."""
        got = load_batch(name, batch, clip=self.clip, on_error="reject", fast=self.fast,
                         keep_records=self.keep_records, signal=self.signal)
        if got.has_cover:  # certify's own output: refused, as certify_rows refuses it
            refuse_certified(name, ["cover"])
        done = self.stage.run(got.loaded, seen)
        table, regions, in_cal = done.table, done.regions, done.in_calibration
        found = done.problems
        rejected = {line: r for (line, _), r in got.loaded.rejected.items()}  # a row a line
        meta = self.stage.meta
        parts = (_fast_out(got, table, regions, meta, in_cal, self.compact)
                 if got.fast and not done.bad and not rejected else None)
        if parts is not None:
            status = row_status(regions)
        else:
            parts, status = _write_rows(batch, got.raw, got.ensure_records(table), regions,
                                        meta, rejected, found, in_cal, self.compact)
        return BatchOut(parts, status, found, done.bad, done)


def _fast_out(got: Batch, table: GroundingTable, regions: Regions, meta: dict[str, Any],
              in_cal: NDArray[np.bool_] | None, compact: bool) -> list[bytes] | None:
    """:func:`~cover.stream.jsonl_out.fast_lines` for a batch read in bulk with no
    rejected row, the kept rows (all, or those of ``qids``) in line order."""
    lines = table.line if table.line is not None else np.empty(0, dtype=np.int64)
    read = got.raw.lines
    if lines.size != len(table) or (lines.size > 1 and not (np.diff(lines) > 0).all()):
        return None
    at = np.searchsorted(read, lines)
    if at.size and (at[-1] >= read.size or not np.array_equal(read[at], lines)):
        return None
    ls, qv, vv = got.lines, got.qid_values, got.vid_values
    if at.size < read.size:  # the rows of --qids only
        pick = at.tolist()
        ls, qv, vv = [ls[i] for i in pick], [qv[i] for i in pick], [vv[i] for i in pick]
    return fast_lines(ls, qv, vv, table, regions, meta, in_cal, compact)


def _write_rows(batch: list[tuple[int, bytes]], raw: RawRows, table: GroundingTable,
                regions: Regions, meta: dict[str, Any], rejected: dict[int, Any],
                found: list[RowProblem], in_cal: NDArray[np.bool_] | None, compact: bool
                ) -> tuple[list[bytes], NDArray[np.object_]]:
    """The batch's lines written row by row (kept and rejected rows), and each row's
    status."""
    raw_by_line = dict(batch)
    kept_lines = set(table.line.tolist()) if table.line is not None else set()
    for p in found:
        if p.action == "rejected" and p.line not in rejected and p.line in raw_by_line \
                and p.line not in kept_lines:
            at = np.flatnonzero(raw.lines == p.line)
            rejected[p.line] = raw.records[int(at[0])] if at.size else raw.rejected.get(p.key)
    # one row a line: a rejected row's reason is the first rejected problem on its line
    reasons: dict[int, str] = {}
    for p in found:
        if p.action == "rejected" and p.path == table.source:
            reasons.setdefault(p.line, p.problem)
    rows = certified_rows(table, regions, meta, [(line, rec, reasons.get(line, "rejected"))
                                                 for line, rec in rejected.items()],
                          in_calibration=in_cal)
    recs = dict(zip(raw.lines.tolist(), raw.records, strict=True)) | rejected
    order = sorted([*kept_lines, *rejected])
    return ([_out_line(raw_by_line.get(line), row, recs.get(line), compact) + b"\n"
             for line, row in zip(order, rows, strict=True)],
            np.array([r["cover"]["status"] for r in rows], dtype=object))

