"""Arrow tables (Parquet, CSV/TSV) read into COVER's columns with a column mapping.

pyarrow is optional (``pip install 'cover-grounding[parquet]'``): without it, reading
CSV or Parquet is an :class:`~cover.errors.InputError` saying how to install it. A
mapped field ``a.0`` / ``a.b`` indexes a list column or enters a struct column; a
column the file lacks is an error naming the file and the columns it has, and a list
column of the wrong type (e.g. a list written out as text) is one naming the column
and the type found. Ids and numbers go through :mod:`cover.io.columns`, so a bad value
is a row problem, not the file's. :mod:`cover.io.generic` reads a whole file through
this; the batch readers (:mod:`cover.io.batches`, :mod:`cover.io.csv_lines`) a batch at
a time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.rules import DURATION_RULE
from cover.errors import InputError
from cover.io.columns import Columns, arrow_ids, arrow_numbers, id_reasons
from cover.io.jsonl import object_column
from cover.io.opener import (
    CSV_SUFFIXES,
    PARQUET_SUFFIXES,
    check_input,
    is_gzip,
    kind_suffix,
    not_parquet,
    parquet_file,
)
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
    """The whole file as a pyarrow Table."""
    _, pcsv, pq = pyarrow_modules()
    p = check_input(path)
    kind = kind_suffix(p)
    if kind in PARQUET_SUFFIXES:
        if is_gzip(p):  # Parquet needs to seek: gunzip into memory
            return parquet_file(p).read()
        try:
            return pq.read_table(p)
        except Exception as exc:  # pyarrow raises its own error types
            raise InputError(f"{path}: {not_parquet(exc)}") from None
    try:
        opts = pcsv.ParseOptions(delimiter="\t" if kind == ".tsv" else ",")
        return pcsv.read_csv(arrow_source(p), parse_options=opts)
    except InputError:
        raise
    except Exception as exc:  # pyarrow raises its own error types
        raise InputError(f"{path}: cannot read as {kind.lstrip('.')}: {exc}") from None


def arrow_source(p: Path) -> Any:
    """``p`` for pyarrow's CSV reader: a gunzipping stream when its bytes are gzip (pyarrow
    itself goes by the name only)."""
    if not is_gzip(p):
        return p
    import pyarrow

    return pyarrow.CompressedInputStream(pyarrow.OSFile(str(p)), "gzip")


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
        s, e = num("start"), num("end")
        has = np.isfinite(s) | np.isfinite(e)
        win = np.column_stack([s, e])
        if has.all():  # one window a row: no gather, no count
            off = np.arange(n + 1, dtype=np.int64)
        else:
            win = win[has]
            off = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(has, out=off[1:])
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
    records = np.empty(n if with_records else 0, dtype=object)
    if with_records:  # one dict per row: only for writers that echo rows back as JSON
        records[:] = [{"qid": q, "vid": v}
                      for q, v in zip(qid.tolist(), vid.tolist(), strict=True)]
    return c, records



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
