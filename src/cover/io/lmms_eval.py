"""lmms-eval outputs of temporal-grounding tasks (e.g. ``temporal_grounding_charades``).

* Sample logs (``--log_samples``: ``samples_<task>.jsonl``, or an older ``<task>.json``
  holding ``{"logs": [...]}``), one row per document::

      {"doc_id": 0, "doc": {"video": "3MSZA.mp4", "caption": "person turn a light on.",
       "timestamp": [24.3, 30.4]}, "target": [24.3, 30.4], "arguments": [...],
       "resps": [["The event happens in 24.0 - 30.0 seconds."]],
       "filtered_resps": ["The event happens in 24.0 - 30.0 seconds."], "doc_hash": ...}

  qid = ``doc_id`` (the row of the task's dataset), vid = ``doc.video`` without its
  extension, query = ``doc.caption`` (or ``doc.query``/``doc.sentence``). Newer
  grounding tasks log ``doc.video_path`` (a path: vid = its file name without the
  extension) and the true window as ``doc.span``, often with ``doc.duration`` (used as
  the video length when it is a number); the true window always comes from ``--gt``.
* Submission files (the task's aggregation output): one JSON object
  ``{"<video>>>><caption>>>><[s, e]>": "<answer text>"}``; qid = the entry's index.

The answer is free text. The window is the first ``<number> - <number>`` (or
``<number> to <number>``) pair in it, seconds, as the task's own ``eval_tvg``
reads it first; an answer without one, or with start > end, is a refusal (whole
video), counted as a ``noted`` problem.
"""

from __future__ import annotations

import re
from pathlib import Path, PureWindowsPath
from typing import Any

import numpy as np

from cover.data.ids import text_id_column
from cover.data.table import DEFAULT_CLIP_SECONDS
from cover.errors import RowProblem
from cover.io.columns import Columns, id_reasons, numbers, prediction_table
from cover.io.document import key_lines, load_object
from cover.io.jsonl import OnError, RawRows, object_column, read_json_rows
from cover.io.qvhighlights import Loaded
from cover.io.timechat import strip_ext
from cover.ragged import offsets_from_lengths

SPAN = re.compile(r"(\d+(?:\.\d+)?)\s*(?:-|–|to)\s*(\d+(?:\.\d+)?)")
SUBMISSION_SEP = ">>>"
UNPARSED = "no '<start> - <end>' time span in the answer: refusal (whole video)"


def first_span(text: Any) -> tuple[float, float] | None:
    """The first ``a - b`` / ``a to b`` number pair in ``text`` with ``a <= b``."""
    if not isinstance(text, str):
        return None
    m = SPAN.search(text)
    if m is None:
        return None
    s, e = float(m.group(1)), float(m.group(2))
    return (s, e) if s <= e else None


def sniff_samples(row: dict[str, Any]) -> bool:
    return "doc_id" in row and isinstance(row.get("doc"), dict) and (
        "filtered_resps" in row or "resps" in row)


def sniff_submission(doc: Any) -> bool:
    if not isinstance(doc, dict) or not doc:
        return False
    k, v = next(iter(doc.items()))
    return isinstance(v, str) and k.count(SUBMISSION_SEP) == 2


def _answer(row: dict[str, Any]) -> Any:
    """The (filtered) response text: ``filtered_resps[0]``, else ``resps[0][0]``."""
    for key in ("filtered_resps", "resps"):
        v = row.get(key)
        while isinstance(v, list) and v:
            v = v[0]
        if isinstance(v, str):
            return v
    return None


def _video(doc: dict[str, Any]) -> str | None:
    """``doc.video`` without its extension, else the file name of ``doc.video_path``."""
    if doc.get("video") is not None:
        return strip_ext(str(doc["video"]))
    path = doc.get("video_path")
    return None if path is None else strip_ext(PureWindowsPath(str(path)).name)


def _columns(name: str, qids: list[str], vids: list[str], queries: list[Any],
             answers: list[Any], line: np.ndarray, problems: list[RowProblem],
             durations: list[Any] | None = None) -> Columns:
    spans = [first_span(a) for a in answers]
    has = np.array([s is not None for s in spans], dtype=bool)
    win = np.array([s for s in spans if s is not None], dtype=np.float64).reshape(-1, 2)
    problems += [RowProblem(name, int(line[i]), qids[i], UNPARSED, "noted")
                 for i in np.flatnonzero(~has).tolist()]
    query = object_column(queries)
    (qid, why_q), (vid, why_v) = text_id_column(qids), text_id_column(vids, "vid")
    return Columns(source=name, qid=qid, vid=vid,
                   duration=(np.full(len(qids), np.nan) if durations is None
                             else numbers(durations)),
                   windows=win, offsets=offsets_from_lengths(has), line=line,
                   query=query, problems=problems, reasons=id_reasons(why_q, why_v))


def read_lmms_eval_samples(path: str | Path, *, clip: float = DEFAULT_CLIP_SECONDS,
                           on_error: OnError = "raise") -> Loaded:
    """Read an lmms-eval sample log of a temporal-grounding task."""
    raw = read_json_rows(path)
    if len(raw.records) == 1 and isinstance(raw.records[0].get("logs"), list):
        logs = raw.records[0]["logs"]
        raw = RawRows(raw.path, [r for r in logs if isinstance(r, dict)],
                      np.ones(len(logs), dtype=np.int64))
    reasons: dict[int, str] = {}
    qids: list[str] = []
    vids: list[str] = []
    queries: list[Any] = []
    answers: list[Any] = []
    durations: list[Any] = []
    for i, r in enumerate(raw.records):
        doc = r.get("doc")
        d: dict[str, Any] = doc if isinstance(doc, dict) else {}
        video = _video(d)
        if r.get("doc_id") is None or video is None:
            reasons[i] = "missing field(s): doc_id, doc.video"
        qids.append(str(r.get("doc_id")))
        vids.append(str(video))
        queries.append(d.get("caption", d.get("query", d.get("sentence"))))
        answers.append(_answer(r))
        durations.append(d.get("duration"))
    c = _columns(raw.path, qids, vids, queries, answers, raw.lines, raw.problems, durations)
    records = object_column(raw.records)
    out = prediction_table(c, clip=clip, on_error=on_error, records=records, reasons=reasons)
    return Loaded(out.table, out.problems, {**raw.rejected, **out.rejected})


def read_lmms_eval_submission(path: str | Path, *, clip: float = DEFAULT_CLIP_SECONDS,
                              on_error: OnError = "raise", doc: Any = None) -> Loaded:
    """Read an lmms-eval temporal-grounding submission file (key = video>>>caption>>>gt)."""
    name = str(path)
    data, doc = load_object(path, doc, "a JSON object '<video>>>><caption>>>><gt>' -> text")
    keys = list(doc)
    parts = [k.split(SUBMISSION_SEP) for k in keys]
    reasons = {i: "key must be '<video>>>><caption>>>><[start, end]>'"
               for i, p in enumerate(parts) if len(p) != 3}
    vids = [strip_ext(p[0]) if len(p) == 3 else "" for p in parts]
    queries = [p[1] if len(p) == 3 else None for p in parts]
    c = _columns(name, [str(i) for i in range(len(keys))], vids, queries, list(doc.values()),
                 key_lines(data, keys), [])
    records = object_column([{"key": k, "answer": v} for k, v in doc.items()])
    return prediction_table(c, clip=clip, on_error=on_error, records=records, reasons=reasons)
