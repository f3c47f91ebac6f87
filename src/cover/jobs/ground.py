"""``cover ground``: ask a live video-LLM endpoint about every query, resumably.

Each finished query is appended to a log (``<output>.log``, JSON lines) and
``fsync``-ed before the next one is written, so an interrupted run loses at most the
requests in flight. A rerun with the same output reads the log, skips every query
that already has an answer, and asks the rest (failed requests included). The log's
first line records the model, frame count, frame size and prompt version; a rerun with
different settings is refused rather than mixing answers of two set-ups. A torn last
line (a crash mid-write) is skipped and its query asked again. When every query has
been tried, the prediction file is written in one piece (temporary file + rename) from
the log, in query order: every query is there, with the raw answer, its parse, and a
refusal (no window, the whole video) for answers that give no interval and for requests
that failed for good.
"""

from __future__ import annotations

import json
import math
import os
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from cover._progress import NullProgress, Progress
from cover.errors import InputError, RowProblem
from cover.grounders.endpoint import (
    PROMPT_EXAMPLE,
    PROMPT_VERSION,
    ChatClient,
    EndpointError,
    build_messages,
)
from cover.grounders.queries import read_queries
from cover.grounders.video import find_video, sample_frames
from cover.io.jsonl import OnError, write_jsonl

LOG_SCHEMA = "cover.ground.log"


@dataclass
class GroundSummary:
    """What a run did: queries, skipped from the log, asked, and the answer classes."""

    queries: int = 0
    from_log: int = 0
    asked: int = 0
    unanswered: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    problems: list[RowProblem] = field(default_factory=list)
    torn_log_lines: int = 0
    #: (qid, why) of every query asked in this run that got no answer.
    failed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def all_failed(self) -> bool:
        """Whether queries were asked and not one of them got an answer."""
        return self.asked > 0 and len(self.failed) == self.asked


def read_log(path: Path, header: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], int]:
    """Records by qid (the last one of a qid wins) and the number of unreadable lines."""
    if not path.exists():
        return {}, 0
    records: dict[str, dict[str, Any]] = {}
    torn = 0
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            torn += 1
            continue
        if i == 0:
            got = {k: rec.get(k) for k in header}
            if got != header:
                raise InputError(f"{path}: this log was written with {got}, not {header}; "
                                 "write to another output (or delete the log) to start over")
            continue
        if isinstance(rec, dict) and "qid" in rec:
            records[str(rec["qid"])] = rec
    return records, torn


def _open_log(path: Path, header: dict[str, Any]) -> IO[str]:
    fresh = not path.exists() or path.stat().st_size == 0
    fh = path.open("a", encoding="utf-8")
    if fresh:
        _append(fh, header)
    elif path.read_bytes()[-1:] != b"\n":
        fh.write("\n")  # a torn last line stays a line of its own
    return fh


def _append(fh: IO[str], rec: dict[str, Any]) -> None:
    fh.write(json.dumps(rec, allow_nan=False) + "\n")
    fh.flush()
    os.fsync(fh.fileno())


def _ask(client: ChatClient, qid: str, vid: str, query: str, video: Path,
         duration: float, n_frames: int, max_side: int) -> dict[str, Any]:
    rec: dict[str, Any] = {"qid": qid, "vid": vid}
    try:
        sample = sample_frames(video, n_frames, max_side=max_side)
    except InputError as exc:
        return rec | {"answer": None, "error": f"video: {exc}", "attempts": 0}
    rec["duration"] = duration if math.isfinite(duration) else sample.duration
    rec["frame_times"] = [round(f.time, 3) for f in sample.frames]
    try:
        reply = client.complete(build_messages(query, sample))
    except EndpointError as exc:
        return rec | {"answer": None, "error": str(exc), "attempts": exc.attempts}
    return rec | {"answer": reply.text, "error": None, "attempts": reply.attempts,
                  "seconds": round(reply.seconds, 3)}


def run_ground(queries: str | Path, videos: str | Path, output: str | Path,
               client: ChatClient, *, n_frames: int = 16, max_side: int = 448,
               concurrency: int = 4, log: str | Path | None = None,
               on_error: OnError = "raise", progress: bool = True) -> GroundSummary:
    """Ask ``client`` about every query of ``queries`` (videos found in ``videos`` by
    vid), resuming from the log, and write the prediction file ``output``."""
    from cover.grounders.parse import answers_to_predictions

    for name, value in (("concurrency", concurrency), ("n_frames", n_frames),
                        ("max_side", max_side)):
        if value < 1:
            raise ValueError(f"{name} must be >= 1, got {value}")
    loaded = read_queries(queries, need_duration=False, on_error=on_error)
    table = loaded.table
    summary = GroundSummary(queries=len(table), problems=list(loaded.problems))
    video_of: dict[int, Path] = {}
    unusable = 0
    for i, vid in enumerate(table.vid.tolist()):
        try:
            path = find_video(videos, str(vid))
        except InputError as exc:  # a vid naming a file outside the folder
            path, why = None, str(exc)
        else:
            why = f"no video {vid}.* in {videos}"
        if path is not None:
            video_of[i] = path
            continue
        unusable += 1
        summary.problems.append(RowProblem(table.source, int(table.line[i]) if table.line
                                           is not None else 0, str(table.qid[i]), why,
                                           "rejected"))
    if unusable and on_error == "raise":
        raise InputError(f"{unusable} quer(y/ies) have no usable video in {videos}, e.g. "
                         f"{summary.problems[-unusable]}")
    keep = list(video_of)
    log_path = Path(log) if log is not None else Path(f"{output}.log")
    header = {"log": LOG_SCHEMA, "model": client.model, "n_frames": n_frames,
              "max_side": max_side, "prompt_version": PROMPT_VERSION}
    records, summary.torn_log_lines = read_log(log_path, header)
    pending = [i for i in keep if records.get(str(table.qid[i]), {}).get("answer") is None]
    summary.from_log = len(keep) - len(pending)
    summary.asked = len(pending)
    query = table.query if table.query is not None else [None] * len(table)
    pool = ThreadPoolExecutor(max_workers=concurrency)
    try:
        with _open_log(log_path, header) as fh, \
                (Progress("asking the endpoint", len(pending)) if progress and pending
                 else NullProgress()) as bar:
            futures = [pool.submit(_ask, client, str(table.qid[i]), str(table.vid[i]),
                                   str(query[i] or ""), video_of[i],
                                   float(table.duration[i]), n_frames, max_side)
                       for i in pending]
            for fut in as_completed(futures):
                rec = fut.result()
                _append(fh, rec)
                if rec["answer"] is None:
                    summary.failed.append((rec["qid"], str(rec["error"])))
                records[rec["qid"]] = rec
                bar.advance()
    finally:
        # On an interrupt, queued queries are dropped at once (they stay unanswered in the
        # log, so a rerun asks them); only requests in flight are waited for.
        pool.shutdown(wait=True, cancel_futures=True)
    rows = _prediction_rows(table, keep, records, answers_to_predictions)
    for row in rows:
        status = row["answer_parse"]["status"]
        summary.statuses[status] = summary.statuses.get(status, 0) + 1
    summary.unanswered = sum(1 for r in rows if r["answer_parse"].get("unanswered"))
    write_jsonl(output, rows, inputs=[queries, log_path])
    return summary


def _prediction_rows(table: Any, keep: list[int], records: dict[str, dict[str, Any]],
                     to_predictions: Any) -> list[dict[str, Any]]:
    """Rows in query order: parsed answers, or a refusal naming the failed request."""
    recs = [records[str(table.qid[i])] for i in keep]
    answered = [k for k, r in enumerate(recs) if r.get("answer") is not None]
    parsed_rows, _ = to_predictions(
        [recs[k]["qid"] for k in answered], [recs[k]["answer"] for k in answered],
        vid=[recs[k]["vid"] for k in answered],
        durations=[recs[k]["duration"] for k in answered],
        prompt_examples=(PROMPT_EXAMPLE,))
    by_k = dict(zip(answered, parsed_rows, strict=True))
    rows: list[dict[str, Any]] = []
    for k, i in enumerate(keep):
        rec = recs[k]
        row = by_k.get(k)
        if row is None:
            row = {"qid": rec["qid"], "vid": rec["vid"]}
            if rec.get("duration") is not None:
                row["duration"] = rec["duration"]
            row |= {"pred_relevant_windows": [], "answer": None, "answer_parse": {
                "status": "failure", "reason": f"no answer: {rec.get('error')}",
                "notation": "", "unanswered": True}}
        src = table.records[i] if table.records is not None else None
        if isinstance(src, dict) and "qid" in src:
            row["qid"] = src["qid"]
        if table.query is not None and table.query[i] is not None:
            row["query"] = str(table.query[i])
        row["frame_times"] = rec.get("frame_times", [])
        row["attempts"] = rec.get("attempts", 0)
        rows.append(row)
    return rows
