"""Arrow tables (Parquet, CSV/TSV) read into COVER's columns with a column mapping.

pyarrow is optional (``pip install 'cover-grounding[parquet]'``): without it, reading
CSV or Parquet is an :class:`~cover.errors.InputError` saying how to install it. A
mapped field ``a.0`` / ``a.b`` indexes a list column or enters a struct column; a
column the file lacks is an error naming the file and the columns it has, and a list
column of the wrong type (e.g. a list written out as text) is one naming the column
and the type found. An id or number column is read by type (:func:`arrow_ids`,
:func:`arrow_numbers`; text straight from Arrow's buffers, :func:`arrow_text`), so a bad
value is a row problem, not the file's. :mod:`cover.io.generic` reads a whole file through
this; the batch readers (:mod:`cover.io.batches`, :mod:`cover.io.csv_lines`) a batch at
a time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.rules import DURATION_RULE, MAX_ID_CHARS, shown_id, too_long_id
from cover.data.validate import id_reasons as text_id_reasons
from cover.errors import InputError
from cover.io.columns import (
    Columns,
    id_reasons,
    id_text,
    numbers,
    pair_windows,
    value_ids,
)
from cover.io.fields import not_a_number
from cover.io.jsonl import object_column
from cover.io.opener import (
    CSV_SUFFIXES,
    check_input,
    is_gzip,
    kind_suffix,
    not_parquet,
    parquet_file,
)
from cover.io.row_checks import id_records
from cover.ragged import Ragged

_NEEDS_PYARROW = "reading CSV/Parquet needs pyarrow: pip install 'cover-grounding[parquet]'"


def pyarrow_modules() -> tuple[Any, Any, Any]:
    try:
        import pyarrow.compute as pc
        import pyarrow.csv as pcsv
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(_NEEDS_PYARROW) from None
    return pc, pcsv, pq


def pyarrow_module() -> Any:
    """pyarrow alone (its CSV reader is imported only by the readers that need it)."""
    try:
        import pyarrow
    except ImportError:
        raise InputError(_NEEDS_PYARROW) from None
    return pyarrow


def read_arrow(path: str | Path) -> Any:
    """The whole Parquet file as a pyarrow Table (a CSV file is read by
    :func:`cover.io.csv_lines.csv_columns`)."""
    _, _, pq = pyarrow_modules()
    p = check_input(path)
    if is_gzip(p):  # Parquet needs to seek: gunzip into memory
        return parquet_file(p).read()
    try:
        return pq.read_table(p)
    except Exception as exc:  # pyarrow raises its own error types
        raise InputError(f"{path}: {not_parquet(exc)}") from None


def arrow_column(table: Any, where: str, path: str) -> Any:
    if where in table.column_names:
        return table.column(where)
    pyarrow_module()
    import pyarrow.compute as pc
    head, *rest = where.split(".")
    if head not in table.column_names:
        raise InputError(f"{path}: no column {head!r} (columns: {', '.join(table.column_names)})")
    col = table.column(head)
    for part in rest:
        col = (pc.list_element(col, int(part)) if part.lstrip("-").isdigit()
               else pc.struct_field(col, part))
    return col


def arrow_columns(table: Any, m: dict[str, str], name: str, first_row: int = 0, *,
                  with_records: bool = True, raw_ids: bool = False
                  ) -> tuple[Columns, NDArray[np.object_]]:
    """The mapped fields of an Arrow table as :class:`Columns` (and one record per row
    when ``with_records``); ``raw_ids``: integer qids and vids stay integers
    (:func:`cover.io.columns.arrow_ids`), for readers that never show them as text."""
    def col(f: str) -> Any:
        return arrow_column(table, m[f], name)

    n = table.num_rows
    qid, bad = arrow_ids(col("qid"), "qid", text=not raw_ids)
    vid, bad_vid = (arrow_ids(col("vid"), "vid", text=not raw_ids) if "vid" in m
                    else (qid.copy(), {}))
    reasons = id_reasons(bad, bad_vid)

    def num(f: str) -> NDArray[np.float64]:
        values, why = arrow_numbers(col(f), DURATION_RULE if f == "duration" else None,
                                    m[f])
        reasons.update({i: w for i, w in why.items() if i not in reasons})
        return values

    dur = num("duration") if "duration" in m else np.full(n, np.nan)
    if "windows" in m:
        win, off = _arrow_ragged(col("windows").combine_chunks(), name, m["windows"])
    elif "start" in m:
        win, off = pair_windows(num("start"), num("end"))
    else:
        win, off = np.empty((0, 2)), np.zeros(n + 1, dtype=np.int64)
    sal = None
    if "saliency" in m:
        arr = col("saliency").combine_chunks()
        _require_list(arr, name, m["saliency"], "list<number> (one value per clip)", depth=1)
        sal = Ragged(np.asarray(arr.flatten().to_numpy(zero_copy_only=False), dtype=np.float64),
                     np.asarray(arr.offsets.to_numpy(), dtype=np.int64))
    query = None
    if "query" in m:
        query = object_column(col("query").to_pylist())
    header = 1 if kind_suffix(name) in CSV_SUFFIXES else 0
    c = Columns(source=name, qid=qid, vid=vid, duration=dur, windows=win, offsets=off,
                line=np.arange(1, n + 1, dtype=np.int64) + header + first_row, query=query,
                saliency=sal, reasons=reasons)
    # one dict per row: only for writers that echo rows back as JSON
    return c, object_column(id_records(qid, vid) if with_records else [])


def _arrow_ragged(arr: Any, name: str, where: str) -> tuple[NDArray[np.float64],
                                                          NDArray[np.int64]]:
    """A list<list<number>> column as (windows, offsets), straight from Arrow buffers."""
    _require_list(arr, name, where, "list<list<number>> ([[start, end(, score)], ...])",
                  depth=2)
    off = np.asarray(arr.offsets.to_numpy(), dtype=np.int64)
    inner = arr.flatten()
    lens = np.diff(np.asarray(inner.offsets.to_numpy(), dtype=np.int64))
    if lens.size and (not (lens == lens[0]).all() or lens[0] not in (2, 3)):
        raise InputError(f"{name}: column {where!r} must hold [[start, end(, score)], ...]")
    width = int(lens[0]) if lens.size else 2
    values = np.asarray(inner.flatten().to_numpy(zero_copy_only=False), dtype=np.float64)
    return values.reshape(-1, width), off - off[0]


def _require_list(arr: Any, name: str, where: str, want: str, *, depth: int) -> None:
    """An Arrow column of nested lists of numbers, ``depth`` deep; else a message naming
    the column and the type found (e.g. a list written out as text)."""
    import pyarrow as pa

    t = arr.type
    for _ in range(depth):
        if not (pa.types.is_list(t) or pa.types.is_large_list(t)):
            raise InputError(f"{name}: column {where!r} must be {want}, but it is {arr.type}")
        t = t.value_type
    if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_null(t)):
        raise InputError(f"{name}: column {where!r} must be {want}, but it is {arr.type}")


def arrow_ids(col: Any, key: str, *, text: bool = True
              ) -> tuple[NDArray[Any], dict[int, str]]:
    """An Arrow id column as text, and row -> why a value is no id
    (:func:`cover.io.columns.value_ids`): integers and text pass by type; a float
    (``2579.0``), a boolean or a null is refused as the JSON-lines reader refuses it.
    ``text=False``: integers without nulls stay integers (a table reads them as text only
    when shown, :class:`cover.data.table.TextIds`; ``str`` of each is ~0.4 us a row)."""
    import pyarrow as pa

    t = col.type
    if pa.types.is_dictionary(t):  # (pandas' categorical) read as its values are
        col = col.cast(t.value_type)
        t = col.type
    if pa.types.is_integer(t) and not col.null_count and not text:
        return np.asarray(col.to_numpy(zero_copy_only=False)), {}
    long: dict[int, str] = {}
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        col, long = without_long_ids(col, key)
    if (pa.types.is_string(t) or pa.types.is_large_string(t)) and not col.null_count:
        text_ids = arrow_text(col)
        # An empty or space-padded id is refused here, by the reader, as in a column
        # with nulls (value_ids): before any other rule, whichever rows a batch holds.
        return text_ids, text_id_reasons(text_ids, key) | long
    out = np.asarray(col.to_numpy(zero_copy_only=False)).astype(str)
    if pa.types.is_integer(t) and not col.null_count:
        return out, {}
    values = col.to_pylist()
    if col.null_count:  # "nan" / "None" as text would be named as the row's qid
        out = id_text(values)
    return out, value_ids(values, key) | long


def without_long_ids(col: Any, key: str) -> tuple[Any, dict[int, str]]:
    """A string column with every id longer than ``MAX_ID_CHARS`` cut to how messages
    show it (:func:`cover.data.rules.shown_id`), and row -> why each is no id: numpy
    text is as wide as its longest value, so one id of a million characters would make
    every row of the batch a million wide."""
    import pyarrow as pa
    import pyarrow.compute as pc

    length = pc.utf8_length(col)
    over = pc.fill_null(pc.greater(length, MAX_ID_CHARS), False)
    if not pc.any(over).as_py():
        return col, {}
    rows = np.flatnonzero(over.to_numpy(zero_copy_only=False))
    sizes = np.asarray(length.to_numpy(zero_copy_only=False))[rows]
    if isinstance(col, pa.ChunkedArray):
        col, over = col.combine_chunks(), over.combine_chunks()
    shown = pa.array([shown_id(v) for v in col.take(rows).to_pylist()], type=col.type)
    return (pc.replace_with_mask(col, over, shown),
            {int(i): too_long_id(int(n), key) for i, n in zip(rows, sizes, strict=True)})


def arrow_numbers(col: Any, why: str | None = None, name: str = ""
                  ) -> tuple[NDArray[np.float64], dict[int, str]]:
    """An Arrow number column as floats (null: NaN), and row -> why a value is no number
    (a string ``"150"``, a boolean): ``why`` when given (the duration's rule), else
    ``<name> holds ... where a number is expected``, the JSON-lines reader's words."""
    import pyarrow as pa

    t = col.type
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_null(t) \
            or pa.types.is_decimal(t):
        return np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64), {}
    values = col.to_pylist()
    bad = {i: why or f"{name} {not_a_number(v)}" for i, v in enumerate(values)
           if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)))}
    return numbers(values), bad


def arrow_text(col: Any) -> NDArray[np.str_]:
    """A string Arrow column without nulls as numpy text (``<U{longest}``), equal to
    ``to_numpy().astype(str)``. ASCII text is padded with NULs to the longest in Arrow
    and widened byte by byte (numpy text ends at its trailing NULs; no Python string
    per row, ~20x faster); other text goes through Python strings."""
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype="<U1")
    data, off = _string_buffers(arr)
    if data.size and int(data.max()) >= 0x80:  # not ASCII: UTF-8 needs decoding
        return np.asarray(arr.to_numpy(zero_copy_only=False)).astype(str)
    width = max(int(np.diff(off).max()), 1)
    padded, _ = _string_buffers(pc.ascii_rpad(arr, width=width, padding="\x00"))
    return padded.astype(np.uint32).view(f"<U{width}")


def _string_buffers(arr: Any) -> tuple[NDArray[np.uint8], NDArray[Any]]:
    """A string array's bytes (its rows', in order) and offsets, as numpy views."""
    import pyarrow as pa

    _, off_buf, data_buf = arr.buffers()
    wide = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    off = np.frombuffer(off_buf, dtype=wide)[arr.offset:arr.offset + len(arr) + 1]
    data = (np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None
            else np.zeros(0, dtype=np.uint8))
    return data[int(off[0]):int(off[-1])], off
