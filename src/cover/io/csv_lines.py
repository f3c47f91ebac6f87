"""CSV (or TSV) lines parsed by pyarrow with fixed column types, a bad line set aside.

The mapped columns are read with fixed types (ids and query as text, exactly as
written; duration / start / end as numbers), so every batch of a file reads alike and
an id is never turned into a number (``18446744073709551616`` stays that text, a
``latin-1`` byte never becomes a ``b'...'`` id). A batch pyarrow cannot parse as a
whole (a line with too few fields, ``abc`` in a number column, a byte that is not
UTF-8) is split in halves until the lines it refuses are found (a few parses per bad
line, none when the batch is clean); each such line becomes a row problem naming why,
and the batch is parsed again with that line replaced by an empty row (its qid kept
when it can be read), so rows stay aligned with lines and the caller rejects it with
its reason. Every CSV read goes through :func:`csv_batches`: the streams
(:mod:`cover.stream.csv`, :mod:`cover.stream.evaluate_tables`, streamed calibration), the
batch reader :func:`cover.io.batches.iter_batches` and the whole-file read
(:func:`csv_columns`, for :mod:`cover.io.generic`), so a line gets the same number and
the same fate on every path; the Arrow side is :mod:`cover.io.arrow_columns`.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.errors import InputError
from cover.io.arrow_columns import arrow_columns, pyarrow_modules
from cover.io.columns import Columns
from cover.io.jsonl import json_text
from cover.io.lines import line_batches
from cover.io.opener import kind_suffix

TEXT_FIELDS = ("qid", "vid", "query")
NUMBER_FIELDS = ("duration", "start", "end")


def column_types(mapping: dict[str, str]) -> dict[str, Any]:
    """The pyarrow type of each mapped column: text for ids and query, float otherwise."""
    import pyarrow as pa

    types = {mapping[f]: pa.float64() for f in NUMBER_FIELDS if f in mapping}
    return types | {mapping[f]: pa.string() for f in TEXT_FIELDS if f in mapping}


def header_names(header: bytes, delim: str, name: str) -> list[str]:
    """The column names of a header line (a byte-order mark dropped)."""
    try:
        text = header.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{name}:1: the header is not UTF-8 text") from None
    fields = csv_fields(text, delim)
    if fields is None:
        raise InputError(f"{name}:1: a header field is longer than the "
                         f"{csv.field_size_limit():,} characters a CSV field may hold here")
    return fields


def parse_lines(header: bytes, raws: list[bytes], lines: NDArray[np.int64], delim: str,
                types: dict[str, Any], name: str, qid_column: str | None = None
                ) -> tuple[Any, dict[int, str]]:
    """``(table of the typed columns, {row index: why})`` for these data lines, one row
    per line; a row in the dict is a line pyarrow could not read (an empty row but for
    its qid, in ``qid_column``). A quoted value spanning lines is an error naming them."""
    import pyarrow as pa

    try:
        table = _read(header, raws, delim, types)
        bad: dict[int, str] = {}
    except pa.ArrowInvalid:
        refused: list[int] = []
        _bisect(header, raws, delim, types, 0, len(raws), refused)
        names = header_names(header, delim, name)
        bad = {i: line_problem(raws[i], header, names, delim, types) for i in refused}
        fixed = list(raws)
        for i in refused:
            fixed[i] = _placeholder(raws[i], names, delim, qid_column)
        try:
            table = _read(header, fixed, delim, types)
        except pa.ArrowInvalid as exc:  # not one line's fault (e.g. a quote left open)
            raise InputError(f"{name}: lines {int(lines[0])}-{int(lines[-1])}: cannot read "
                             f"as CSV: {_first_line(str(exc))}") from None
    if table.num_rows != len(raws):
        raise InputError(f"{name}: lines {int(lines[0])}-{int(lines[-1])} hold "
                         f"{table.num_rows} rows for {len(raws)} lines: a quoted value spans "
                         "lines, which a CSV read line by line cannot hold")
    return table, bad


@dataclass
class CsvBatches:
    """A CSV file's header and its data lines a batch at a time, each batch also parsed:
    ``(lines as (number, bytes), Arrow table of the mapped columns, line numbers)``."""

    name: str
    header: bytes
    names: list[str]
    delim: bytes
    mapping: dict[str, str]
    _rest: Iterator[list[tuple[int, bytes]]]

    def __iter__(self) -> Iterator[tuple[list[tuple[int, bytes]], Any, NDArray[np.int64],
                                         dict[int, str]]]:
        """The batches with the mapped columns parsed (:meth:`parsed`)."""
        return self.parsed(column_types(self.mapping))

    def raw(self) -> Iterator[list[tuple[int, bytes]]]:
        """The data lines a batch at a time, unparsed (instead of iterating the batches)."""
        return (batch for batch in self._rest if batch)

    def parsed(self, types: dict[str, Any]) -> Iterator[tuple[
            list[tuple[int, bytes]], Any, NDArray[np.int64], dict[int, str]]]:
        """``(lines, table, line numbers, {row: why})`` a batch at a time, the table of
        the columns ``types`` names (column -> Arrow type): a line pyarrow cannot read
        is an empty row of the table (its qid kept when readable) with its reason, for
        the caller to reject (:func:`parse_lines`)."""
        for batch in self._rest:
            if batch:
                lines = np.fromiter(map(itemgetter(0), batch), np.int64, len(batch))
                table, bad = parse_lines(self.header, list(map(itemgetter(1), batch)), lines,
                                         self.delim.decode(), types, self.name,
                                         self.mapping.get("qid"))
                yield batch, table, lines, bad


def csv_batches(src: str | Path, mapping: dict[str, str], batch_rows: int) -> CsvBatches:
    """Open ``src`` (gzip read transparently; ``.tsv`` tab-separated) for batches of
    ``batch_rows`` data lines (numbered as an editor numbers them, the header line 1,
    blank lines skipped); the header must name every column of ``mapping``."""
    if batch_rows < 1:
        raise ValueError(f"batch_rows must be >= 1, got {batch_rows}")
    for f in ("windows", "saliency"):
        if f in mapping:
            raise InputError(f"{src}: --columns {f}= needs list columns, which CSV cannot "
                             "hold; map start= and end= (or convert the file to Parquet)")
    delim = b"\t" if kind_suffix(Path(src)) == ".tsv" else b","
    name = str(src)
    batches = line_batches(src, batch_rows, header=True)
    first = next(batches, [])
    if not first or first[0][0] != 1:
        raise InputError(f"{src}: no header line (a CSV file starts with its column names)")
    header = first[0][1]
    names = header_names(header, delim.decode(), name)
    for f, col in mapping.items():
        if col not in names:
            raise InputError(f"{src}:1: no column {col!r} ({f}=) in the header "
                             f"(columns: {', '.join(names[:20])})")
    return CsvBatches(name, header, names, delim, mapping, chain([first[1:]], batches))


#: Data lines parsed at a time when a whole file is read (a few hundred MB of text at most).
WHOLE_FILE_LINES = 1 << 20


def csv_columns(path: str | Path, m: dict[str, str], name: str
                ) -> tuple[Columns, NDArray[np.object_], dict[int, str]]:
    """A CSV/TSV file's mapped columns, ids as written, read whole as the streams read it
    (:func:`csv_batches`, its batches joined); a line pyarrow cannot read is a row
    problem, not the file's."""
    import pyarrow as pa

    pyarrow_modules()
    csv_in = csv_batches(path, m, WHOLE_FILE_LINES)
    tables: list[Any] = []
    lines: list[NDArray[np.int64]] = []
    reasons: dict[int, str] = {}
    done = 0
    for _, table, ln, bad in csv_in:
        tables.append(table)
        lines.append(ln)
        reasons |= {done + i: why for i, why in bad.items()}
        done += ln.size
    if not tables:  # a header and no data line: the columns, no row
        tables = [_read(csv_in.header, [], csv_in.delim.decode(), column_types(m))]
    c, records = arrow_columns(pa.concat_tables(tables), m, name)
    c.line = np.concatenate(lines) if lines else np.zeros(0, np.int64)
    return c, records, reasons


def line_problem(raw: bytes, header: bytes, names: list[str], delim: str,
                 types: dict[str, Any]) -> str:
    """Why pyarrow refused one line: its field count, a number column's text, a byte
    that is not UTF-8 (else pyarrow's own first line)."""
    text = raw.decode("utf-8", "surrogateescape")
    fields = csv_fields(text, delim)
    if fields is None:
        return (f"cannot read as CSV: a field longer than the {csv.field_size_limit():,} "
                "characters a CSV field may hold here")
    if len(fields) != len(names):
        return (f"cannot read as CSV: {len(fields)} field(s), the header has "
                f"{len(names)}")
    for col, t in types.items():
        value = fields[names.index(col)]
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:  # surrogateescape keeps byte b as U+DC00 + b
            byte = ord(value[exc.start]) - 0xDC00
            return (f"column {col!r} is not UTF-8 text (byte 0x{byte:02x}); save the file "
                    "as UTF-8")
        if str(t) == "double" and value.strip() and not _is_number(value):
            return f"column {col!r} must hold a number, got {json_text(value)}"
    try:
        _read(header, [raw], delim, types)
    except Exception as exc:  # pyarrow's reason for a case the checks above miss
        return f"cannot read as CSV: {_first_line(str(exc))}"
    return "cannot read as CSV"


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


def _convert(types: dict[str, Any]) -> Any:
    import pyarrow.csv as pcsv

    return pcsv.ConvertOptions(column_types=types, include_columns=list(types),
                               strings_can_be_null=False)


def _read(header: bytes, raws: list[bytes], delim: str, types: dict[str, Any]) -> Any:
    import pyarrow.csv as pcsv

    # every line ended: pyarrow reads a header with no newline after it as no header
    return pcsv.read_csv(io.BytesIO(b"\n".join(chain((header,), raws, (b"",)))),
                         parse_options=pcsv.ParseOptions(delimiter=delim),
                         convert_options=_convert(types))


def _bisect(header: bytes, raws: list[bytes], delim: str, types: dict[str, Any],
            lo: int, hi: int, refused: list[int]) -> None:
    """Append to ``refused`` every line of ``raws[lo:hi]`` (which pyarrow refuses as a
    whole) that it refuses on its own: halves are parsed until one line is left."""
    import pyarrow as pa

    if hi - lo == 1:
        refused.append(lo)
        return
    mid = (lo + hi) // 2
    for a, b in ((lo, mid), (mid, hi)):
        try:
            _read(header, raws[a:b], delim, types)
        except pa.ArrowInvalid:
            _bisect(header, raws, delim, types, a, b, refused)


def _placeholder(raw: bytes, names: list[str], delim: str, qid_column: str | None) -> bytes:
    """An empty row for a line pyarrow refused, its qid kept when it can be read."""
    fields = csv_fields(raw.decode("utf-8", "replace"), delim) or []
    row = [""] * len(names)
    if qid_column is not None and qid_column in names:
        at = names.index(qid_column)
        row[at] = fields[at] if at < len(fields) else ""
    buf = io.StringIO()
    csv.writer(buf, delimiter=delim, lineterminator="").writerow(row)
    return buf.getvalue().encode()


def csv_fields(text: str, delim: str) -> list[str] | None:
    """The fields of one CSV line, or None when the csv module refuses it (a field past
    its size limit): the caller says so in its own words, never with the module's."""
    try:
        return next(csv.reader([text], delimiter=delim), [])
    except csv.Error:
        return None


def _first_line(msg: str) -> str:
    return msg.strip().splitlines()[0] if msg.strip() else msg
