"""A CSV or Parquet table's rows as JSON records: what a table certified into JSON lines
echoes of each row (``cover certify -o x.jsonl`` of a table read with ``--columns``), so
that every input field reaches the output, as a JSON row's do.

A CSV row is its header's names with the line's fields as text (a line of fewer fields
has the ones it has); a column the mapping reads as a number (``duration``, ``start``,
``end``) is written as that number when its text is a finite one (``"150"``: 150.0), so
the base grounder's window reads back (:func:`cover.io.regions_windows.base_windows`). A
Parquet row is its values; a value JSON cannot hold (a timestamp, bytes, a decimal) is
written as its text.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from cover.io.arrow_columns import read_arrow
from cover.io.csv_lines import NUMBER_FIELDS, WHOLE_FILE_LINES, csv_batches, csv_fields
from cover.io.opener import PARQUET_SUFFIXES, kind_suffix

__all__ = ["table_rows"]

_JSON = (str, int, float, bool, type(None))


def table_rows(path: str | Path, mapping: dict[str, str]) -> dict[int, dict[str, Any]]:
    """Each row of the table ``path`` by its line (CSV: its line in the file; Parquet: its
    place, from 1, as :func:`cover.io.arrow_columns.arrow_columns` numbers them), as a
    JSON record (the module doc)."""
    if kind_suffix(path) in PARQUET_SUFFIXES:
        rows = read_arrow(path).to_pylist()
        return {i: {k: _json_value(v) for k, v in r.items()} for i, r in enumerate(rows, 1)}
    csv_in = csv_batches(path, mapping, WHOLE_FILE_LINES)
    names, delim = csv_in.names, csv_in.delim.decode()
    numbers = [mapping[f] for f in NUMBER_FIELDS if f in mapping]
    out: dict[int, dict[str, Any]] = {}
    for batch in csv_in.raw():
        for line, raw in batch:
            fields = csv_fields(raw.decode("utf-8", "surrogateescape"), delim) or []
            rec: dict[str, Any] = dict(zip(names, fields, strict=False))
            for col in numbers:
                if col in rec:
                    rec[col] = _number(rec[col])
            out[line] = rec
    return out


def _number(text: str) -> Any:
    """``text`` as a float when it is a finite number, else as it is."""
    try:
        x = float(text)
    except ValueError:
        return text
    return x if math.isfinite(x) else text


def _json_value(v: Any) -> Any:
    """``v`` as JSON holds it: lists and objects through, a non-finite float or a value of
    another type (a timestamp, bytes, a decimal) as its text."""
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, _JSON):
        return v
    if isinstance(v, list):
        return [_json_value(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _json_value(x) for k, x in v.items()}
    if isinstance(v, bytes):
        return v.decode("utf-8", "backslashreplace")
    return v.isoformat() if hasattr(v, "isoformat") else str(v)
