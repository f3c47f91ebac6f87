"""A first look at a file for format detection: its head, and (lazily) the whole
JSON document or the first JSON line, each parsed at most once."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from cover.errors import InputError
from cover.io.document import loads
from cover.io.jsonl import read_input_bytes

#: How much of a file the sniffers see without parsing it.
HEAD_BYTES = 1 << 16


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
                row = loads(self.first_line())
            except ValueError:
                row = None
            if isinstance(row, dict) and not _is_document(row):
                return None
        try:
            doc = loads(self.data)
        except ValueError:
            return None
        if isinstance(doc, dict) and not _is_document(doc):
            return None  # a JSON-lines file with one row
        return doc

    def first_line(self) -> bytes:
        with self.path.open("rb") as fh:
            for line in fh:
                if line.strip():
                    return line
        return b""

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
            row = loads(self.first_line())
        except ValueError:
            return None
        return row if isinstance(row, dict) else None

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


def _is_document(doc: dict[str, Any]) -> bool:
    """A JSON object that is a whole dataset (id -> entry), not a one-row JSON-lines file."""
    return bool(doc) and not ({"qid", "doc_id"} & set(doc))


def peek(path: str | Path) -> Peek:
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{path}: is a folder; give a file")
    if not p.is_file():
        raise InputError(f"{path}: no such file")
    with p.open("rb") as fh:
        head = fh.read(HEAD_BYTES)
    if head[:2] == b"\x1f\x8b":  # gzip, whatever the name: sniff the text inside
        head = read_input_bytes(p)[:HEAD_BYTES]
    if not head.strip():
        raise InputError(f"{path}: the file is empty")
    return Peek(p, head)
