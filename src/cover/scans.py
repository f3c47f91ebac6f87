"""Running totals along the first axis of a ``(ranks, columns)`` grid, one vector
operation over the columns a step, whatever the grid's shape: the ranks of many short
rows side by side (a step each), or of one very long row (cut into blocks laid side by
side, so its steps number about the square root of its ranks, not its ranks).

``accumulate_ranks(a, op, identity)`` is ``op.accumulate(a, axis=0)`` bit for bit for an
associative ``op`` (``np.add`` of integers, ``np.maximum``): each block's running
values are combined with the totals of the blocks before it, which only regroups the
operation.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["SCAN_COLUMNS", "accumulate_ranks"]


#: Columns a scan step should span: fewer, and a step's fixed cost is most of its time.
SCAN_COLUMNS = 512


def accumulate_ranks(a: NDArray[Any], op: np.ufunc, identity: float,
                     dtype: type | None = None, *, reverse: bool = False,
                     scratch: bool = False) -> NDArray[Any]:
    """``op.accumulate(a, axis=0)`` (``op`` associative, ``identity`` its neutral value;
    as ``dtype``; ``reverse``: from the last rank up) as steps along the first axis,
    each one vector operation over the second; C order. Many columns: in place when
    ``a`` is ``scratch`` (the caller's to overwrite). Few: the first axis is cut into
    blocks laid side by side (about ``len / blocks`` steps), then each block takes in
    the scan of those before it."""
    w, m = a.shape
    kind = np.dtype(dtype or a.dtype)
    blocks = max(min(w, -(-SCAN_COLUMNS // max(m, 1))), 1)
    if blocks == 1:
        x = a if scratch and a.dtype == kind and a.flags.c_contiguous else np.array(a, kind)
        if reverse:
            for k in range(w - 2, -1, -1):
                op(x[k + 1], x[k], out=x[k])
        else:
            for k in range(1, w):
                op(x[k - 1], x[k], out=x[k])
        return x
    steps = -(-w // blocks)
    x = np.empty((blocks * steps, m), dtype=kind)
    x[:w], x[w:] = (a[::-1] if reverse else a), identity
    # (blocks, steps, m) -> (steps, blocks * m): step k holds rank k of every block.
    x = np.ascontiguousarray(x.reshape(blocks, steps, m).transpose(1, 0, 2)).reshape(
        steps, blocks * m)
    for k in range(1, steps):
        op(x[k - 1], x[k], out=x[k])
    out = x.reshape(steps, blocks, m)
    # Each block after the first takes in the totals of those before it.
    op(out[:, 1:], op.accumulate(out[-1], axis=0)[:-1][None], out=out[:, 1:])
    ranks = out.transpose(1, 0, 2).reshape(blocks * steps, m)[:w]
    return np.ascontiguousarray(ranks[::-1] if reverse else ranks)
