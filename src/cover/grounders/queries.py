"""Query files a grounder answers: one row per (video, query) with the query's text.

Accepted: any ground-truth file COVER reads (QVHighlights / Lighthouse jsonl,
Charades-STA, ActivityNet Captions, TACoS, ...; ``cover formats`` lists them) — the
labels then ride along as ``truth`` — or a plain JSON-lines list of queries with ``qid``,
``vid`` and ``query`` (``duration`` when the caller needs it).
"""

from __future__ import annotations

from pathlib import Path

from cover.errors import InputError
from cover.io import formats
from cover.io.fields import bad_number, first_reason, float_field, reject_rows, table_of
from cover.io.jsonl import (
    OnError,
    check_required,
    check_unique_qids,
    raise_on_rejections,
    read_json_rows,
)
from cover.io.qvhighlights import Loaded


def _plain_query_list(path: Path) -> bool:
    """A JSON-lines file whose first row has a query but no windows."""
    try:
        first = formats.peek(path).first_row
    except (OSError, ValueError):
        return False
    return isinstance(first, dict) and "query" in first and "relevant_windows" not in first


def read_queries(path: str | Path, *, need_duration: bool = True,
                 durations: str | Path | None = None, on_error: OnError = "raise") -> Loaded:
    """Queries to answer (module docstring); every row must carry its query text.
    ``durations`` is passed to ground-truth readers that need it (Charades-STA)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: no such file")
    if not _plain_query_list(p):
        loaded = formats.read(p, "ground_truth", options=formats.Options(
            on_error=on_error, durations=durations)).loaded
        query = loaded.table.query
        missing = [i for i in range(len(loaded.table)) if query is None or query[i] is None]
        if missing:
            raise InputError(f"{loaded.table.where(missing[0])}: missing field: query")
        return loaded
    raw = read_json_rows(p)
    check_required(raw, ("qid", "vid", "query") + (("duration",) if need_duration else ()))
    check_unique_qids(raw)
    duration, has = float_field(raw, "duration")
    reject_rows(raw, first_reason([
        (bad_number(duration, has, positive=True), "duration must be a finite number > 0")]))
    table = table_of(raw, duration=float_field(raw, "duration")[0])  # the rows kept
    raise_on_rejections(raw.problems, on_error, raw.path)
    return Loaded(table, raw.problems, raw.rejected)
