"""Any table of predictions or ground truth, given a column mapping.

``--columns qid=id,start=pred.0,end=pred.1,vid=video,duration=len`` names, for each
field COVER needs, where it lives in a row: a column or key, then ``.<i>`` to index a
list or ``.<name>`` to enter an object. Fields: ``qid`` (required), ``vid``
(default: the qid), ``query``, ``duration``, and either ``start`` + ``end`` (one
window) or ``windows`` (``[[s, e(, score)], ...]``); predictions may add ``saliency``
(one value per clip). Files: JSON lines (``.jsonl``), JSON (a list of rows, or an
object ``key -> row`` whose key is the field ``key``), CSV/TSV and Parquet; the last two
straight into columns by pyarrow (:mod:`cover.io.arrow_columns`, whose names are
re-exported here, as are the file kinds of :mod:`cover.io.opener`).
:func:`cover.io.batches.iter_batches` reads a large Parquet / CSV / JSON-lines file a
batch of rows at a time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.table import DEFAULT_CLIP_SECONDS
from cover.errors import InputError
from cover.io.arrow_columns import (  # noqa: F401  (re-exported here)
    arrow_column,
    arrow_columns,
    pyarrow_module,
    pyarrow_modules,
    read_arrow,
)
from cover.io.columns import (
    Columns,
    Role,
    id_reasons,
    id_text,
    numbers,
    pair_windows,
    role_table,
    saliency_column,
    stack_windows,
    value_ids,
)
from cover.io.document import load_document
from cover.io.jsonl import OnError, object_column, read_json_rows
from cover.io.mapping import spec_items
from cover.io.opener import CSV_SUFFIXES, PARQUET_SUFFIXES, kind_suffix
from cover.io.qvhighlights import Loaded

FIELDS = ("qid", "vid", "query", "duration", "start", "end", "windows", "saliency")


def parse_columns(spec: str | dict[str, str], flag: str = "--columns") -> dict[str, str]:
    """``"qid=id,start=pred.0"`` -> ``{"qid": "id", "start": "pred.0"}``, checked; an
    error names ``flag`` (``--gt-columns`` for the ground truth's)."""
    mapping = spec_items(spec, FIELDS, "COLUMN", flag)
    if "qid" not in mapping:
        raise InputError(f"{flag}: the mapping must name the qid column (qid=...)")
    if ("start" in mapping) != ("end" in mapping):
        raise InputError(f"{flag}: give both start= and end=, or windows=")
    return mapping


def read_rows(path: str | Path) -> tuple[list[dict[str, Any]], NDArray[np.int64], list[Any]]:
    """Rows of a JSON / JSON-lines file with their lines and the reader's row problems."""
    if kind_suffix(path) == ".json" and (rows := keyed_rows(load_document(path))) is not None:
        return rows, np.ones(len(rows), dtype=np.int64), []
    raw = read_json_rows(path)
    return raw.records, raw.lines, list(raw.problems)


def keyed_rows(doc: Any) -> list[dict[str, Any]] | None:
    """A JSON object ``key -> row`` as rows, each with its key as the field ``key``; None
    for any other document."""
    if isinstance(doc, dict) and doc and all(isinstance(v, dict) for v in doc.values()):
        return [{"key": k, **v} for k, v in doc.items()]
    return None


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


def read_table(path: str | Path, columns: str | dict[str, str], *, role: Role,
               clip: float = DEFAULT_CLIP_SECONDS, on_error: OnError = "raise") -> Loaded:
    """Read ``path`` with the column mapping ``columns`` as predictions or ground truth."""
    m = parse_columns(columns, "--gt-columns" if role == "ground_truth" else "--columns")
    name = str(path)
    reasons: dict[int, str] = {}
    if kind_suffix(path) in CSV_SUFFIXES:
        from cover.io.csv_lines import csv_columns

        c, records, reasons = csv_columns(path, m, name)
    elif kind_suffix(path) in PARQUET_SUFFIXES:
        c, records = arrow_columns(read_arrow(path), m, name)
    else:
        c, records, reasons = record_columns(*read_rows(path), m, name)
    return role_table(role, c, clip=clip, on_error=on_error, records=records, reasons=reasons)


def record_columns(rows: list[dict[str, Any]], lines: NDArray[np.int64],
                  problems: list[Any], m: dict[str, str], name: str
                  ) -> tuple[Columns, NDArray[np.object_], dict[int, str]]:
    reasons: dict[int, str] = {}
    qv = [field_at(r, m["qid"]) for r in rows]
    vv = [field_at(r, m["vid"]) for r in rows] if "vid" in m else qv
    qid, vid = id_text(qv), id_text(vv)
    ids = id_reasons(value_ids(qv, "qid"), value_ids(vv, "vid") if "vid" in m else {})
    dur = (numbers([field_at(r, m["duration"]) for r in rows]) if "duration" in m
           else np.full(qid.size, np.nan))
    if "windows" in m:
        win, off, bad = stack_windows([field_at(r, m["windows"]) for r in rows])
        reasons.update({i: f"{m['windows']} must look like [[start, end(, score)], ...]"
                        for i in bad})
    elif "start" in m:
        win, off = pair_windows(numbers([field_at(r, m["start"]) for r in rows]),
                                numbers([field_at(r, m["end"]) for r in rows]))
    else:
        win, off = np.empty((0, 2)), np.zeros(qid.size + 1, dtype=np.int64)
    sal = (saliency_column([field_at(r, m["saliency"]) for r in rows]) if "saliency" in m
           else None)
    c = Columns(source=name, qid=qid, vid=vid, duration=dur, windows=win, offsets=off,
                line=lines, query=(object_column([field_at(r, m["query"]) for r in rows])
                                   if "query" in m else None), saliency=sal,
                problems=problems)
    return c, object_column(rows), reasons | ids  # a row without ids is rejected for that first
