"""Answer files in, prediction rows and a per-file summary out (``cover parse-answers``).

An answer file is JSON lines / a JSON array of rows, or a JSON object keyed by query
id (as UAG-OOPS ships them). The answer text and the vid are found by the rules of
:mod:`cover.grounders.parse.fields` (the answer field detected per file from the
fields holding text; the vid from ``vid_field``, ``vid_pattern``, the row's ``vid`` or
the UAG-OOPS clip name, else the qid, counted); the duration is ``duration_field``
(default ``duration``) when present, else ``durations[vid]``. Rows left without a
duration are counted (``no_duration``): the out-of-range check and percentages /
relative positions need it, and are skipped for them.

Files are read as every COVER reader reads them (gzip recognised by its bytes, a UTF-8
byte-order mark skipped). No line is dropped without a word: a line that is not a JSON
object (malformed, not UTF-8, a list, a number) is a rejected line naming the file and
line, counted beside the answers (``lines`` = answers + rejected); a duration that is not
a finite number > 0 (``Infinity``, ``0``, ``"abc"``) is set aside for that row with a
noted problem (the row keeps its answer, parsed without that duration).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.errors import InputError, RowProblem
from cover.grounders.parse.batch import (
    ParsedColumns,
    StartOnly,
    answers_to_predictions,
)
from cover.grounders.parse.extract import BareRule
from cover.grounders.parse.fields import TEXT_FIELDS, answer_field, row_vids
from cover.io.jsonl import RawRows, json_text, number_value, read_input_bytes, read_json_rows
from cover.io.uag_oops import read_keyed_json

__all__ = ["TEXT_FIELDS", "ParsedFile", "parse_answer_file", "summary_lines", "warnings_of"]
#: Problems listed in a summary (all are counted).
_LISTED = 50


@dataclass(frozen=True)
class ParsedFile:
    """One answer file after parsing: its prediction rows (one per answer, in file
    order), the parse columns, the 1-based line of each row, and the problems of the
    file's lines (``rejected``: a line that is no answer row; ``noted``: a duration
    set aside). ``text_how`` / ``vid_rule`` say how the answer field and the vids
    were found; ``vid_missing`` / ``no_duration`` count the rows whose vid fell back
    to the qid and the rows with no duration."""

    path: str
    text_field: str
    rows: list[dict[str, Any]]
    parsed: ParsedColumns
    line: NDArray[np.int64]
    problems: list[RowProblem] = field(default_factory=list)
    text_how: str = ""
    vid_rule: str = ""
    vid_missing: int = 0
    no_duration: int = 0

    @property
    def rejected(self) -> list[RowProblem]:
        """The lines that are not answer rows (not JSON objects), in file order."""
        return [p for p in self.problems if p.action == "rejected"]

    def summary(self, k: int = 3, seed: int = 0) -> dict[str, Any]:
        """Counts and rates per class and up to ``k`` examples of each (qid, line,
        answer, reason, intervals)."""
        samples = {
            status: [{"qid": self.rows[i]["qid"], "line": int(self.line[i]),
                      "answer": self.rows[i]["answer"][:400],
                      "reason": str(self.parsed.reason[i]),
                      "intervals": self.parsed.intervals.row(i)} for i in rows]
            for status, rows in self.parsed.samples(k, seed).items()
        }
        return {"path": self.path, "text_field": self.text_field, "text_how": self.text_how,
                "vid_rule": self.vid_rule, "vid_missing": self.vid_missing,
                "no_duration": self.no_duration, "n": len(self.rows),
                "rejected": len(self.rejected), "lines": len(self.rows) + len(self.rejected),
                "counts": self.parsed.counts(), "rates": self.parsed.rates(),
                "samples": samples,
                "problems": [p.to_dict() for p in self.problems[:_LISTED]]}


def _rows_of(path: str | Path) -> tuple[RawRows, bool]:
    """The file's rows, and whether it is a JSON object keyed by qid (else JSON lines /
    a JSON array). A keyed entry keeps its own ``vid`` field when it has one."""
    data = read_input_bytes(path)
    if data.lstrip()[:1] == b"{":
        try:
            doc = json.loads(data)
        except ValueError:  # malformed or not UTF-8: JSON lines, read line by line
            doc = None
        if isinstance(doc, dict) and doc and all(isinstance(v, dict) for v in doc.values()) \
                and "qid" not in doc:
            raw = read_keyed_json(path)
            for rec in raw.records:  # read_keyed_json sets vid = the key: undo that
                own = doc[rec["qid"]].get("vid")
                if own is None:
                    del rec["vid"]
                else:
                    rec["vid"] = own
            return raw, True
    return read_json_rows(path), False


def parse_answer_file(
    path: str | Path,
    *,
    text_field: str | None = None,
    qid_field: str = "qid",
    vid_field: str | None = None,
    vid_pattern: str | None = None,
    duration_field: str = "duration",
    durations: dict[str, float] | None = None,
    durations_by_qid: bool = False,
    fps: float | None = None,
    prompt_examples: Sequence[str] = (),
    bare: BareRule = "seconds",
    start_only: StartOnly = "refuse",
) -> ParsedFile:
    """Parse every answer of ``path``. The answer field and the vid follow the rules of
    :mod:`cover.grounders.parse.fields`; the duration of a row is its
    ``duration_field``, else ``durations[vid]`` (``durations[qid]`` with
    ``durations_by_qid``: a ground truth's queries); a row with no qid is an error naming
    its line. A row whose answer is missing or not text is kept and parsed as an empty
    answer (a ``failure``, hence a refusal), never dropped."""
    raw, keyed = _rows_of(path)
    if not raw.records and raw.problems:
        raise InputError(f"{raw.path}: no line is an answer row (a JSON object); first: "
                         f"{raw.problems[0]}")
    recs = raw.records
    for rec, line in zip(recs, raw.lines.tolist(), strict=True):
        if rec.get(qid_field) is None:
            raise InputError(f"{raw.path}:{line}: missing field {qid_field!r} (the query id)")
    ids = (qid_field, "qid", "vid", vid_field or "vid", duration_field)
    chosen = answer_field(raw, text_field, skip=ids)
    field = chosen.name
    qid = np.array([str(r[qid_field]) for r in recs], dtype=str)
    vids = row_vids(raw, qid, vid_field=vid_field, vid_pattern=vid_pattern, keyed=keyed)
    vid = vids.vid
    texts = [r.get(field) if isinstance(r.get(field), str) else "" for r in recs]
    problems = list(raw.problems)
    T = np.empty(len(recs), dtype=np.float64)
    for i, (r, v, q, line) in enumerate(zip(recs, vid, qid, raw.lines.tolist(), strict=True)):
        given = r.get(duration_field)
        T[i] = _duration(given)
        if given is not None and math.isnan(T[i]):
            problems.append(RowProblem(raw.path, line, str(q), f"{duration_field} "
                                       f"{json_text(given)} is not a finite number > 0; "
                                       "set aside", "noted"))
        if math.isnan(T[i]):
            fallback = (durations or {}).get(str(q if durations_by_qid else v))
            T[i] = math.nan if fallback is None else float(fallback)
    problems.sort(key=lambda p: p.line)
    rows, parsed = answers_to_predictions(
        qid, texts, vid=vid, durations=T, fps=fps, prompt_examples=prompt_examples,
        bare=bare, start_only=start_only)
    return ParsedFile(str(path), field, rows, parsed, raw.lines, problems,
                      text_how=chosen.how, vid_rule=vids.rule,
                      vid_missing=int(vids.missing.sum()),
                      no_duration=int(np.count_nonzero(np.isnan(T))))


def _duration(value: Any) -> float:
    """``value`` as a duration in seconds (a number or numeric text), NaN unless it is
    a finite number > 0."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return math.nan
    x = number_value(value)
    return x if math.isfinite(x) and x > 0 else math.nan


def warnings_of(summary: dict[str, Any], *, duration_field: str = "duration") -> list[str]:
    """Warnings for people about one file's :meth:`ParsedFile.summary`: rows whose vid
    fell back to the qid, rows with no duration (each with its count)."""
    out: list[str] = []
    n, path = summary["n"], summary["path"]
    if summary["vid_missing"]:
        out.append(f"cover: warning: {summary['vid_missing']} of {n} answer(s) in {path} "
                   "have no vid (rule: " + summary["vid_rule"] + "); their vid is set to the "
                   "qid, and the ground truth's join will reject them if its vid differs: "
                   "pass --vid-field NAME or --vid-pattern REGEX")
    if summary["no_duration"]:
        out.append(f"cover: warning: {summary['no_duration']} of {n} answer(s) in {path} "
                   f"have no duration (field {duration_field!r}, or --videos): the "
                   "out-of-range check was skipped for them, and percentages or relative "
                   "positions in them cannot be read; pass --duration-field NAME or "
                   "--videos FILE")
    return out


def summary_lines(summary: dict[str, Any], *, samples: bool = True) -> list[str]:
    """Console lines for one file's :meth:`ParsedFile.summary`."""
    n = summary["n"]
    parts = [f"{s} {c} ({100 * summary['rates'][s]:.1f}%)"
             for s, c in summary["counts"].items() if c]
    out = [f"{summary['path']}: {n} answers ({summary['text_field']}): " + ", ".join(parts)]
    if summary["rejected"]:
        out[0] += (f"; and {summary['rejected']} line(s) rejected, not answer rows (of "
                   f"{summary['lines']} lines)")
    out.append(f"  answer text: field {summary['text_field']!r} ({summary['text_how']}); "
               f"vid: {summary['vid_rule']}")
    if samples:
        for status, items in summary["samples"].items():
            for it in items:
                text = " ".join(it["answer"].split())[:160]
                out.append(f"  [{status}] line {it['line']} qid={it['qid']}: {text!r} -> "
                           f"{it['reason']}")
    return out
