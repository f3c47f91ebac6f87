"""Moment-DETR ground-truth jsonl whose ``qid`` is not a key: qid = 0-based line.

MomentDiff's Charades-STA-Len / -Mom test files (``test_len_80.jsonl``,
``test_mom_80.jsonl``) concatenate two parts and restart the ``qid`` count, so 197
(Len) / 259 (Mom) qids repeat with other queries. Read as ``moment-detr-gt`` the
repeats are rejected as duplicates (named and counted); read as
``moment-detr-gt-by-line`` every row is kept, its qid is its 0-based line index and
predictions join on (vid, query text) (:mod:`cover.io.content_join`). Split unit: the
``vid``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cover.io.columns import Columns, numbers, stack_windows, truth_table
from cover.io.jsonl import OnError, check_required, field_column, read_json_rows
from cover.io.qvhighlights import Loaded


def read_gt_by_line(path: str | Path, *, on_error: OnError = "raise") -> Loaded:
    """Ground truth with ``qid = line - 1``; the file's own qid stays in the records."""
    raw = read_json_rows(path)
    check_required(raw, ("vid", "duration", "relevant_windows"))
    windows, offsets, bad = stack_windows([r.get("relevant_windows") for r in raw.records], 2)
    c = Columns(source=raw.path, qid=(raw.lines - 1).astype(str),
                vid=np.array([str(r["vid"]) for r in raw.records], dtype=str),
                duration=numbers([r["duration"] for r in raw.records]),
                windows=windows, offsets=offsets, line=raw.lines,
                query=field_column(raw.records, "query"), problems=raw.problems)
    out = truth_table(c, on_error=on_error, reasons={
        i: "relevant_windows must look like [[start, end], ...]" for i in bad})
    return Loaded(out.table, out.problems, {**raw.rejected, **out.rejected})
