"""Reading JSON-lines (or a JSON array) with line numbers kept for error messages."""

from __future__ import annotations

import gc
import gzip
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.rules import OnError, id_problem, json_kind, json_text, raise_on_rejections
from cover.errors import InputError, RowProblem
from cover.io.lines import nonblank_lines
from cover.io.opener import (
    BOM,
    GZIP_ERRORS,
    GZIP_MAGIC,
    cannot_read,
    check_input,
    damaged_gzip,
)
from cover.io.output import atomic_open
from cover.io.row_checks import RawRows, check_ids, check_required, check_unique_qids, reject_rows

# The row rules live in cover.data.rules and the row checks (and RawRows) in
# cover.io.row_checks; the readers import them from here too.
__all__ = ["OnError", "RawRows", "check_ids", "check_required", "check_unique_qids",
           "field_column", "gc_paused", "id_problem", "json_text", "number_value", "object_column",
           "parse_json_lines", "raise_on_rejections", "read_input_bytes", "read_json_rows",
           "write_jsonl"]

json_loads: Callable[[bytes], Any]
try:  # orjson parses rows several times faster; the standard library is the fallback
    from orjson import loads as json_loads
except ImportError:  # pragma: no cover - orjson is a core dependency
    json_loads = json.loads

_QID_HINT = re.compile(r'"qid"\s*:\s*("?)([^,"}\s]+)\1')


def read_input_bytes(path: str | Path) -> bytes:
    """The bytes of an input file, gunzipped when they start with the gzip magic bytes
    (whatever the file is called), without a leading byte-order mark. A missing,
    unreadable or damaged file, a folder or a pipe is an :class:`InputError` naming it
    (:mod:`cover.io.opener`)."""
    p = check_input(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise cannot_read(path, exc) from None
    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except GZIP_ERRORS as exc:
            raise damaged_gzip(path, exc) from None
    return data.removeprefix(BOM)


def read_json_rows(path: str | Path) -> RawRows:
    """Parse a JSON-lines file (one object per line) or a JSON array of objects; gzip
    input is read transparently.

    Blank lines are skipped. A line that is not UTF-8, not JSON or not a JSON object
    becomes a rejected row whose problem names the line (and the qid when it can be
    seen), never a silent drop. Lines are counted at ``\\n``, as editors count them, a
    trailing carriage return dropped, as every other read cuts them
    (:mod:`cover.io.lines`).
    An empty file is an error.
    """
    name = str(path)
    data = read_input_bytes(path)
    if not data.strip():
        raise InputError(f"{name}: the file is empty (expected one JSON object per line)")
    if data.lstrip()[:1] == b"[":
        array = _read_json_array(name, data)
        if array is not None:
            return array
    # Rows hold no reference cycles: with the collector on, it rescans the growing list
    # of parsed rows again and again (about half the read of a large file).
    with gc_paused():
        return parse_json_lines(name, nonblank_lines(data, capped=False))


@contextmanager
def gc_paused() -> Iterator[None]:
    """Cyclic garbage collection off for the block (restored as it was)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def parse_json_lines(name: str, numbered: Iterable[tuple[int, bytes]]) -> RawRows:
    """Parse ``(line number, bytes)`` pairs of a JSON-lines file (the body of
    :func:`read_json_rows`; streaming readers feed it one batch of lines at a time)."""
    records: list[dict[str, Any]] = []
    lines: list[int] = []
    raw = RawRows(name, records, np.empty(0, dtype=np.int64))
    for lineno, line in numbered:
        if not line.strip():
            continue
        try:
            obj = json_loads(line)
            if type(obj) is dict and _big_float_id(obj):
                obj = json.loads(line)  # orjson reads integers >= 2**64 as floats
        except ValueError:
            try:
                obj = _parse_slowly(line)
            except _LineError as exc:
                text = line.decode("utf-8", "backslashreplace")
                m = _QID_HINT.search(text)
                raw.set_aside(RowProblem(name, lineno, m.group(2) if m else None,
                                         str(exc), "rejected"), text.rstrip("\r"))
                continue
        if not isinstance(obj, dict):
            raw.set_aside(RowProblem(name, lineno, None, "expected a JSON object, got "
                                     f"{json_kind(obj)}", "rejected"),
                          line.decode("utf-8", "backslashreplace").rstrip("\r"))
            continue
        records.append(obj)
        lines.append(lineno)
    raw.lines = np.asarray(lines, dtype=np.int64)
    return raw


def _big_float_id(rec: dict[str, Any]) -> bool:
    """Whether the qid or vid is a float as large as an integer orjson cannot hold
    (``18446744073709551616``): the standard library reads it exactly, as an int."""
    return any(type(v) is float and abs(v) >= 2.0**63 for v in (rec.get("qid"),
                                                                 rec.get("vid")))


def number_value(value: Any) -> float:
    """A JSON number as a float (``inf`` when an integer is too large for one); NaN for
    anything that is not a number, booleans and numeric strings included."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return math.nan
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


class _LineError(ValueError):
    """A line that cannot be a row: the message says why and where in the line."""


def _parse_slowly(line: bytes) -> Any:
    """The standard library's reading of a line the fast parser refused: it accepts
    NaN/Infinity (as Python writes them) and says where a line is malformed."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _LineError(f"not UTF-8 text (byte 0x{line[exc.start]:02x} at column "
                         f"{exc.start + 1}); save the file as UTF-8") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _LineError(f"malformed JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise _LineError("malformed JSON (nested too deeply)") from None


def _read_json_array(name: str, data: bytes) -> RawRows | None:
    """A whole-file JSON array, each entry numbered by the line it starts on, or by its
    place in the array when two entries start on one line; ``None`` when the file is not
    one array (JSON lines whose first line is an array)."""
    first = next(ln for ln in data.split(b"\n") if ln.strip())
    try:
        _parse_slowly(first)
        first_is_json = True
    except _LineError:
        first_is_json = False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if first_is_json:
            return None
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{name}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x}); "
                         "save the file as UTF-8") from None
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    line, counted = 1, 0
    entries: list[tuple[int, Any]] = []
    try:
        while True:
            while pos < len(text) and text[pos] in " \t\r\n,":
                pos += 1
            if pos >= len(text):
                return None
            if text[pos] == "]":
                break
            line += text.count("\n", counted, pos)
            counted = pos
            obj, pos = decoder.raw_decode(text, pos)
            entries.append((line, obj))
    except (json.JSONDecodeError, RecursionError) as exc:
        if first_is_json:
            return None
        where = (f"{exc.lineno}: malformed JSON array ({exc.msg} at column {exc.colno})"
                 if isinstance(exc, json.JSONDecodeError) else
                 f"{line}: malformed JSON array (nested too deeply)")
        raise InputError(f"{name}:{where}") from None
    if text[pos + 1 :].strip():
        return None  # e.g. JSON lines whose first line happens to be an array
    lines = np.array([ln for ln, _ in entries], dtype=np.int64)
    if lines.size > 1 and not (np.diff(lines) > 0).all():
        # Rows are told apart by their number: entries sharing a line (json.dump writes
        # them all on one) would be one row. Such an array's entries are numbered 1..n.
        lines = np.arange(1, lines.size + 1, dtype=np.int64)
    raw = RawRows(name, [obj for _, obj in entries], lines)
    reject_rows(raw, {i: f"entry is not a JSON object (got {json_kind(obj)})"
                      for i, (_, obj) in enumerate(entries) if not isinstance(obj, dict)})
    return raw


def object_column(values: list[Any]) -> NDArray[np.object_]:
    """A 1-d object array holding ``values`` as they are (dicts stay dicts)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def field_column(records: list[dict[str, Any]], key: str) -> NDArray[np.object_]:
    """``rec.get(key)`` for every record, as an object array (None where absent)."""
    return object_column([rec.get(key) for rec in records])


def write_jsonl(path: str | Path, rows: list[Any], *,
                inputs: Iterable[str | Path | None] = ()) -> None:
    """Write one JSON value per line, atomically (:mod:`cover.io.output`); ``allow_nan``
    is off: a non-finite float is a bug, never a half-written file."""
    with atomic_open(path, "w", inputs=inputs) as fh:
        for row in rows:
            fh.write(json.dumps(row, allow_nan=False))
            fh.write("\n")
