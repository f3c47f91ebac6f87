"""Query-id lists: one qid per line (what ``cover split`` writes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.errors import InputError, RowProblem


def write_qids(path: str | Path, qids: ArrayLike) -> None:
    Path(path).write_text("".join(f"{q}\n" for q in np.asarray(qids).astype(str)),
                          encoding="utf-8")


def read_qid_lines(path: str | Path) -> tuple[NDArray[np.str_], NDArray[np.int64]]:
    """Non-blank lines, stripped, with their 1-based line numbers; a duplicate is an
    error naming both lines."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{path}: no such qid list")
    lines = [(i, ln.strip()) for i, ln in enumerate(p.read_text().splitlines(), start=1)]
    lines = [(i, q) for i, q in lines if q]
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
