"""Reading JSON-lines (or a JSON array) with line numbers kept for error messages."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from cover.errors import InputError, RowProblem, summarize
from cover.io.output import atomic_open

OnError = Literal["raise", "reject"]
_QID_HINT = re.compile(r'"qid"\s*:\s*("?)([^,"}\s]+)\1')


@dataclass
class RawRows:
    """Parsed rows of one file, with their 1-based line numbers.

    ``rejected`` maps line -> the original row (a dict, or the raw text when the
    line was not valid JSON) of every row that was rejected, so writers can echo
    every input row back with its fate.
    """

    path: str
    records: list[dict[str, Any]]
    lines: NDArray[np.int64]
    problems: list[RowProblem] = field(default_factory=list)
    rejected: dict[int, Any] = field(default_factory=dict)

    def reject(self, keep: NDArray[np.bool_], reasons: dict[int, str]) -> None:
        """Drop rows where ``keep`` is False, recording ``reasons[i]`` for row ``i``."""
        for i, why in sorted(reasons.items()):
            rec = self.records[i]
            qid = rec.get("qid") if isinstance(rec, dict) else None
            line = int(self.lines[i])
            self.problems.append(
                RowProblem(self.path, line, None if qid is None else str(qid), why, "rejected")
            )
            self.rejected[line] = rec
        idx = np.flatnonzero(keep)
        self.records = [self.records[i] for i in idx.tolist()]
        self.lines = self.lines[idx]


def read_json_rows(path: str | Path) -> RawRows:
    """Parse a JSON-lines file (one object per line) or a JSON array of objects.

    Blank lines are skipped. A line that is not a JSON object becomes a rejected
    row (its problem names the line), never a silent drop. An empty file is an error.
    """
    p = Path(path)
    name = str(path)
    if not p.exists():
        raise InputError(f"{name}: no such file")
    text = p.read_text(encoding="utf-8")
    if not text.strip():
        raise InputError(f"{name}: the file is empty (expected one JSON object per line)")
    if text.lstrip().startswith("["):
        array = _read_json_array(name, text)
        if array is not None:
            return array
    records: list[dict[str, Any]] = []
    lines: list[int] = []
    raw = RawRows(name, records, np.empty(0, dtype=np.int64))
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            m = _QID_HINT.search(line)
            raw.problems.append(
                RowProblem(name, lineno, m.group(2) if m else None,
                           f"malformed JSON ({exc.msg} at column {exc.colno})", "rejected")
            )
            raw.rejected[lineno] = line
            continue
        if not isinstance(obj, dict):
            raw.problems.append(
                RowProblem(name, lineno, None,
                           f"expected a JSON object, got {type(obj).__name__}", "rejected")
            )
            raw.rejected[lineno] = line
            continue
        records.append(obj)
        lines.append(lineno)
    raw.lines = np.asarray(lines, dtype=np.int64)
    return raw


def _read_json_array(name: str, text: str) -> RawRows | None:
    """A whole-file JSON array, each entry numbered by the line it starts on; ``None``
    when the text is not one array (then it is read as JSON lines)."""
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    entries: list[tuple[int, Any]] = []
    try:
        while True:
            while pos < len(text) and text[pos] in " \t\r\n,":
                pos += 1
            if pos >= len(text):
                return None
            if text[pos] == "]":
                break
            obj, end = decoder.raw_decode(text, pos)
            entries.append((text.count("\n", 0, pos) + 1, obj))
            pos = end
    except json.JSONDecodeError as exc:
        first = next(ln for ln in text.splitlines() if ln.strip())
        try:
            json.loads(first)
        except json.JSONDecodeError:
            raise InputError(f"{name}:{exc.lineno}: malformed JSON array ({exc.msg} at column "
                             f"{exc.colno})") from None
        return None  # JSON lines whose first line happens to be an array
    if text[pos + 1 :].strip():
        return None  # e.g. JSON lines whose first line happens to be an array
    raw = RawRows(name, [], np.empty(0, dtype=np.int64))
    lines: list[int] = []
    for line, obj in entries:
        if isinstance(obj, dict):
            raw.records.append(obj)
            lines.append(line)
        else:
            raw.problems.append(RowProblem(name, line, None, "entry is not a JSON object",
                                           "rejected"))
            raw.rejected[line] = obj
    raw.lines = np.asarray(lines, dtype=np.int64)
    return raw


def object_column(values: list[Any]) -> NDArray[np.object_]:
    """A 1-d object array holding ``values`` as they are (dicts stay dicts)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def field_column(records: list[dict[str, Any]], key: str) -> NDArray[np.object_]:
    """``rec.get(key)`` for every record, as an object array (None where absent)."""
    return object_column([rec.get(key) for rec in records])


def raise_on_rejections(problems: list[RowProblem], on_error: OnError, what: str) -> None:
    """Under ``on_error='raise'``, turn rejected rows into one clear :class:`InputError`."""
    rejected = [p for p in problems if p.action == "rejected"]
    if rejected and on_error == "raise":
        raise InputError(
            f"{len(rejected)} bad row(s) in {what}:\n{summarize(rejected)}\n"
            "Fix these rows, or pass --on-error reject (API: on_error='reject') to set them "
            "aside with their reasons and go on."
        )


def check_required(raw: RawRows, fields: tuple[str, ...]) -> None:
    """Reject rows that lack any of ``fields`` (or hold null there)."""
    reasons: dict[int, str] = {}
    for i, rec in enumerate(raw.records):
        missing = [f for f in fields if rec.get(f) is None]
        if missing:
            reasons[i] = "missing field(s): " + ", ".join(missing)
    if reasons:
        keep = np.ones(len(raw.records), dtype=bool)
        keep[list(reasons)] = False
        raw.reject(keep, reasons)


def check_unique_qids(raw: RawRows) -> None:
    """Reject every repeat of a qid after its first occurrence, naming the first line."""
    q = np.array([str(r["qid"]) for r in raw.records], dtype=str)
    if q.size == 0:
        return
    _, first_idx, inverse = np.unique(q, return_index=True, return_inverse=True)
    first = first_idx[inverse]
    dup = np.flatnonzero(first != np.arange(q.size))
    if dup.size:
        reasons = {
            int(i): f"duplicate qid (first seen on line {int(raw.lines[first[i]])})" for i in dup
        }
        keep = np.ones(q.size, dtype=bool)
        keep[dup] = False
        raw.reject(keep, reasons)


def write_jsonl(path: str | Path, rows: list[Any], *,
                inputs: Iterable[str | Path | None] = ()) -> None:
    """Write one JSON value per line, atomically (:mod:`cover.io.output`); ``allow_nan``
    is off: a non-finite float is a bug, never a half-written file."""
    with atomic_open(path, "w", inputs=inputs) as fh:
        for row in rows:
            fh.write(json.dumps(row, allow_nan=False))
            fh.write("\n")
