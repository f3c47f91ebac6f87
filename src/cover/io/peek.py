"""A first look at a file for format detection: its head, and (lazily) the whole
JSON document or the first JSON line, each parsed at most once."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from cover.errors import InputError
from cover.io.jsonl import json_loads, read_input_bytes
from cover.io.opener import (
    GZIP_ERRORS,
    damaged_gzip,
    kind_suffix,
    open_input,
    parquet_file,
    suffix_kind,
)

#: How much of a file the sniffers see without parsing it.
HEAD_BYTES = 1 << 16
#: Lines that cannot be rows (not starting with ``{``) format detection looks past.
LOOK_PAST = 100
_TIME_WORD = re.compile(r"\d|\b(?:sec(?:ond)?s?|min(?:ute)?s?|start|begin|end|time|"
                        r"frame|percent)", re.IGNORECASE)
_PATH = re.compile(r"^\S*[/\\]\S*$|\.(?:mp4|mkv|avi|webm|mov)$", re.IGNORECASE)
#: Fields that hold ids or the query, never a grounder's answer.
_NOT_ANSWERS = frozenset({"qid", "vid", "query", "description", "caption", "sentence"})
#: The usual names of a video-LLM's answer field, most usual first.
TEXT_FIELDS: tuple[str, ...] = ("answer", "response", "output", "prediction", "pred", "text")


def free_text(value: Any) -> bool:
    """Whether ``value`` is free text: a string of two or more words, not a file path."""
    return isinstance(value, str) and len(value.split()) >= 2 and not _PATH.search(
        value.strip())


def timed_text(value: Any) -> bool:
    """Whether ``value`` is free text with a digit or a time word ("second", "start",
    ...): what a grounder's answer usually is."""
    return free_text(value) and bool(_TIME_WORD.search(value))


def answer_name_rank(name: str) -> int:
    """How usual ``name`` is for an answer field: :data:`TEXT_FIELDS` in order, then
    ``*_pred`` / ``*_generation``, then any other name."""
    if name in TEXT_FIELDS:
        return TEXT_FIELDS.index(name)
    return len(TEXT_FIELDS) + (0 if name.endswith(("_pred", "_generation")) else 1)


@dataclass
class Peek:
    """A file seen by the sniffers: its head, and (lazily) the parsed document or
    first row. ``doc`` is set when the whole file is one JSON value."""

    path: Path
    head: bytes
    _parsed: list[Any] = field(default_factory=list)

    @cached_property
    def data(self) -> bytes:
        return read_input_bytes(self.path)

    @cached_property
    def doc(self) -> Any:
        """The whole file as one JSON value, or None (JSON lines, text, invalid)."""
        head = self.head.lstrip()
        if head[:1] not in (b"{", b"["):
            return None
        _, nl, rest = head.partition(b"\n")
        if rest.lstrip()[:1] == b"{" or (not nl and len(self.head) == HEAD_BYTES):
            try:  # JSON lines (first line is one row): no need to parse the whole file
                row = json_loads(self.first_line())
            except ValueError:
                row = None
            if isinstance(row, dict) and not _is_document(row):
                return None
        try:
            doc = json_loads(self.data)
        except ValueError:
            return None
        if isinstance(doc, dict) and not _is_document(doc):
            return None  # a JSON-lines file with one row
        return doc

    def first_line(self) -> bytes:
        """The first line that may be a row (starts with ``{``), looking past blank
        lines and up to :data:`LOOK_PAST` lines that cannot be one (``null``, a string,
        a ``# comment``: each is that line's own problem for the reader, not the file's
        format); else the first non-blank line."""
        first, passed = b"", 0
        with open_input(self.path) as fh:
            for line in fh:
                if not line.strip():
                    continue
                if line.lstrip()[:1] == b"{":
                    return line
                first = first or line
                passed += 1
                if passed > LOOK_PAST:
                    break
        return first

    @cached_property
    def first_row(self) -> dict[str, Any] | None:
        """The first row: of a JSON list, a "logs" list, or the first JSON line."""
        doc = self.doc
        if isinstance(doc, list):
            return doc[0] if doc and isinstance(doc[0], dict) else None
        if isinstance(doc, dict):
            logs = doc.get("logs")
            return logs[0] if isinstance(logs, list) and logs and isinstance(logs[0], dict) \
                else None
        try:  # the whole first line, however long
            row = json_loads(self.first_line())
        except ValueError:
            return None
        return row if isinstance(row, dict) else None

    def answer_field(self) -> str | None:
        """The field of the first row (or keyed entry) holding free text with times,
        when the row has a qid (or the file is keyed by one) and no windows: a
        video-LLM answer file, for ``cover parse-answers``. ``None`` otherwise."""
        row, doc = self.first_row, self.doc
        if row is None and isinstance(doc, dict) and doc:
            row = next(iter(doc.values()))  # keyed by qid
        elif row is None or "qid" not in row:
            return None
        if not isinstance(row, dict) or any("window" in k or k == "timestamp" for k in row):
            return None
        timed = [k for k, v in row.items() if k not in _NOT_ANSWERS and timed_text(v)]
        return min(timed, key=answer_name_rank) if timed else None

    def keys(self) -> str:
        """What the first row looks like, for messages."""
        doc = self.doc
        if isinstance(doc, dict) and self.first_row is None:
            k, v = next(iter(doc.items()))
            inner = f" -> keys {sorted(v)}" if isinstance(v, dict) else f" -> {type(v).__name__}"
            return f"a JSON object; first entry {k!r}{inner}"
        if self.first_row is not None:
            return f"first row keys {sorted(self.first_row)}"
        text = self.head.decode("utf-8", "replace").strip().splitlines()
        return f"first line {text[0][:80]!r}" if text else "an empty file"


def field_names(path: str | Path) -> list[str]:
    """The fields of a file's rows: a Parquet file's columns, a CSV/TSV file's header, or
    the first row's keys of JSON (none for a JSON document of another shape)."""
    kind = suffix_kind(path)
    if kind == "parquet":
        return list(parquet_file(path).schema_arrow.names)
    p = peek(path)
    if kind == "csv":  # the header as every CSV read names it
        from cover.io.csv_lines import header_names

        return header_names(p.head.split(b"\n", 1)[0].rstrip(b"\r"),
                            "\t" if kind_suffix(p.path) == ".tsv" else ",", str(path))
    return list(p.first_row) if p.first_row is not None else []


def _is_document(doc: dict[str, Any]) -> bool:
    """A JSON object that is a whole dataset (id -> entry), not a one-row JSON-lines file."""
    return bool(doc) and not ({"qid", "doc_id"} & set(doc))


def peek(path: str | Path) -> Peek:
    """The head of ``path`` (gunzipped, without a byte-order mark: :mod:`cover.io.opener`)."""
    with open_input(path) as fh:
        head = _read(fh, HEAD_BYTES, path)
    p = Path(path)
    if not head.strip():
        raise InputError(f"{path}: the file is empty")
    return Peek(p, head)


def _read(fh: Any, n: int, path: str | Path) -> bytes:
    """Up to ``n`` bytes; a damaged gzip stream is an :class:`InputError` naming the file."""
    try:
        return bytes(fh.read(n))
    except GZIP_ERRORS as exc:
        raise damaged_gzip(path, exc) from None
