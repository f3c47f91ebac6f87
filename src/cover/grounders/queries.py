"""Query files a grounder answers: one row per (video, query) with the query's text.

Accepted: any JSON-lines file with ``qid``, ``vid`` and ``query`` (``duration`` when the
caller needs it) — the QVHighlights / Lighthouse ground-truth files qualify, their
labels then ride along as ``truth`` — and ActivityNet Captions' ``{vid: {duration,
timestamps, sentences}}`` JSON, whose query ids are ``<vid>_<sentence index>``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cover.data.table import GroundingTable
from cover.errors import InputError, RowProblem
from cover.intervals import Intervals
from cover.io.fields import bad_number, first_reason, float_field, reject_rows, table_of
from cover.io.jsonl import (
    OnError,
    check_required,
    check_unique_qids,
    raise_on_rejections,
    read_json_rows,
)
from cover.io.qvhighlights import Loaded, read_ground_truth
from cover.ragged import Ragged


def _is_activitynet(path: Path) -> bool:
    with path.open(encoding="utf-8") as fh:
        head = fh.read(4096).lstrip()
    if not head.startswith("{"):
        return False
    first = head.split("\n", 1)[0]
    try:
        json.loads(first)
    except json.JSONDecodeError:
        return True  # a multi-line object: not JSON lines
    return False


def read_activitynet_captions(path: str | Path) -> Loaded:
    """ActivityNet Captions JSON as a labelled table (qid ``<vid>_<i>``). A sentence whose
    timestamp has ``start > end`` or lies outside ``[0, T]`` is rejected with a reason."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from None
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected ActivityNet Captions JSON {{vid: {{duration, "
                         "timestamps, sentences}}}}")
    qid, vid, query, dur, s, e = [], [], [], [], [], []
    problems: list[RowProblem] = []
    for v, rec in doc.items():
        if not isinstance(rec, dict) or len(rec.get("timestamps", ())) != len(
                rec.get("sentences", ())) or not isinstance(rec.get("duration"), (int, float)):
            problems.append(RowProblem(str(path), 0, str(v), "video entry needs duration and "
                                       "as many timestamps as sentences", "rejected"))
            continue
        for i, (ts, text) in enumerate(zip(rec["timestamps"], rec["sentences"], strict=True)):
            qid.append(f"{v}_{i}")
            vid.append(str(v))
            query.append(str(text).strip())
            dur.append(float(rec["duration"]))
            s.append(float(ts[0]))
            e.append(float(ts[1]))
    t, s_a, e_a = np.array(dur), np.array(s), np.array(e)
    bad = ~(np.isfinite(s_a) & np.isfinite(e_a) & (s_a <= e_a) & (t > 0)) | (s_a >= t)
    for i in np.flatnonzero(bad).tolist():
        problems.append(RowProblem(str(path), 0, qid[i], f"timestamp [{s[i]}, {e[i]}] is not a "
                                   f"window inside [0, {dur[i]}]", "rejected"))
    keep = ~bad
    q = np.array(qid, dtype=str)[keep]
    table = GroundingTable(
        qid=q, vid=np.array(vid, dtype=str)[keep], duration=t[keep],
        pred_start=np.full(q.size, np.nan), pred_end=np.full(q.size, np.nan),
        relevance=Ragged(np.empty(0), np.zeros(q.size + 1, dtype=np.int64)),
        truth=Intervals.single(s_a[keep], np.minimum(e_a[keep], t[keep])),
        source=str(path), query=np.array(query, dtype=object)[keep],
        line=np.zeros(q.size, dtype=np.int64),
    )
    return Loaded(table, problems, {})


def read_queries(path: str | Path, *, need_duration: bool = True,
                 on_error: OnError = "raise") -> Loaded:
    """Queries to answer: ActivityNet Captions JSON, a labelled jsonl (truth kept), or a
    jsonl with ``qid``, ``vid``, ``query`` (and ``duration`` when ``need_duration``)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: no such file")
    if _is_activitynet(p):
        return read_activitynet_captions(p)
    raw = read_json_rows(p)
    if raw.records and all("relevant_windows" in r for r in raw.records):
        loaded = read_ground_truth(p, on_error=on_error)
        query = loaded.table.query
        missing = [i for i in range(len(loaded.table)) if query is None or query[i] is None]
        if missing:
            raise InputError(f"{loaded.table.where(missing[0])}: missing field: query")
        return loaded
    check_required(raw, ("qid", "vid", "query") + (("duration",) if need_duration else ()))
    check_unique_qids(raw)
    duration, has = float_field(raw, "duration")
    reject_rows(raw, first_reason(len(raw.records), [
        (bad_number(duration, has, positive=True), "duration must be a finite number > 0")]))
    table = table_of(raw, duration=float_field(raw, "duration")[0])  # the rows kept
    raise_on_rejections(raw.problems, on_error, raw.path)
    return Loaded(table, raw.problems, raw.rejected)
