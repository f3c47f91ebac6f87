"""The parsed rows of one file (:class:`RawRows`) and the row checks shared by the
readers: ids, required fields, unique qids (the rules and their words are
:mod:`cover.data.rules`).

A check never drops a row silently: it rejects it through :func:`reject_rows`, which
records the line, the qid and the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.rules import duplicate_reason, id_problem, json_text, repeats, shown_id
from cover.errors import RowProblem


def id_records(qid: Any, vid: Any) -> list[dict[str, Any]]:
    """A record for each row that has none as read (a table, a table built in memory):
    its qid and vid, what certified output echoes of it."""
    return [{"qid": q, "vid": v}
            for q, v in zip(np.asarray(qid).tolist(), np.asarray(vid).tolist(), strict=True)]


#: A reader's set-aside rows: ``(line, qid)`` (:attr:`cover.errors.RowProblem.key`) ->
#: the row as read (a dict, or the raw text of a line that was not JSON).
RejectedRows = dict[tuple[int, str | None], Any]


@dataclass
class RawRows:
    """Parsed rows of one file, with their 1-based line numbers.

    ``rejected`` maps ``(line, qid)`` (:attr:`cover.errors.RowProblem.key`: the rows of
    a document may share a line) -> the original row (a dict, or the raw text when the
    line was not valid JSON) of every row that was rejected, so writers can echo
    every input row back with its fate.
    """

    path: str
    records: list[dict[str, Any]]
    lines: NDArray[np.int64]
    problems: list[RowProblem] = field(default_factory=list)
    rejected: RejectedRows = field(default_factory=dict)

    def set_aside(self, problem: RowProblem, record: Any) -> None:
        """Reject a row: its problem, and its record under the problem's key."""
        self.problems.append(problem)
        self.rejected[problem.key] = record


def _qid_text(qid: Any) -> str | None:
    """A qid as messages show it: an id as written, anything else as JSON text."""
    if qid is None:
        return None
    if isinstance(qid, str):
        try:
            qid.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate cannot be printed: shown escaped
            return json_text(qid)
        return shown_id(qid)
    if isinstance(qid, int) and not isinstance(qid, bool):
        return str(qid)
    return json_text(qid)


def reject_rows(raw: RawRows, reasons: dict[int, str]) -> NDArray[np.bool_]:
    """Reject the rows ``reasons`` names (row index -> why), keeping the others in order;
    returns the keep mask over the rows before.
    With :func:`cover.io.fields.first_reason`:
    ``keep = reject_rows(raw, first_reason(checks))``."""
    keep = np.ones(len(raw.records), dtype=bool)
    if not reasons:
        return keep
    keep[list(reasons)] = False
    for i, why in sorted(reasons.items()):
        rec = raw.records[i]
        qid = rec.get("qid") if isinstance(rec, dict) else None
        line = int(raw.lines[i])
        raw.set_aside(RowProblem(raw.path, line, _qid_text(qid), why, "rejected"), rec)
    idx = np.flatnonzero(keep)
    raw.records = [raw.records[i] for i in idx.tolist()]
    raw.lines = raw.lines[idx]
    return keep


def check_required(raw: RawRows, fields: tuple[str, ...]) -> None:
    """Reject rows that lack any of ``fields`` (or hold null there)."""
    reasons: dict[int, str] = {}
    for i, rec in enumerate(raw.records):
        missing = [f for f in fields if rec.get(f) is None]
        if missing:
            reasons[i] = "missing field(s): " + ", ".join(missing)
    reject_rows(raw, reasons)


def check_ids(raw: RawRows, keys: tuple[str, ...] = ("qid", "vid")) -> None:
    """Reject rows whose ``keys`` hold something other than an id (:func:`id_problem`);
    absent keys are left to :func:`check_required`."""
    reasons: dict[int, str] = {}
    for i, rec in enumerate(raw.records):
        for key in keys:
            v = rec.get(key)
            why = None if v is None else id_problem(v, key)
            if why is not None:
                reasons[i] = why
                break
    reject_rows(raw, reasons)


def check_unique_qids(raw: RawRows) -> NDArray[np.str_]:
    """Reject every repeat of a qid after its first occurrence, naming the first line;
    returns the qids (as text) of the rows kept, in order."""
    q = np.array([str(r["qid"]) for r in raw.records], dtype=str)
    rows, first = repeats(q)
    keep = reject_rows(raw, {i: duplicate_reason(int(raw.lines[f]))
                             for i, f in zip(rows.tolist(), first.tolist(), strict=True)})
    return q[keep]
