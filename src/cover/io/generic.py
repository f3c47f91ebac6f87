"""Any table of predictions or ground truth, given a column mapping.

``--columns qid=id,start=pred.0,end=pred.1,vid=video,duration=len`` names, for each
field COVER needs, where it lives in a row: a column or key, then ``.<i>`` to index a
list or ``.<name>`` to enter an object. Fields: ``qid`` (required), ``vid``
(default: the qid), ``query``, ``duration``, and either ``start`` + ``end`` (one
window) or ``windows`` (``[[s, e(, score)], ...]``); predictions may add ``saliency``
(one value per clip). Files: JSON lines (``.jsonl``), JSON (a list of rows, or an
object ``key -> row`` whose key is the field ``key``), CSV/TSV and Parquet; the last
two are read with pyarrow (``pip install 'cover-grounding[parquet]'``) straight into
columns, with no Python object per row. :func:`cover.io.batches.iter_batches` reads a
large Parquet / CSV / JSON-lines file a batch of rows at a time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from cover.data.rules import DURATION_RULE
from cover.data.table import DEFAULT_CLIP_SECONDS
from cover.errors import InputError
from cover.io.columns import (
    Columns,
    arrow_ids,
    arrow_numbers,
    id_reasons,
    id_text,
    prediction_table,
    stack_windows,
    truth_table,
    value_ids,
)
from cover.io.document import load_document
from cover.io.jsonl import OnError, field_column, object_column, read_json_rows
from cover.io.opener import check_input, not_parquet, parquet_file
from cover.io.qvhighlights import Loaded
from cover.ragged import Ragged

Role = Literal["predictions", "ground_truth"]
FIELDS = ("qid", "vid", "query", "duration", "start", "end", "windows", "saliency")
CSV_SUFFIXES = (".csv", ".tsv")
PARQUET_SUFFIXES = (".parquet", ".pq")
TABLE_SUFFIXES = CSV_SUFFIXES + PARQUET_SUFFIXES
_GZIP_MAGIC = b"\x1f\x8b"


def kind_suffix(path: str | Path) -> str:
    """The suffix that names a file's kind, under a trailing ``.gz`` (``x.csv.gz`` ->
    ``.csv``); lower case."""
    p = Path(path)
    s = p.suffix.lower()
    return Path(p.stem).suffix.lower() if s == ".gz" else s


def is_gzip(path: str | Path) -> bool:
    """Whether the file starts with the gzip magic bytes (whatever it is called)."""
    try:
        with Path(path).open("rb") as fh:
            return fh.read(2) == _GZIP_MAGIC
    except OSError:
        return False


def parse_columns(spec: str | dict[str, str]) -> dict[str, str]:
    """``"qid=id,start=pred.0"`` -> ``{"qid": "id", "start": "pred.0"}``, checked."""
    if isinstance(spec, dict):
        mapping = dict(spec)
    else:
        mapping = {}
        for part in filter(None, (p.strip() for p in spec.split(","))):
            field, eq, where = part.partition("=")
            if not eq or not where.strip():
                raise InputError(f"--columns: expected FIELD=COLUMN, got {part!r}")
            mapping[field.strip()] = where.strip()
    unknown = sorted(set(mapping) - set(FIELDS))
    if unknown:
        raise InputError(f"--columns: unknown field(s) {', '.join(unknown)}; "
                         f"expected some of {', '.join(FIELDS)}")
    if "qid" not in mapping:
        raise InputError("--columns: the mapping must name the qid column (qid=...)")
    if ("start" in mapping) != ("end" in mapping):
        raise InputError("--columns: give both start= and end=, or windows=")
    return mapping


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


def read_rows(path: str | Path) -> tuple[list[dict[str, Any]], NDArray[np.int64], Any]:
    """Rows of a JSON / JSON-lines file with their lines (and the raw reader result)."""
    p = Path(path)
    if kind_suffix(p) == ".json":
        doc = load_document(path)
        if isinstance(doc, dict) and doc and all(isinstance(v, dict) for v in doc.values()):
            rows = [{"key": k, **v} for k, v in doc.items()]
            return rows, np.ones(len(rows), dtype=np.int64), None
    raw = read_json_rows(path)
    return raw.records, raw.lines, raw


def field_at(row: Any, where: str) -> Any:
    if isinstance(row, dict) and where in row:
        return row[where]
    v = row
    for part in where.split("."):
        if isinstance(v, dict):
            v = v.get(part)
        elif isinstance(v, list) and part.lstrip("-").isdigit() and -len(v) <= int(part) < len(v):
            v = v[int(part)]
        else:
            return None
    return v


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


def _floats(values: Any) -> NDArray[np.float64]:
    out = np.full(len(values), np.nan)
    for i, v in enumerate(values):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[i] = float(v)
    return out


def read_table(path: str | Path, columns: str | dict[str, str], *, role: Role,
               clip: float = DEFAULT_CLIP_SECONDS, on_error: OnError = "raise") -> Loaded:
    """Read ``path`` with the column mapping ``columns`` as predictions or ground truth."""
    m = parse_columns(columns)
    name = str(path)
    reasons: dict[int, str] = {}
    if kind_suffix(path) in CSV_SUFFIXES:
        from cover.io.csv_lines import csv_columns

        c, records, reasons = csv_columns(path, m, name)
    elif kind_suffix(path) in TABLE_SUFFIXES:
        c, records = arrow_columns(read_arrow(path), m, name)
    else:
        c, records, reasons = _from_rows(path, m, name)
    if role == "ground_truth":
        return truth_table(c, on_error=on_error, records=records, reasons=reasons)
    return prediction_table(c, clip=clip, on_error=on_error, records=records, reasons=reasons)


def _from_rows(path: str | Path, m: dict[str, str], name: str
               ) -> tuple[Columns, NDArray[np.object_], dict[int, str]]:
    rows, lines, raw = read_rows(path)
    return record_columns(rows, lines, list(raw.problems) if raw is not None else [], m, name)


def record_columns(rows: list[dict[str, Any]], lines: NDArray[np.int64],
                  problems: list[Any], m: dict[str, str], name: str
                  ) -> tuple[Columns, NDArray[np.object_], dict[int, str]]:
    reasons: dict[int, str] = {}
    qv = [field_at(r, m["qid"]) for r in rows]
    vv = [field_at(r, m["vid"]) for r in rows] if "vid" in m else qv
    qid, vid = id_text(qv), id_text(vv)
    ids = id_reasons(value_ids(qv, "qid"), value_ids(vv, "vid") if "vid" in m else {})
    dur = (_floats([field_at(r, m["duration"]) for r in rows]) if "duration" in m
           else np.full(qid.size, np.nan))
    if "windows" in m:
        vals = [field_at(r, m["windows"]) for r in rows]
        width = 3 if any(isinstance(v, list) and v and isinstance(v[0], list) and len(v[0]) == 3
                         for v in vals[:50]) else 2
        win, off, bad = stack_windows(vals, width)
        reasons.update({i: f"{m['windows']} must look like [[start, end(, score)], ...]"
                        for i in bad})
    elif "start" in m:
        s = _floats([field_at(r, m["start"]) for r in rows])
        e = _floats([field_at(r, m["end"]) for r in rows])
        has = np.isfinite(s) | np.isfinite(e)
        win = np.column_stack([s, e])[has]
        off = np.zeros(qid.size + 1, dtype=np.int64)
        np.cumsum(has, out=off[1:])
    else:
        win, off = np.empty((0, 2)), np.zeros(qid.size + 1, dtype=np.int64)
    sal = None
    if "saliency" in m:
        sv, so, _ = stack_windows([[[x] for x in v] if isinstance(v, list) else None
                                   for v in (field_at(r, m["saliency"]) for r in rows)], 1)
        sal = Ragged(sv[:, 0].copy(), so)
    c = Columns(source=name, qid=qid, vid=vid, duration=dur, windows=win, offsets=off,
                line=lines, query=(field_column([{"q": field_at(r, m["query"])} for r in rows], "q")
                                   if "query" in m else None), saliency=sal,
                problems=problems)
    records = object_column(rows)
    return c, records, reasons | ids  # a row without ids is rejected for that first


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
