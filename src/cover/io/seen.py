"""Repeated query ids across the batches of a streamed file (the duplicate check).

* :class:`SeenIds`: the ids met so far with the line each was first met on, for files
  read once, batch by batch (JSON lines, CSV): O(batch log ids) a batch, where re-sorting
  everything seen per batch (``np.union1d``) would be quadratic over a file;
  :class:`SeenLines`: what the regions readers ask of such a check.
* :func:`repeated_rows`: for a column of ids at once (a Parquet file's qid column, read
  alone first; the ids of one CSV batch): one dictionary encoding of the whole column
  (Arrow's C++ hash table) marks every row that repeats an earlier one, exactly, in 5
  bytes per row.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from cover.io.narrow import merge_sorted, sorted_find


class SeenIds:
    """Ids met in earlier batches; :meth:`add` returns which of a batch's ids repeat one,
    :meth:`add_lines` also the line each repeated id was first met on.

    Held as sorted blocks of the ids themselves, exact (no hashing), in three kinds: an
    ASCII id of at most 8 characters as one 64-bit integer (its bytes; numbers sort and
    search far faster than text), a longer ASCII id as bytes (a byte a character), any
    other as numpy text; beside each block, the first line of each of its ids (4 bytes
    an id while lines fit in 32 bits); a Python set holds ~80 bytes an id (800 MB at 1e7
    lines). Blocks merge when one is no more than twice the size of the next, up to a
    cap (:func:`_push`: a few dozen blocks at most), so a batch costs O(batch log ids)."""

    def __init__(self) -> None:
        # per kind (short, ascii, text): sorted key blocks and their first lines
        self._blocks: tuple[list[tuple[NDArray[Any], NDArray[Any]]], ...] = ([], [], [])
        self._n = 0

    def add(self, qids: NDArray[np.str_]) -> NDArray[np.bool_]:
        """``dup[i]``: ``qids[i]`` was in an earlier batch (then all of ``qids`` are added)."""
        return self.add_lines(qids, None)[0]

    def add_lines(self, qids: NDArray[np.str_], lines: NDArray[np.int64] | None
                  ) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
        """``(dup, first)``: whether ``qids[i]`` was in an earlier batch and the line it
        was first met on there (0 where new, or where no ``lines`` were given for it);
        then every id of the batch is added with the line of its first row here."""
        q = np.asarray(qids, dtype=str).reshape(-1)
        dup = np.zeros(q.size, dtype=bool)
        first = np.zeros(q.size, dtype=np.int64)
        at = np.zeros(q.size, dtype=np.int64) if lines is None else np.asarray(lines, np.int64)
        for blocks, (rows, part) in zip(self._blocks, _kinds(q), strict=True):
            if part.size == 0:
                continue
            # sorted keys: each binary search starts where the last one ended (3x faster)
            uniq, where, inverse = np.unique(part, return_index=True, return_inverse=True)
            hit, line = _member(blocks, uniq)
            dup[rows] = hit[inverse]
            first[rows] = line[inverse]
            new = ~hit
            if new.any():
                self._n += int(new.sum())
                _push(blocks, uniq[new], at[rows][where[new]])
        return dup, first

    def any_of(self, qids: list[str] | NDArray[np.str_]) -> bool:
        """Whether any of ``qids`` was met already (nothing is added)."""
        q = np.asarray(qids, dtype=str).reshape(-1)
        return any(bool(_member(blocks, part)[0].any())
                   for blocks, (_, part) in zip(self._blocks, _kinds(q), strict=True)
                   if part.size and blocks)

    def __len__(self) -> int:
        return self._n

    def array(self) -> NDArray[np.str_]:
        """Every id seen, sorted."""
        short, ascii_, text = ([b for b, _ in kind] for kind in self._blocks)
        parts = ([b.view("S8").astype("U8") for b in short]
                 + [b.astype(f"U{b.dtype.itemsize}") for b in ascii_] + text)
        if not parts:
            return np.array([], dtype=str)
        whole = np.sort(np.concatenate(parts))
        return whole.astype(f"U{max(int(np.char.str_len(whole).max(initial=1)), 1)}")


def _kinds(q: NDArray[np.str_]) -> list[tuple[NDArray[np.bool_], NDArray[Any]]]:
    """``(rows, keys)`` of each kind of id in ``q``: ASCII ids of at most 8 characters as
    ``uint64`` (their bytes, zero-padded: ids never end in NUL, so equal ids and only
    they get equal keys), longer ASCII ids as bytes, the others as text; each part as
    narrow as its longest id."""
    width = q.dtype.itemsize // 4
    if width == 0:
        q, width = q.astype("U1"), 1
    codes = np.ascontiguousarray(q).view(np.uint32).reshape(q.size, width)
    is_ascii = np.asarray((codes < 128).all(axis=1), dtype=bool)
    used = codes != 0
    length = np.where(used.any(axis=1), width - np.argmax(used[:, ::-1], axis=1), 0)
    short, long_ = is_ascii & (length <= 8), is_ascii & (length > 8)
    packed = np.zeros((int(short.sum()), 8), dtype=np.uint8)
    head = codes[short, :8]
    packed[:, :head.shape[1]] = head
    low = _trimmed(codes[long_]).astype(np.uint8)
    high = _trimmed(codes[~is_ascii])
    return [(short, packed.view(np.uint64).reshape(-1)),
            (long_, np.ascontiguousarray(low).view(f"S{low.shape[1]}").reshape(-1)),
            (~is_ascii, np.ascontiguousarray(high).view(f"U{high.shape[1]}").reshape(-1))]


def _trimmed(codes: NDArray[np.uint32]) -> NDArray[np.uint32]:
    """``codes`` without the trailing columns that are NUL on every row (at least one
    column kept)."""
    used = np.flatnonzero(codes.any(axis=0))
    return codes[:, :max(int(used[-1]) + 1 if used.size else 0, 1)]


def _member(blocks: list[tuple[NDArray[Any], NDArray[Any]]], keys: NDArray[Any]
            ) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
    """Whether each of ``keys`` is in one of the sorted ``blocks`` (binary search), and
    its first line there (0 where not); an id is in one block at most."""
    hit = np.zeros(keys.size, dtype=bool)
    line = np.zeros(keys.size, dtype=np.int64)
    for b, lines in blocks:
        pos, found = sorted_find(b, keys)
        hit |= found
        line[found] = lines[pos[found]]
    return hit, line


#: Blocks grow by merging up to this many ids, or an eighth of all ids held if more: a
#: merge holds both blocks and their merge at once, so capping them bounds that peak
#: (about 24 bytes an id of the two merged) while the blocks stay few (a batch searches
#: each one).
_BLOCK_IDS = 1 << 22


def _push(blocks: list[tuple[NDArray[Any], NDArray[Any]]], new: NDArray[Any],
          lines: NDArray[np.int64]) -> None:
    """Append the sorted block ``new`` (with its ids' lines), merging the last two blocks
    while the older is at most twice the newer and both fit the cap (the larger of
    :data:`_BLOCK_IDS` and an eighth of all ids): block sizes then at least double
    towards the front, up to the cap. Lines are held in 4 bytes while they fit."""
    if lines.size and int(lines.max()) <= np.iinfo(np.uint32).max and int(lines.min()) >= 0:
        lines = lines.astype(np.uint32)
    blocks.append((new, lines))
    cap = max(_BLOCK_IDS, sum(b.size for b, _ in blocks) // 8)
    while (len(blocks) > 1 and blocks[-2][0].size <= 2 * blocks[-1][0].size
           and blocks[-2][0].size + blocks[-1][0].size <= cap):
        (b2, l2), (b1, l1) = blocks.pop(), blocks.pop()
        keys, firsts = merge_sorted(b1, b2, (l1, l2))
        blocks.append((keys, firsts))


class SeenLines(Protocol):
    """What the regions readers ask of a cross-batch duplicate check: :class:`SeenIds`,
    or :class:`cover.io.truth_index.TruthSeen` (keyed by ground-truth row)."""

    def add_lines(self, qids: NDArray[np.str_], lines: NDArray[np.int64]
                  ) -> tuple[NDArray[np.bool_], NDArray[np.int64]]: ...

    def any_of(self, qids: list[str]) -> bool: ...


def repeated_rows(ids: Any) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``(rows, first)``: the rows (0-based, increasing) whose id occurs on an earlier
    row, and the row of that first occurrence. ``ids`` is an Arrow array or chunked
    array (any type; nulls count as one id) or a numpy array. Integers: a stable sort;
    anything else: Arrow's dictionary encoding (its C++ hash table)."""
    import pyarrow as pa

    arr = ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else pa.array(ids)
    if pa.types.is_dictionary(arr.type):  # (pandas' categorical) its values, as written
        arr = arr.dictionary_decode()
    if pa.types.is_integer(arr.type) and arr.null_count == 0:
        keys = np.asarray(arr.to_numpy(zero_copy_only=False))
    else:
        keys = np.asarray(arr.dictionary_encode(null_encoding="encode").indices
                          .to_numpy(zero_copy_only=False))
    n = keys.size
    order = np.argsort(keys, kind="stable")  # equal ids stay in row order
    ranked = keys[order]
    later = np.zeros(n, dtype=bool)  # sorted position repeats the one before it
    np.equal(ranked[1:], ranked[:-1], out=later[1:])
    del ranked
    head = np.arange(n, dtype=np.int64)  # each sorted position's group start
    head[later] = 0
    np.maximum.accumulate(head, out=head)
    at = np.flatnonzero(later)
    rows, first = order[at], order[head[at]]
    by_row = np.argsort(rows)
    return rows[by_row].astype(np.int64), first[by_row].astype(np.int64)
