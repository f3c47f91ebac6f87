"""Lines of a JSON-lines file read a few MB at a time: numbered at ``\\n`` from 1, a
trailing carriage return dropped, blank lines left out (as iterating the file would
number and cut them), gzip and a byte-order mark taken by
:func:`cover.io.opener.open_input`. One cutter for every batched reader: the streams'
exact-sized batches (:func:`line_batches`), the whole-file bulk reads' per-block chunks
(:func:`line_chunks`), and bytes held in memory (:func:`nonblank_lines`: the whole-file
per-row reader's, a service request's body). So a line gets the same number and the
same bytes, and a damaged one the same message, on every path."""

from __future__ import annotations

import contextlib
import gzip
import io
import os
from collections.abc import Generator, Iterator
from itertools import repeat
from pathlib import Path
from typing import IO

from cover.errors import InputError
from cover.io.opener import GZIP_ERRORS, cannot_read, damaged_gzip, open_input
from cover.io.threads import read_ahead

__all__ = ["MAX_LINE_BYTES", "READ_BYTES", "line_batches", "line_chunks", "nonblank_lines",
           "numbered_blocks"]

#: Bytes read at a time.
READ_BYTES = 1 << 22
#: The longest line a streamed read takes (1 GiB; ``$COVER_MAX_LINE_BYTES`` changes it):
#: one line is held whole to be parsed, about three times over at its peak
#: (bench/long_line.py), so this bounds the memory a streamed read can take whatever the
#: file holds.
MAX_LINE_BYTES = int(os.environ.get("COVER_MAX_LINE_BYTES", 1 << 30))

Numbered = list[tuple[int, bytes]]


def numbered_blocks(fh: IO[bytes], *, source: str = "<bytes>", capped: bool = True,
                    ahead: bool = False) -> Generator[tuple[int, Numbered], None, None]:
    """``(number of the block's first line, its non-blank lines)`` for blocks of a few
    MB. A block with no blank line and no line ending in a carriage return is numbered
    without a Python step per line.

    A line longer than a read costs time linear in its length: its reads are kept as a
    list of chunks and joined once, when its newline (or the end) arrives; joining the
    pending part on every read made a 2 GB line cost hours. Only that line is joined, not
    the read it ends in. Memory is that line about twice over (its chunks, then the
    joined line), freed once the line is parsed;
    ``capped``: a line longer than :data:`MAX_LINE_BYTES` is refused, naming its
    number. ``ahead``: the next reads are made on a thread while this block is used
    (:func:`cover.io.threads.read_ahead`), for a file read to its end."""
    pending: list[bytes] = []  # the unended line so far, as the reads that hold it
    held = 0
    lineno = 0
    reads = read_ahead(lambda: fh.read(READ_BYTES)) if ahead else None
    try:
        while True:
            try:
                data = next(reads) if reads is not None else fh.read(READ_BYTES)
            except GZIP_ERRORS as exc:  # named as every other reader names them
                raise (cannot_read(source, exc) if isinstance(exc, OSError) and not
                       isinstance(fh, gzip.GzipFile) else damaged_gzip(source, exc)) from None
            if data and b"\n" not in data:
                pending.append(data)  # the line goes on: no copy until it ends
                held += len(data)
                if capped and held > MAX_LINE_BYTES:
                    raise InputError(
                        f"{source}: line {lineno + 1} is longer than {MAX_LINE_BYTES} bytes, the "
                        "longest line COVER reads (one line is held whole to be parsed; set "
                        "COVER_MAX_LINE_BYTES to allow more)")
                continue
            held = 0
            parts = data.split(b"\n")
            if pending:  # only the line that went on is joined, not the whole read
                parts[0] = b"".join([*pending, parts[0]])
                pending.clear()
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
    finally:
        if reads is not None:  # the thread stops before the file is closed
            reads.close()


def line_batches(path: str | Path, batch_lines: int, *, header: bool = False
                 ) -> Iterator[Numbered]:
    """Non-blank ``(line number, bytes)`` pairs, exactly ``batch_lines`` at a time (the
    last batch fewer), for the streamed commands; ``header``: the first batch holds one
    line more (a CSV header), so every batch holds ``batch_lines`` data lines. A JSON
    array file cannot be streamed by lines: that is an error."""
    batch: Numbered = []
    size = batch_lines + header
    with open_input(path) as fh, \
            contextlib.closing(numbered_blocks(fh, source=str(path), ahead=True)) as blocks:
        for first, lines in blocks:
            if first == 1 and lines and lines[0][0] == 1 and lines[0][1].lstrip()[:1] == b"[":
                raise InputError(f"{path}: a JSON array, not JSON lines: it is read whole, "
                                 "not a batch of lines at a time (--in-memory)")
            batch += lines
            start = 0
            while len(batch) - start >= size:
                yield batch[start:start + size]
                start += size
                size = batch_lines
            del batch[:start]
    if batch:
        yield batch


def line_chunks(path: str | Path, size: int) -> Iterator[Numbered]:
    """The same lines at most ``size`` at a time, cut where the reads cut them, for the
    whole-file bulk readers (whose per-row reader takes any file they pass on: no line
    length cap, a JSON array left to it)."""
    with open_input(path) as fh, contextlib.closing(
            numbered_blocks(fh, source=str(path), capped=False, ahead=True)) as blocks:
        for _, lines in blocks:
            for a in range(0, len(lines), size):
                yield lines[a:a + size]


def nonblank_lines(data: bytes, *, capped: bool = True) -> Iterator[tuple[int, bytes]]:
    """The non-blank ``(line number, bytes)`` pairs of ``data`` held in memory, numbered
    and cut exactly as :func:`line_batches` cuts a file, a few MB at a time (a list of
    every line at once would cost more memory than the bytes); ``capped``: as
    :func:`numbered_blocks`."""
    for _, lines in numbered_blocks(io.BytesIO(data), capped=capped):
        yield from lines
