"""Query-id lists: one qid per line (what ``cover split`` writes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.errors import InputError


def write_qids(path: str | Path, qids: ArrayLike) -> None:
    Path(path).write_text("".join(f"{q}\n" for q in np.asarray(qids).astype(str)),
                          encoding="utf-8")


def read_qids(path: str | Path) -> NDArray[np.str_]:
    """Non-blank lines, stripped; duplicates are an error naming the line."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{path}: no such qid list")
    lines = [(i, ln.strip()) for i, ln in enumerate(p.read_text().splitlines(), start=1)]
    lines = [(i, q) for i, q in lines if q]
    if not lines:
        raise InputError(f"{path}: the qid list is empty")
    q = np.array([x for _, x in lines], dtype=str)
    uniq, counts = np.unique(q, return_counts=True)
    if (counts > 1).any():
        dup = uniq[counts > 1][0]
        where = [i for i, x in lines if x == dup]
        raise InputError(f"{path}:{where[1]}: duplicate qid {dup} (first on line {where[0]})")
    return q
