"""Query-id lists: one qid per line (what ``cover split`` writes)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.data.rules import MAX_ID_CHARS, too_long_id
from cover.errors import InputError, RowProblem
from cover.io.jsonl import read_input_bytes
from cover.io.output import write_text


def write_qids(path: str | Path, qids: ArrayLike, *,
               inputs: Iterable[str | Path | None] = ()) -> None:
    """One qid per line, written atomically (:func:`cover.io.output.write_text`)."""
    write_text(path, "".join(f"{q}\n" for q in np.asarray(qids).astype(str).tolist()),
               inputs=inputs)


def read_qid_lines(path: str | Path) -> tuple[NDArray[np.str_], NDArray[np.int64]]:
    """Non-blank lines, stripped, with their 1-based line numbers; a duplicate is an
    error naming both lines."""
    if not Path(path).exists():
        raise InputError(f"{path}: no such qid list")
    lines: list[tuple[int, str]] = []
    for i, raw in enumerate(read_input_bytes(path).split(b"\n"), start=1):
        try:
            text = raw.decode("utf-8").strip()
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}:{i}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at "
                             f"column {exc.start + 1}); save the file as UTF-8") from None
        if len(text) > MAX_ID_CHARS:  # no id: and one would widen every row of the list
            raise InputError(f"{path}:{i}: {too_long_id(len(text))}")
        if text:
            lines.append((i, text))
    if not lines:
        raise InputError(f"{path}: the qid list is empty")
    q = np.array([x for _, x in lines], dtype=str)
    at = np.array([i for i, _ in lines], dtype=np.int64)
    uniq, counts = np.unique(q, return_counts=True)
    if (counts > 1).any():
        dup = uniq[counts > 1][0]
        where = at[q == dup]
        raise InputError(f"{path}:{where[1]}: duplicate qid {dup} (first on line {where[0]})")
    return q, at


def read_qids(path: str | Path) -> NDArray[np.str_]:
    """The qids of a list (see :func:`read_qid_lines`)."""
    return read_qid_lines(path)[0]


def unknown_qids(path: str | Path, qids: NDArray[np.str_], lines: NDArray[np.int64],
                 known: NDArray[np.str_], where: str) -> list[RowProblem]:
    """A rejected problem for every listed qid that ``known`` lacks: a selection that
    silently matches nothing would drop queries unseen."""
    missing = ~np.isin(qids, known)
    return [RowProblem(str(path), int(ln), str(q), f"qid not found in {where}", "rejected")
            for q, ln in zip(qids[missing].tolist(), lines[missing].tolist(), strict=True)]
