"""A first look at a file for format detection: its head, and (lazily) the whole
JSON document or the first JSON line, each parsed at most once."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from cover.errors import InputError
from cover.io.document import loads
from cover.io.jsonl import read_input_bytes
from cover.io.opener import open_input

#: How much of a file the sniffers see without parsing it.
HEAD_BYTES = 1 << 16
#: Lines that cannot be rows (not starting with ``{``) format detection looks past.
LOOK_PAST = 100


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
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{path}: damaged or truncated gzip file ({exc})") from None
