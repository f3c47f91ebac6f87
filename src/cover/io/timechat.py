"""TimeChat / VTG-LLM style video-LLM outputs (the TimeChat repository's metric inputs).

* Grounding (``metrics/tvg``): one JSON object ``{"<qid>": {"timestamp": [[s, e]] or
  [], "query": ..., "vid": "<vid>.mp4"}}``. An empty ``timestamp`` (no time could be
  parsed from the answer) is a refusal, certified as the whole video.
* Highlights (``metrics/vhd``): a JSON list of ``{qid, query, vid: "v_<vid>.mp4",
  pred_saliency_scores: one float per 2 s clip}``, no windows: usable by the SLS score
  only (NORM/SEC see a refusal).

The video id is the ``vid`` without its file extension (and, for highlight files,
without the ``v_`` prefix TimeChat adds to QVHighlights ids), so it matches the
ground truth's ``vid``. TimeChat ids are the 0-based line index of Charades-STA's
text file, i.e. what :mod:`cover.io.charades_sta` calls qid.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cover.data.ids import text_id_column
from cover.data.table import DEFAULT_CLIP_SECONDS
from cover.errors import InputError
from cover.io import fields
from cover.io.columns import (
    Columns,
    id_reasons,
    numbers,
    prediction_table,
    stack_windows,
    truth_table,
)
from cover.io.document import key_lines, load_document, load_object, read_bytes
from cover.io.durations import lookup_durations, read_video_durations
from cover.io.jsonl import OnError, check_required, field_column, object_column, read_json_rows
from cover.io.qvhighlights import Loaded
from cover.ragged import Ragged

VIDEO_EXT = (".mp4", ".avi", ".mkv", ".webm", ".mov")


def strip_ext(vid: str) -> str:
    """``vid`` without a trailing video-file extension."""
    for ext in VIDEO_EXT:
        if vid.lower().endswith(ext):
            return vid[: -len(ext)]
    return vid


def sniff_tvg(doc: Any) -> bool:
    if not isinstance(doc, dict) or not doc:
        return False
    first = next(iter(doc.values()))
    return isinstance(first, dict) and "timestamp" in first and (
        "vid" in first or "query" in first)


def sniff_vhd(row: dict[str, Any]) -> bool:
    return ("pred_saliency_scores" in row and "pred_relevant_windows" not in row
            and strip_ext(str(row.get("vid", ""))) != str(row.get("vid", "")))


def read_timechat_tvg(path: str | Path, *, clip: float = DEFAULT_CLIP_SECONDS,
                      on_error: OnError = "raise", doc: Any = None) -> Loaded:
    """Read a TimeChat grounding prediction file (qid -> timestamp/query/vid)."""
    name = str(path)
    data, doc = load_object(path, doc, "a JSON object qid -> prediction")
    qids = list(doc)
    vals = [v if isinstance(v, dict) else {} for v in doc.values()]
    line = key_lines(data, qids)
    windows, offsets, bad = stack_windows([v.get("timestamp") for v in vals], 2)
    query = field_column(vals, "query")
    (qid, why_q), (vid, why_v) = text_id_column(qids), text_id_column(
        [strip_ext(str(v.get("vid", q))) for q, v in zip(qids, vals, strict=True)], "vid")
    c = Columns(source=name, qid=qid, vid=vid,
                duration=numbers([v.get("duration") for v in vals]),
                windows=windows, offsets=offsets, line=line, query=query,
                reasons=id_reasons(why_q, why_v))
    records = object_column([{"qid": q, **v} for q, v in zip(qids, vals, strict=True)])
    return prediction_table(c, clip=clip, on_error=on_error, records=records, reasons={
        i: "timestamp must look like [[start, end], ...] or []" for i in bad
        if i not in c.reasons})  # an id that is none is named first


def read_timechat_vhd(path: str | Path, *, clip: float = DEFAULT_CLIP_SECONDS,
                      on_error: OnError = "raise") -> Loaded:
    """Read a TimeChat highlight file: per-clip saliency, no windows."""
    raw = read_json_rows(path)
    check_required(raw, ("qid", "vid", "pred_saliency_scores"))
    sal, soff = fields.ragged_field(raw, "pred_saliency_scores", (), optional=False)
    n = len(raw.records)
    c = Columns(source=raw.path, qid=np.array([str(r["qid"]) for r in raw.records], dtype=str),
                vid=np.array([strip_ext(str(r["vid"])).removeprefix("v_")
                              for r in raw.records], dtype=str),
                duration=numbers([r.get("duration") for r in raw.records]),
                windows=np.empty((0, 2)), offsets=np.zeros(n + 1, dtype=np.int64),
                line=raw.lines, query=field_column(raw.records, "query"),
                saliency=Ragged(sal[:, 0].copy(), soff), problems=raw.problems)
    out = prediction_table(c, clip=clip, on_error=on_error,
                           records=object_column(raw.records))
    return Loaded(out.table, out.problems, {**raw.rejected, **out.rejected})


def sniff_timeit(doc: Any) -> bool:
    ann = doc.get("annotations") if isinstance(doc, dict) else None
    return isinstance(ann, list) and bool(ann) and isinstance(ann[0], dict) and (
        "timestamp" in ann[0] and "image_id" in ann[0])


def read_timeit_gt(path: str | Path, *, durations: str | Path | None,
                   on_error: OnError = "raise", doc: Any = None) -> Loaded:
    """Read TimeChat's TimeIT-style grounding truth (``example_gt_file.json``):
    ``{"annotations": [{image_id: "<vid>.mp4", caption, timestamp: [s, e], id}]}``.
    It has no durations: ``durations`` names a file of them (``charades.json`` for
    Charades-STA). ``id`` is the 0-based line of Charades-STA's text file."""
    name = str(path)
    if durations is None:
        raise InputError(f"{name}: TimeIT ground truth carries no video durations; pass a "
                         "durations file (--gt-durations charades.json, API: durations=)")
    data = read_bytes(path)
    if doc is None:
        doc = load_document(path, data)
    ann = doc.get("annotations") if isinstance(doc, dict) else None
    if not isinstance(ann, list):
        raise InputError(f"{name}: expected {{\"annotations\": [...]}}")
    rows = [a if isinstance(a, dict) else {} for a in ann]
    qid, why_q = text_id_column([str(a.get("id")) for a in rows])
    windows, offsets, bad = stack_windows([a.get("timestamp") for a in rows], 2)
    vid, why_v = text_id_column([strip_ext(str(a.get("image_id"))) for a in rows], "vid")
    t = lookup_durations(vid, *read_video_durations(durations))
    reasons = id_reasons(why_q, why_v)
    reasons |= {i: "timestamp must be [start, end]" for i in bad if i not in reasons}
    reasons |= {i: f"video {vid[i]} has no duration in {durations}"
                for i in np.flatnonzero(~np.isfinite(t)).tolist() if i not in reasons}
    c = Columns(source=name, qid=qid, vid=vid, duration=np.where(np.isfinite(t), t, 1.0),
                windows=windows, offsets=offsets, line=key_lines(data, ["image_id"] * len(rows))
                if data.count(b"\n") > 1 else np.ones(len(rows), dtype=np.int64),
                query=field_column(rows, "caption"))
    return truth_table(c, on_error=on_error, reasons=reasons)
