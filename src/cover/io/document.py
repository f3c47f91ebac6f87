"""One whole JSON document (a dict or a list), parsed fast, with line numbers on demand.

Dataset annotation files (ActivityNet Captions, TACoS, Charades-CD, Charades-RF,
TimeChat predictions) are one JSON document, not JSON lines. They are parsed with
orjson (:data:`cover.io.jsonl.json_loads`); a syntax error names file, line and column.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.errors import InputError
from cover.io.jsonl import json_loads, read_input_bytes


def read_bytes(path: str | Path) -> bytes:
    data = read_input_bytes(path)  # gunzipped when gzip
    if not data.strip():
        raise InputError(f"{path}: the file is empty")
    return data


def load_document(path: str | Path, data: bytes | None = None) -> Any:
    """The parsed document; a syntax error is an :class:`InputError` at file:line:col."""
    raw = read_bytes(path) if data is None else data
    try:
        return json_loads(raw)
    except json.JSONDecodeError as exc:
        line, col = _line_col(raw, exc.pos)
        raise InputError(f"{path}:{line}: malformed JSON ({exc.msg.split(':')[0]} at column "
                         f"{col})") from None


def load_object(path: str | Path, doc: Any, expected: str) -> tuple[bytes, dict[str, Any]]:
    """The file's bytes and its top-level JSON object (``doc`` when the caller parsed it
    already, e.g. for format detection); any other top-level value is an
    :class:`InputError` saying what was ``expected``."""
    data = read_bytes(path)
    if doc is None:
        doc = load_document(path, data)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected {expected}, got {type(doc).__name__}")
    return data, doc


def _line_col(data: bytes, pos: int) -> tuple[int, int]:
    pos = max(0, min(pos, len(data)))
    line = data.count(b"\n", 0, pos) + 1
    col = pos - (data.rfind(b"\n", 0, pos) + 1) + 1
    return line, col


def key_lines(data: bytes, keys: list[str]) -> NDArray[np.int64]:
    """1-based line on which each string in ``keys`` (JSON-encoded) first appears,
    searched in document order (the parser keeps file order), so a message can point
    into a pretty-printed file; 1 for a file on one line."""
    nl = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == ord("\n"))
    pos = np.zeros(len(keys), dtype=np.int64)
    at = 0
    for i, k in enumerate(keys):
        hit = data.find(json.dumps(k, ensure_ascii=False).encode(), at)
        if hit >= 0:
            pos[i], at = hit, hit + 1
        else:
            pos[i] = at
    return np.searchsorted(nl, pos, side="right").astype(np.int64) + 1
