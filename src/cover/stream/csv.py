"""Certify a CSV (or TSV) file of any size in bounded memory, a batch of lines at a time.

Each output line is the input line **byte for byte** (a line rejected for its count of
fields or an unclosed quote cut or padded to the header's fields: :func:`header_wide`)
followed by the cover columns
(:data:`COVER_COLUMNS`, then :data:`P_VALUE_COLUMN` when the calibrator kept its
calibration scores); ``compact=True`` writes only the qid and vid columns before
them. The header gets the cover column names appended. Lines are parsed a batch at a
time by pyarrow's CSV reader (only the mapped columns, with fixed types, so every batch
reads alike) and certified by the Arrow kernel :func:`cover.stream.arrow.certify_batch`.
A value that spans lines (a quoted newline) cannot be echoed line by line: it is an
error naming the lines. Rows are numbered by their line in the file (the header is
line 1), as the whole-file reader numbers them.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.calibrator import Calibrator
from cover.data.rules import duplicate_reason
from cover.errors import ProblemTally, RowProblem
from cover.io.arrow_columns import without_long_ids
from cover.io.csv_lines import csv_batches, csv_fields
from cover.io.generic import parse_columns
from cover.io.jsonl import OnError
from cover.io.output import atomic_open
from cover.io.seen import SeenIds, repeated_rows
from cover.stream.arrow import certify_rows, pa
from cover.stream.output_fields import COVER_COLUMNS, P_VALUE_COLUMN
from cover.stream.stage import CertifyStage, StreamCounts

DEFAULT_BATCH_LINES = 131_072


def certify_csv(
    cal: Calibrator,
    src: str | Path,
    dst: str | Path,
    *,
    columns: dict[str, str] | str,
    videos: tuple[Any, Any] | None = None,
    batch_rows: int = DEFAULT_BATCH_LINES,
    compact: bool = False,
    on_error: OnError = "reject",
    inputs: list[str | Path | None] | None = None,
    stage: CertifyStage | None = None,
    before_commit: Callable[[NDArray[np.str_]], list[RowProblem]] | None = None,
) -> StreamCounts:
    """Stream ``src`` into ``dst`` (atomically); ``rows == certified + refused + rejected``.
    A qid repeated on a later line is rejected there, whichever batch it falls in;
    ``stage`` is the run's certify stage (else one of ``cal`` and ``videos``; with its
    ``--qids`` list, only the listed rows and the rejected ones are written).
    ``before_commit(the listed qids some row has)``: the problems found once every
    batch is read (listed qids no row has), counted as the rows' are.
    Under ``on_error="raise"`` a rejected row stops the run once every batch is read (as
    a whole read names them), ``dst`` untouched."""
    csv_in = csv_batches(src, parse_columns(columns), batch_rows)
    delim, name = csv_in.delim, csv_in.name
    ids = [csv_in.mapping[f] for f in ("qid", "vid") if f in csv_in.mapping]
    counts = StreamCounts()
    stage = stage or CertifyStage.of(cal, videos=videos)
    names = [*COVER_COLUMNS, *([P_VALUE_COLUMN] if stage.p_values else [])]
    seen = SeenIds()  # the qids of earlier batches, each with its first line
    bad = ProblemTally()  # under on_error="raise": every rejected row, raised at the end
    with atomic_open(dst, "wb", inputs=[src, *(inputs or [])], threaded=True) as out:
        head = (_pick(csv_in.header, [csv_in.names.index(c) for c in ids], delim)
                if compact else csv_in.header)
        out.write(head + delim + delim.join(c.encode() for c in names) + b"\n")
        for batch, table, lines, unread in csv_in:
            qids = table.column(csv_in.mapping["qid"])
            done = certify_rows(
                cal, table, columns=csv_in.mapping, lines=lines, source=name, stage=stage,
                reasons=unread, counts=counts, repeats=batch_repeats(seen, qids, lines))
            if on_error == "raise":
                bad.add([p for p in done.problems if p.action == "rejected"])  # line order
            if bad:  # the output is dropped: nothing more to write
                continue
            written = done.table
            cells = _cover_cells(written.column("cover").combine_chunks(), delim,
                                 [written.column(c) for c in ids] if compact else [])
            if compact:  # qid and vid as parsed, then the cover columns
                out.write(b"\n".join(cells) + b"\n" if cells else b"")
            else:  # one write a batch: the writer thread takes whole batches
                raws = header_wide(batch, unread, len(csv_in.names), delim)
                if done.rows is not None:
                    raws = [raws[i] for i in done.rows.tolist()]
                out.write(b"".join([raw + delim + tail + b"\n"
                                    for raw, tail in zip(raws, cells, strict=True)]))
        late = [] if before_commit is None else before_commit(stage.listed_seen(counts))
        # Every batch read, as a whole read reads every row; dst is left as it was.
        stage.end_of_input(bad, counts, on_error, name, late)
    return counts


def header_wide(batch: list[tuple[int, bytes]], unread: dict[int, str], width: int,
                delim: bytes) -> list[bytes]:
    """The batch's lines as echoed, each of ``width`` fields so that the cover cells after
    them sit under their names: byte for byte, but a line pyarrow could not read
    (``unread``) for its shape. One of fewer fields is given empty ones up to ``width``
    when that reads as ``width`` fields with the cells after them (:func:`_holds`); any
    other (more fields, a quote left open, a field past the csv module's limit) is
    written as its first ``width`` fields, re-quoted (the reason gives its count of
    fields; the input file keeps the line)."""
    raws = [raw for _, raw in batch]
    sep = delim.decode()
    for i in unread:
        fields = csv_fields(raws[i].decode("utf-8", "surrogateescape"), sep)
        if fields == []:  # an empty line is one empty field, as the delimiters added count
            fields = [""]
        if fields is not None and len(fields) <= width:
            kept = raws[i] + delim * (width - len(fields))
            if _holds(kept, width, sep):
                raws[i] = kept
                continue
        cut = (fields or [])[:width]
        raws[i] = _csv_line([*cut, *[""] * (width - len(cut))], sep)
    return raws


def _holds(line: bytes, width: int, delim: str) -> bool:
    """Whether ``line`` followed by a delimiter and a cell reads as ``width`` fields and
    that cell: no quote left open to swallow the cover cells after it."""
    got = csv_fields((line + delim.encode() + b"x").decode("utf-8", "surrogateescape"), delim)
    return got is not None and len(got) == width + 1 and got[-1] == "x"


def _csv_line(fields: list[str], delim: str) -> bytes:
    """``fields`` as one CSV line, quoted where needed (no line end)."""
    buf = io.StringIO()
    csv.writer(buf, delimiter=delim, lineterminator="").writerow(fields)
    return buf.getvalue().encode("utf-8", "surrogateescape")


def batch_repeats(seen: SeenIds, qids: Any, lines: NDArray[np.int64]) -> dict[int, str]:
    """Reasons for the rows of a batch whose qid an earlier row had, in an earlier batch
    (``seen``, which then takes this batch's qids) or earlier in this one
    (:func:`cover.io.seen.repeated_rows`), each naming the line of that qid's first row:
    the rule of a whole read, in one pass over the file."""
    # an id too long to be one is its shown start here (the reader rejects it first)
    text = np.asarray(without_long_ids(qids, "qid")[0].to_numpy(zero_copy_only=False),
                      dtype=str)
    dup, first = seen.add_lines(text, lines)
    rows, firsts = repeated_rows(text)  # within the batch, the ids as `seen` holds them
    new_here = ~dup[rows]  # an id this batch meets first: its first line is here
    first[rows[new_here]] = lines[firsts[new_here]]
    dup[rows] = True
    return {int(i): duplicate_reason(int(first[i])) for i in np.flatnonzero(dup).tolist()}


def _pick(raw: bytes, idx: list[int], delim: bytes) -> bytes:
    """The fields ``idx`` of one CSV line, re-quoted (the compact output's qid, vid)."""
    text = raw.decode("utf-8-sig", errors="replace")
    row = next(csv.reader([text], delimiter=delim.decode()))
    return _csv_line([row[i] if i < len(row) else "" for i in idx], delim.decode())


def _cover_cells(block: Any, delim: bytes, lead: list[Any]) -> list[bytes]:
    """The cover columns of each row (after the ``lead`` columns, if any) as one delimited
    byte string, written by Arrow's CSV writer (no Python per row): the region as JSON
    text ``[[s, e], ...]`` (numbers in their shortest round-trip form), null fields
    empty, text quoted; the p-value last when the block has one."""
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    p = pa()
    region = block.field("region")
    comps = region.values  # one [start, end] list per component, all rows
    nums = pc.cast(comps.values, p.string())
    pairs = pc.binary_join(p.ListArray.from_arrays(comps.offsets, nums), ", ")
    pairs = pc.binary_join_element_wise("[", pairs, "]", "")
    joined = pc.binary_join(p.ListArray.from_arrays(region.offsets, pairs,
                                                    mask=region.is_null()), ", ")
    cells = {f"lead{i}": col for i, col in enumerate(lead)}
    cells |= {f.name: block.field(f.name) for f in block.type}  # in the block's order
    cells["region"] = pc.binary_join_element_wise("[", joined, "]", "")
    # A message never spans lines in the output (it would split a row in two).
    cells["reason"] = pc.replace_substring_regex(block.field("reason"), "[\r\n]+", " ")
    out = p.BufferOutputStream()
    pcsv.write_csv(p.table(cells), out, pcsv.WriteOptions(
        include_header=False, delimiter=delim.decode(), quoting_style="needed"))
    return out.getvalue().to_pybytes().split(b"\n")[:-1]

