"""Query ids seen so far across the batches of a streamed file (the duplicate check).

A hash set: each batch costs O(batch), where re-sorting everything seen (``np.union1d``
per batch) costs O(rows seen) per batch, quadratic over a file (65 s instead of 0.4 s
for 1e6 qids in batches of 16,384).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray


class SeenIds:
    """Ids met in earlier batches; :meth:`add` returns which of a batch's ids repeat one."""

    def __init__(self) -> None:
        self._ids: set[str] = set()

    def add(self, qids: NDArray[np.str_]) -> NDArray[np.bool_]:
        """``dup[i]``: ``qids[i]`` was in an earlier batch (then all of ``qids`` are added)."""
        batch = qids.tolist()
        dup = np.fromiter((q in self._ids for q in batch), dtype=bool, count=len(batch))
        self._ids.update(batch)
        return dup

    def __len__(self) -> int:
        return len(self._ids)

    def array(self) -> NDArray[np.str_]:
        """Every id seen, sorted."""
        return np.sort(np.array(list(self._ids), dtype=str))


class SeenLines:
    """Ids met in earlier batches with the line each was first met on, for messages
    that name it (a dict: ~40 bytes per id more than :class:`SeenIds`)."""

    def __init__(self) -> None:
        self._first: dict[str, int] = {}

    def add(self, qids: NDArray[np.str_], lines: NDArray[np.int64]
            ) -> tuple[NDArray[np.bool_], list[int | None]]:
        """``(dup, first line)``: whether ``qids[i]`` was in an earlier batch and the line
        it was first seen on (None where new); then the new ids are added."""
        batch = qids.tolist()
        got = [self._first.get(q) for q in batch]
        dup = np.fromiter((g is not None for g in got), dtype=bool, count=len(batch))
        for q, line in zip(batch, lines.tolist(), strict=True):
            self._first.setdefault(q, int(line))
        return dup, got

    def any_of(self, qids: list[str]) -> bool:
        """Whether any of ``qids`` was met already (nothing is added)."""
        return any(map(self._first.__contains__, qids))

    def __len__(self) -> int:
        return len(self._first)
