"""A whole Moment-DETR prediction file read as the streams read it: a batch of lines at
a time, decoded typed and checked column by column
(:func:`cover.io.jsonl_batch.decode_batch`), the batch tables joined as they are read
(:class:`TableJoin`), not held whole as the per-row reader holds the file's bytes. It
gives the per-row reader's table, or None where that reader must read the file
(:func:`bulk_predictions`; why: :mod:`cover.io.jsonl_batch`).
"""

from __future__ import annotations

import zlib
from array import array
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable, raw_ids
from cover.errors import InputError
from cover.io.jsonl import gc_paused
from cover.io.jsonl_batch import decode_batch
from cover.io.lines import line_chunks
from cover.io.prediction_rows import Loaded
from cover.io.seen import SeenIds
from cover.ragged import Ragged, offsets_from_lengths

#: Lines decoded at a time: the streams' batch (a few dozen MB of rows at 75 clips).
BATCH_LINES = 16_384

#: The columns a decoded batch has (:func:`cover.io.jsonl_batch.decode_batch`).
_ARRAYS = ("qid", "vid", "duration", "pred_start", "pred_end", "line", "query", "records")
_RAGGED = ("relevance", "pred_windows")
_STDS = ("start_std", "end_std")


def bulk_predictions(path: str | Path, *, clip: float = DEFAULT_CLIP_SECONDS,
                     batch_lines: int = BATCH_LINES, keep_records: bool = True
                     ) -> Loaded | None:
    """The table of :func:`cover.io.qvhighlights.read_predictions` read in batches of
    ``batch_lines`` lines, or None when a batch is not plainly clean, a qid repeats
    across batches, the file is empty or a JSON array, or it cannot be read (the
    per-row read then says why). ``keep_records=False``: the table's ``records`` is None
    (the lines are not parsed a second time into rows)."""
    name = str(path)
    join = TableJoin()
    seen = SeenIds()
    # the parsed rows of every batch stay alive (the table's records) and hold no cycles:
    # the collector would rescan them at every batch
    with gc_paused():
        try:
            for batch in line_chunks(path, batch_lines):
                if join.kind is None and batch[0][1].lstrip()[:1] == b"[":
                    return None  # a JSON array (or lines that are not objects)
                got = decode_batch(name, batch, clip=clip, keep_records=keep_records,
                                   keep_stds=True)
                if got is None:
                    return None
                if seen.add(got.loaded.table.qid).any():
                    return None  # the per-row reader names the repeat and its first line
                join.add(got.loaded.table)
                del got  # its columns are in the join now
        except (InputError, OSError, EOFError, zlib.error):
            return None  # a missing or damaged file: the per-row read's message
        if join.kind is None:
            return None  # an empty file: an error the per-row read words
        return Loaded(join.table(), [], {})


class TableJoin:
    """Decoded prediction batches of one file (same ``clip`` and ``source``, no truth)
    joined as they are read (:meth:`add`, then :meth:`table`). The ragged values, most
    of a table (75 clips a row), are appended to growing buffers (``array('d')``: a
    large buffer grows by remapping its pages, not copying them), so the joined table
    holds no second copy of them; the other columns are joined at the end.
    ``start_std``/``end_std`` are NaN in a part without them, and both None when no
    ``start_std`` is finite, as the per-row read makes them (a part's stds must then be
    kept: ``decode_batch(..., keep_stds=True)``)."""

    def __init__(self) -> None:
        self.columns: dict[str, list[NDArray[Any]]] = {k: [] for k in (*_ARRAYS, *_STDS)}
        self.values = {k: array("d") for k in _RAGGED}
        self.lengths: dict[str, list[NDArray[np.int64]]] = {k: [] for k in _RAGGED}
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.kind: tuple[float, str] | None = None

    def add(self, table: GroundingTable) -> None:
        """Append the rows of ``table`` (its columns are copied: it may be dropped)."""
        kind = (table.clip, table.source)
        if self.kind is None:
            self.kind = kind
        if kind != self.kind or table.truth is not None:
            raise ValueError("TableJoin joins prediction batches of one file")
        for k in _ARRAYS:
            col = raw_ids(table, k) if k in ("qid", "vid") else getattr(table, k)
            if col is not None:  # records: None when the batches dropped them
                self.columns[k].append(col)
        for k in _STDS:
            col = getattr(table, k)
            self.columns[k].append(np.full(len(table), np.nan) if col is None else col)
        for k in _RAGGED:
            r: Ragged = getattr(table, k)
            self.shapes.setdefault(k, r.values.shape[1:])
            part = np.ascontiguousarray(r.values[r.offsets[0]:r.offsets[-1]], dtype=np.float64)
            if part.size:  # one copy, into the buffer (an empty view cannot be cast)
                self.values[k].frombytes(part.reshape(-1).data.cast("B"))
            self.lengths[k].append(np.diff(r.offsets))

    def table(self) -> GroundingTable:
        """The joined table (the join is spent: its buffers are the table's)."""
        if self.kind is None:
            raise ValueError("TableJoin: no table was added")
        out: dict[str, Any] = {k: np.concatenate(parts) if parts else None
                               for k, parts in ((k, self.columns.pop(k)) for k in _ARRAYS)}
        for k in _RAGGED:
            values = np.frombuffer(self.values.pop(k), dtype=np.float64)
            out[k] = Ragged(values.reshape(-1, *self.shapes[k]),
                            offsets_from_lengths(np.concatenate(self.lengths.pop(k))))
        stds = [np.concatenate(self.columns.pop(k)) for k in _STDS]
        has_std = bool(np.isfinite(stds[0]).any())  # the per-row read's rule, every row
        out |= {k: c if has_std else None for k, c in zip(_STDS, stds, strict=True)}
        return GroundingTable(clip=self.kind[0], source=self.kind[1], **out)


def concat_tables(tables: list[GroundingTable]) -> GroundingTable:
    """The rows of ``tables`` one after the other (:class:`TableJoin`)."""
    join = TableJoin()
    for t in tables:
        join.add(t)
    return join.table()


__all__ = ["BATCH_LINES", "TableJoin", "bulk_predictions", "concat_tables"]
