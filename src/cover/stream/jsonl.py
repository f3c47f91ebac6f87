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

import io
import os
from collections.abc import Callable, Iterator
from itertools import repeat
from pathlib import Path
from typing import IO

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.calibrator import Calibrator
from cover.errors import InputError, RowProblem
from cover.io.jsonl import OnError, raise_on_rejections
from cover.io.jsonl_batch import gc_paused
from cover.io.opener import open_input
from cover.io.output import atomic_open
from cover.io.seen import SeenIds
from cover.stream.jsonl_kernel import CertifyKernel, splice
from cover.stream.stage import StreamCounts, Videos

__all__ = ["DEFAULT_BATCH_LINES", "certify_jsonl", "line_batches", "numbered_lines", "splice"]

#: 16,384 lines of 75-clip saliency (~1.1 KB each) keep a 1e6-line certify under ~500 MB
#: peak; 65,536 reached 1.3 GB (bench/results-stream.md).
DEFAULT_BATCH_LINES = 16_384


def line_batches(path: str | Path, batch_lines: int) -> Iterator[list[tuple[int, bytes]]]:
    """Non-blank ``(line number, bytes)`` pairs, ``batch_lines`` at a time (gzip read
    transparently, a byte-order mark skipped: :func:`cover.io.opener.open_input`). A JSON
    array file cannot be streamed by lines: that is an error."""
    batch: list[tuple[int, bytes]] = []
    with open_input(path) as fh:
        for first, lines in _numbered_blocks(fh, source=str(path)):
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
#: The longest line read (1 GiB; ``$COVER_MAX_LINE_BYTES`` changes it): one line is held
#: whole to be parsed, about three times over at its peak (bench/long_line.py), so this
#: bounds the memory a streamed read can take whatever the file holds.
MAX_LINE_BYTES = int(os.environ.get("COVER_MAX_LINE_BYTES", 1 << 30))


def _numbered_blocks(fh: IO[bytes], *, source: str = "<bytes>"
                     ) -> Iterator[tuple[int, list[tuple[int, bytes]]]]:
    """``(number of the block's first line, its non-blank lines)`` for blocks of a few MB:
    lines split at newlines, trailing carriage returns dropped, as iterating the file
    would. A block with no blank line and no line ending in a carriage return is
    numbered without a Python step per line.

    A line longer than a read costs time linear in its length: its reads are kept as a
    list of chunks and joined once, when its newline (or the end) arrives; joining the
    pending part on every read made a 2 GB line cost hours. Memory is that line about
    twice over (its chunks, then the joined line), freed once the line is parsed; a line
    longer than :data:`MAX_LINE_BYTES` is refused, naming its number."""
    pending: list[bytes] = []  # the unended line so far, as the reads that hold it
    held = 0
    lineno = 0
    while True:
        data = fh.read(_READ_BYTES)
        if data and b"\n" not in data:
            pending.append(data)  # the line goes on: no copy until it ends
            held += len(data)
            if held > MAX_LINE_BYTES:
                raise InputError(
                    f"{source}: line {lineno + 1} is longer than {MAX_LINE_BYTES} bytes, the "
                    "longest line COVER reads (one line is held whole to be parsed; set "
                    "COVER_MAX_LINE_BYTES to allow more)")
            continue
        held = 0
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
    ``on_error="raise"`` the first batch with a rejected row stops the run, and ``dst``
    is left as it was. ``before_commit(seen qids)`` runs before the output is renamed
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
    # Collection paused: each batch's rows are freed by reference counting (they hold
    # no cycles); rescanning them as they age costs more than parsing them.
    with atomic_open(dst, "wb", inputs=[src, *(inputs or [])]) as out, gc_paused():
        for batch in line_batches(src, batch_lines):
            done = kernel.run(name, batch, seen)
            out.write(b"".join(done.parts))  # one write: faster than writelines here
            raise_on_rejections(done.bad, on_error, name)  # before the rename: dst untouched
            counts.add(done.status, done.found)
            counts.in_calibration += done.in_calibration
            if every_problem:
                every += done.found
        if before_commit is not None:
            late = before_commit(seen.array())
            raise_on_rejections(late, on_error, name)
            counts.tally.add(late)
            if every_problem:
                every += late
    return counts, every


def numbered_lines(data: bytes) -> list[tuple[int, bytes]]:
    """The non-blank ``(line number, bytes)`` pairs of ``data`` held in memory, numbered
    and cut exactly as :func:`line_batches` cuts a file."""
    return [pair for _, lines in _numbered_blocks(io.BytesIO(data)) for pair in lines]
