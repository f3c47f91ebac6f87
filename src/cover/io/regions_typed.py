"""Typed decode of ``cover certify`` output lines for ``cover evaluate``: only the fields
evaluate reads, as columns (:mod:`cover.io.regions_batch` checks them over the batch).

Each line is decoded by msgspec into a small struct of what evaluate reads: ``qid``,
``vid``, ``query``, the predicted windows (kept as raw bytes and read as one column:
:func:`cover.io.jsonl_typed.windows_column`) and the ``cover`` block's fields (its region
kept as raw bytes too, read in one decode for the batch). Everything else, the echoed
saliency scores first of all, is skipped without building a Python object: the per-row
reader does not read a certified row's saliency either.

The fields read as any JSON value come out as the per-row reader's parse has them, with
one exception the bulk reader guards (:func:`cover.io.jsonl_typed.exact_values`): an
integer outside ``[-2**63, 2**64)``, which orjson (the per-row reader's first parser)
reads as a float; a batch with one where its value is kept (the calibrator fields, a
duration, a threshold, a query, a reason) is left to the per-row reader. So is any
batch msgspec refuses (a line that is not a JSON object, NaN, a number beyond float
range in a field read) or that is not UTF-8 text (msgspec does not look inside a
skipped string).
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

import msgspec
from msgspec import UNSET, Raw, UnsetType

from cover.io.jsonl_typed import utf8_lines

__all__ = ["Block", "empty_region", "typed_rows"]


class Block(msgspec.Struct, gc=False):
    """The fields of a ``cover`` block evaluate reads (absent: None, or UNSET where
    the per-row reader tells absent from null)."""

    status: Any = None
    region: Raw | UnsetType = UNSET
    refused: Any = UNSET
    duration: Any = None
    score: Any = None
    rule: Any = None
    alpha: Any = None
    k: Any = None
    n_calibration: Any = None
    calibration_sha256: Any = None
    relevance: Any = None
    threshold: Any = None
    in_calibration: Any = None
    reason: Any = UNSET


class _Row(msgspec.Struct, gc=False):
    """The fields of a certified row evaluate reads (``cover``: None when absent or null;
    a ``cover`` that is not an object is refused)."""

    qid: Any = None
    vid: Any = None
    query: Any = None
    pred_relevant_windows: Raw | UnsetType = UNSET
    cover: Block | None = None


_DECODE = msgspec.json.Decoder(_Row).decode
_FIELDS = attrgetter("qid", "vid", "query", "pred_relevant_windows", "cover")


def typed_rows(lines: list[bytes]) -> tuple[list[Any], ...] | None:
    """``(qids, vids, queries, raw windows, blocks)`` of the lines, or None when a line
    needs the per-row reader (not UTF-8, or refused by the structs)."""
    if not utf8_lines(lines):
        return None
    try:
        rows = list(map(_DECODE, lines))
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if not rows:
        return None
    return tuple(map(list, zip(*map(_FIELDS, rows), strict=True)))


def empty_region(block: Block) -> bool:
    """:func:`cover.row_status.empty_region_block` of a typed block: rejected, region
    ``[]`` (JSON blanks aside)."""
    return (block.status == "rejected" and block.region is not UNSET
            and bytes(block.region).translate(None, b" \t\r\n") == b"[]")
