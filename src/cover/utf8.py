"""Text columns as UTF-8 bytes: a quarter of numpy's text (4 bytes a character).

UTF-8 byte order is code-point order, so an array sorts, searches and groups the same
as bytes or as text: columns held whole (ids, units) can be kept as bytes and compared
with text converted a batch at a time. :func:`encodes_utf8` tells the text readers
whether a line read with ``surrogateescape`` was UTF-8.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray


def as_bytes(text: NDArray[Any]) -> NDArray[np.bytes_]:
    """Text as UTF-8 bytes (ASCII at numpy speed). Byte order is code-point order, so
    sorting either sorts both alike."""
    try:
        raw = np.asarray(text).astype(np.bytes_)
    except UnicodeEncodeError:
        raw = np.char.encode(np.asarray(text, dtype=str), "utf-8")
    width = max(int(np.char.str_len(raw).max()) if raw.size else 1, 1)
    return raw if width >= raw.dtype.itemsize else raw.astype(f"S{width}")  # no padding


def as_text(raw: NDArray[np.bytes_]) -> NDArray[np.str_]:
    """The inverse of :func:`as_bytes`."""
    try:
        text = _ascii_text(raw)
        return raw.astype(np.str_) if text is None else text
    except UnicodeDecodeError:
        return np.char.decode(raw, "utf-8")


def _ascii_text(raw: NDArray[Any]) -> NDArray[np.str_] | None:
    """Bytes as text by widening each byte to a code point, when every byte is ASCII
    (< 128); None otherwise. numpy's cast decodes each string alone: 10x slower."""
    if raw.dtype.kind != "S" or not raw.size or not raw.dtype.itemsize:
        return None
    codes = np.ascontiguousarray(raw).view(np.uint8).reshape(raw.size, -1)
    if int(codes.max()) >= 128:
        return None
    return codes.astype(np.uint32).view(f"U{codes.shape[1]}").reshape(raw.shape)


def encodes_utf8(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8: False when it holds a lone surrogate, which is
    what a byte that was not UTF-8 becomes when read with ``errors="surrogateescape"``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
