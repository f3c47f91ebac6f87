"""Certify a Moment-DETR-style JSON-lines file of any size, a batch of lines at a time.

Memory is one batch of lines plus the qids seen so far (for the duplicate check),
independent of the file's size. Each output line is the input line **byte for byte**
with ``,"cover":{...}`` added before its closing brace, so every field the grounder
wrote survives exactly (number formatting and key order included); ``compact=True``
writes only ``qid``, ``vid`` and the block. The two cases where bytes cannot be kept
are re-serialised by :func:`cover.io.regions_jsonl.echo_line`: a line holding a
number JSON cannot (``NaN``/``Infinity``; see ``cover.non_finite_fields``), and a line
that already has a ``cover`` key (its old block is replaced). Blocks are exactly those
of the in-memory path (:func:`cover.io.regions_jsonl.certified_rows`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from itertools import repeat
from pathlib import Path
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.calibrator import Calibrator
from cover.data.join import fill_durations
from cover.data.table import GroundingTable
from cover.errors import InputError, RowProblem
from cover.io.jsonl import OnError, RawRows, raise_on_rejections
from cover.io.jsonl_batch import Batch, gc_paused, load_batch
from cover.io.opener import open_input
from cover.io.output import atomic_open
from cover.io.regions_jsonl import certified_rows, echo_line
from cover.io.seen import SeenIds
from cover.regions import Regions
from cover.stream.jsonl_out import fast_lines, status_of
from cover.stream.parquet import StreamCounts

#: 16,384 lines of 75-clip saliency (~1.1 KB each) keep a 1e6-line certify under ~500 MB
#: peak; 65,536 reached 1.3 GB (bench/results-stream.md).
DEFAULT_BATCH_LINES = 16_384


def line_batches(path: str | Path, batch_lines: int) -> Iterator[list[tuple[int, bytes]]]:
    """Non-blank ``(line number, bytes)`` pairs, ``batch_lines`` at a time (gzip read
    transparently, a byte-order mark skipped: :func:`cover.io.opener.open_input`). A JSON
    array file cannot be streamed by lines: that is an error."""
    batch: list[tuple[int, bytes]] = []
    with open_input(path) as fh:
        for first, lines in _numbered_blocks(fh):
            if first == 1 and lines and lines[0][0] == 1 and lines[0][1].lstrip()[:1] == b"[":
                raise InputError(f"{path}: a JSON array, not JSON lines; it is read whole, "
                                 "not streamed (drop --stream)")
            batch += lines
            start = 0
            while len(batch) - start >= batch_lines:
                yield batch[start:start + batch_lines]
                start += batch_lines
            del batch[:start]
    if batch:
        yield batch


#: Bytes read at a time by :func:`line_batches`.
_READ_BYTES = 1 << 22


def _numbered_blocks(fh: IO[bytes]) -> Iterator[tuple[int, list[tuple[int, bytes]]]]:
    """``(number of the block's first line, its non-blank lines)`` for blocks of a few MB:
    lines split at newlines, trailing carriage returns dropped, as iterating the file
    would. A block with no blank line and no line ending in a carriage return is
    numbered without a Python step per line.

    A line longer than a read costs time linear in its length: its reads are kept as a
    list of chunks and joined once, when its newline (or the end) arrives; joining the
    pending part on every read made a 2 GB line cost hours. Memory is that line about
    twice over (its chunks, then the joined line), freed once the line is parsed."""
    pending: list[bytes] = []  # the unended line so far, as the reads that hold it
    lineno = 0
    while True:
        data = fh.read(_READ_BYTES)
        if data and b"\n" not in data:
            pending.append(data)  # the line goes on: no copy until it ends
            continue
        joined = b"".join([*pending, data])
        pending.clear()  # the chunks go before the split copies the line once more
        parts = joined.split(b"\n")
        del joined
        pending = [parts.pop()] if data else []  # at the end: the last line, if unended
        if parts == [b""] and not data:
            return
        numbered = zip(range(lineno + 1, lineno + 1 + len(parts)), parts, strict=True)
        first, lineno = lineno + 1, lineno + len(parts)
        if all(map(bytes.strip, parts)) and not any(map(bytes.endswith, parts,
                                                         repeat(b"\r"))):
            yield first, list(numbered)
        else:
            yield first, [(n, ln.rstrip(b"\r")) for n, ln in numbered
                          if ln.rstrip(b"\r").strip()]
        if not data:
            return


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
    if (raw is not None and isinstance(rec, dict) and "cover" not in rec
            and not any(t in raw for t in _NON_FINITE)):
        return splice(raw, block)
    if isinstance(rec, dict):
        return echo_line({**rec, "cover": block}).encode()
    return echo_line(row).encode()  # a line that was not a JSON object: block with "raw"


def certify_jsonl(
    cal: Calibrator,
    src: str | Path,
    dst: str | Path,
    *,
    videos: tuple[NDArray[np.str_], NDArray[np.float64]] | None = None,
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
) -> tuple[StreamCounts, list[RowProblem]]:
    """Stream ``src`` into ``dst`` (atomically), one output line per input line (only the
    rows in ``qids`` when given, like the in-memory path). Returns the counts and every
    problem found (rejected and clipped rows, with file, line and qid). Under
    ``on_error="raise"`` the first batch with a rejected row stops the run, and ``dst``
    is left as it was. ``before_commit(seen qids)`` runs before the output is renamed
    into place; the problems it returns count like the rows' (e.g. listed qids that
    no row has). ``fast=False`` reads and writes every batch row by row (the reference
    the batch-at-a-time path is tested against; the output is the same)."""
    if batch_lines < 1:
        raise ValueError(f"batch_lines must be >= 1, got {batch_lines}")
    name = str(src)
    meta: dict[str, Any] = {"score": cal.score, "rule": cal.rule,
                            "alpha": float(cal.alpha_fraction), "k": cal.k_,
                            "n_calibration": cal.n_}
    fo = cal.fitted_on_ or {}
    if fo.get("sha256"):
        meta["calibration_sha256"] = fo["sha256"]
    fitted = None if fo.get("qids") is None else np.asarray(fo["qids"], dtype=str)
    # Input rows are needed for a grouping keyed by one of their fields, and for rows
    # written one by one (then parsed again); the bulk reader otherwise drops them.
    keep_records = cal.groups not in ("all", "pred_length", "duration")
    counts = StreamCounts()
    problems: list[RowProblem] = []
    seen = SeenIds()
    # Collection paused: each batch's rows are freed by reference counting (they hold
    # no cycles); rescanning them as they age costs more than parsing them.
    with atomic_open(dst, "wb", inputs=[src, *(inputs or [])]) as out, gc_paused():
        for batch in line_batches(src, batch_lines):
            got = load_batch(name, batch, clip=clip, on_error="reject", fast=fast,
                             keep_records=keep_records)
            table, found = got.loaded.table, list(got.loaded.problems)
            rejected = dict(got.loaded.rejected)
            if qids is not None:  # reader rejects are all written, as in memory
                table = table.select_qids(qids)
            dup = seen.add(table.qid)
            if dup.any():
                found += _reject(table, dup, "duplicate qid (seen on an earlier line)", name)
                table = table.take(~dup)
            table, filled = fill_durations(table, *(videos or (None, None)), strict=strict,
                                           source=videos_source)
            found += filled
            bad = [p for p in found if p.action == "rejected"]
            regions = cal.certify(table)
            in_cal = None if fitted is None else np.isin(table.qid, fitted)
            counts.in_calibration += 0 if in_cal is None else int(in_cal.sum())
            text = (_fast_out(got, table, regions, meta, in_cal, compact)
                    if got.fast and not bad and not rejected else None)
            if text is not None:
                out.write(b"".join(text))  # one write: faster than writelines here
                status = status_of(regions)
            else:
                status = _write_rows(out, batch, got.raw, got.ensure_records(table), regions,
                                     meta, rejected, found, in_cal, compact)
            raise_on_rejections(bad, on_error, name)  # before the rename: dst untouched
            counts.add(status, bad)
            problems += found
        if before_commit is not None:
            late = before_commit(seen.array())
            raise_on_rejections(late, on_error, name)
            problems += late
    return counts, problems


def _fast_out(got: Batch, table: GroundingTable, regions: Regions, meta: dict[str, Any],
              in_cal: NDArray[np.bool_] | None, compact: bool) -> list[bytes] | None:
    """:func:`~cover.stream.jsonl_out.fast_lines` for a batch read in bulk with no
    rejected row, the kept rows (all, or those of ``qids``) in line order."""
    lines = table.line if table.line is not None else np.empty(0, dtype=np.int64)
    if lines.size != len(table) or (lines.size > 1 and not (np.diff(lines) > 0).all()):
        return None
    if lines.size == got.raw.lines.size:
        if not np.array_equal(lines, got.raw.lines):
            return None
        return fast_lines(got.lines, got.qid_values, got.vid_values, got.has_cover, table,
                          regions, meta, in_cal, compact)
    at = np.searchsorted(got.raw.lines, lines)
    if at.size and (at[-1] >= got.raw.lines.size or
                    not np.array_equal(got.raw.lines[at], lines)):
        return None
    pick = at.tolist()
    return fast_lines([got.lines[i] for i in pick], [got.qid_values[i] for i in pick],
                      [got.vid_values[i] for i in pick], got.has_cover, table, regions,
                      meta, in_cal, compact)


def _write_rows(out: IO[bytes], batch: list[tuple[int, bytes]], raw: RawRows,
                table: GroundingTable, regions: Regions, meta: dict[str, Any],
                rejected: dict[int, Any], found: list[RowProblem],
                in_cal: NDArray[np.bool_] | None, compact: bool) -> NDArray[np.object_]:
    """Write the batch row by row (kept and rejected rows); returns each row's status."""
    raw_by_line = dict(batch)
    kept_lines = set(table.line.tolist()) if table.line is not None else set()
    for p in found:
        if p.action == "rejected" and p.line not in rejected and p.line in raw_by_line \
                and p.line not in kept_lines:
            rejected[p.line] = _record(raw, p.line)
    rows = certified_rows(table, regions, meta, rejected, found, in_calibration=in_cal)
    recs = _records_by_line(raw, rejected)
    order = sorted([*kept_lines, *rejected])
    for line, row in zip(order, rows, strict=True):
        out.write(_out_line(raw_by_line.get(line), row, recs.get(line), compact))
        out.write(b"\n")
    return np.array([r["cover"]["status"] for r in rows], dtype=object)


def _record(raw: Any, line: int) -> Any:
    idx = np.flatnonzero(raw.lines == line)
    return raw.records[int(idx[0])] if idx.size else raw.rejected.get(line)


def _records_by_line(raw: Any, rejected: dict[int, Any]) -> dict[int, Any]:
    out = dict(zip(raw.lines.tolist(), raw.records, strict=True))
    return out | rejected


def _reject(table: Any, mask: NDArray[np.bool_], why: str, name: str) -> list[RowProblem]:
    lines = table.line[mask].tolist() if table.line is not None else []
    return [RowProblem(name, int(ln), str(q), why, "rejected")
            for ln, q in zip(lines, table.qid[mask].tolist(), strict=True)]
