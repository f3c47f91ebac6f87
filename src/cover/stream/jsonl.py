"""Certify a Moment-DETR-style JSON-lines file of any size, a batch of lines at a time.

Memory is one batch of lines plus the qids seen so far (for the duplicate check),
independent of the file's size. Each batch goes through
:class:`cover.stream.jsonl_kernel.CertifyKernel`, which writes every line as its input
bytes with the ``cover`` block added, so every field the grounder wrote survives exactly
(number formatting and key order included).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.calibrator import Calibrator
from cover.errors import ProblemTally, RowProblem
from cover.io.jsonl import OnError
from cover.io.jsonl_batch import gc_paused
from cover.io.lines import line_batches
from cover.io.output import atomic_open
from cover.io.seen import SeenIds
from cover.stream.jsonl_kernel import CertifyKernel
from cover.stream.stage import StreamCounts, Videos

__all__ = ["DEFAULT_BATCH_LINES", "certify_jsonl"]

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
    it was. ``before_commit(seen qids)`` runs before the output is renamed
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
    with atomic_open(dst, "wb", inputs=[src, *(inputs or [])]) as out, gc_paused():
        for batch in line_batches(src, batch_lines):
            done = kernel.run(name, batch, seen)
            if on_error == "raise":
                bad.add(done.bad)  # in line order (the stage's)
            if not bad:  # once a row is bad the output is dropped: nothing more to write
                out.write(b"".join(done.parts))  # one write: faster than writelines here
            counts.add(Counter(done.status.tolist()), done.found, done.length)
            counts.in_calibration += done.in_calibration
            if every_problem:
                every += done.found
        late = [] if before_commit is None else before_commit(seen.array())
        if on_error == "raise":
            bad.add(late)
        # Every batch read, as a whole read reads every row: the same count and the same
        # first rows named, whatever the batch size; dst is left as it was.
        kernel.stage.raise_on(bad, on_error, name)
        counts.tally.add(late)
        if every_problem:
            every += late
    return counts, every
