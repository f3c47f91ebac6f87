"""Row checks shared by the readers: ids, required fields, unique qids, and turning
rejected rows into one :class:`~cover.errors.InputError` under ``on_error='raise'``.

A check never drops a row silently: it rejects it through :meth:`RawRows.reject`, which
records the line, the qid and the reason.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from cover.data.rules import repeats
from cover.errors import InputError, RowProblem, summarize

if TYPE_CHECKING:
    from cover.io.jsonl import RawRows

#: What a reader does with a bad row: stop with an InputError, or set it aside.
OnError = Literal["raise", "reject"]


def json_kind(obj: Any) -> str:
    """The JSON name of a value's type, for messages (never a Python repr)."""
    if obj is None:
        return "null"
    if isinstance(obj, bool):
        return "true" if obj else "false"
    if isinstance(obj, (int, float)):
        return "a number"
    if isinstance(obj, str):
        return "a string"
    return "a list" if isinstance(obj, list) else "an object"


def _reject(raw: RawRows, reasons: dict[int, str]) -> None:
    """Reject the rows ``reasons`` names (row index -> why), keeping the others in order."""
    if reasons:
        keep = np.ones(len(raw.records), dtype=bool)
        keep[list(reasons)] = False
        raw.reject(keep, reasons)


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
    _reject(raw, reasons)


def id_problem(value: Any, key: str = "qid") -> str | None:
    """Why ``value`` cannot be an id (``qid``, ``vid``), or None: ids are integers or
    non-empty strings without surrounding spaces or lone surrogates. A float, even
    ``2579.0``, is refused because its text form differs from the integer's and joins
    would silently miss."""
    if isinstance(value, str):
        if not value:
            return f"{key} is an empty string"
        if value != value.strip():
            return f"{key} {json.dumps(value)} has leading or trailing spaces"
        if "\x00" in value:  # numpy text drops trailing NULs: "5\0" would join as "5"
            return f"{key} {json.dumps(value)} contains a NUL character"
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:  # JSON "\ud800": no character, no UTF-8
                return (f"{key} holds a lone surrogate \\u{ord(value[exc.start]):04x}, "
                        "which is not a character; write the character itself")
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return None
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 2**53:
            return (f"{key} {value!r} is written as a float; write it as {int(value)} "
                    f"(an integer) or \"{int(value)}\" (a string)")
        return (f"{key} must be an integer or a string, got the number "
                f"{json.dumps(value) if math.isfinite(value) else str(value)}")
    return f"{key} must be an integer or a string, got {json_kind(value)}"


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
    _reject(raw, reasons)


def check_unique_qids(raw: RawRows) -> None:
    """Reject every repeat of a qid after its first occurrence, naming the first line."""
    q = np.array([str(r["qid"]) for r in raw.records], dtype=str)
    rows, first = repeats(q)
    _reject(raw, {i: f"duplicate qid (first seen on line {int(raw.lines[f])})"
                  for i, f in zip(rows.tolist(), first.tolist(), strict=True)})
