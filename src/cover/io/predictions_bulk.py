"""A whole Moment-DETR prediction file read as the streams read it: a batch of lines at
a time, decoded typed and checked column by column (:func:`cover.io.jsonl_batch.decode_batch`),
the batch tables then joined (:func:`concat_tables`).

The per-row reader (:func:`cover.io.prediction_rows.predictions_from_rows` over
:func:`cover.io.jsonl.read_json_rows`) checks each row in Python, several times the cost
of the parse itself on files of millions of lines, and holds the file's bytes whole.
:func:`bulk_predictions` gives its table only when every batch is plainly clean and no
qid repeats across batches; on anything else it gives None and the caller reads the
file row by row, so every message and rejection is the per-row reader's.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable, raw_ids
from cover.errors import InputError
from cover.io.jsonl import gc_paused
from cover.io.jsonl_batch import decode_batch, line_chunks
from cover.io.prediction_rows import Loaded
from cover.io.seen import SeenIds
from cover.ragged import Ragged

#: Lines decoded at a time: the streams' batch (a few dozen MB of rows at 75 clips).
BATCH_LINES = 16_384

#: The columns a decoded batch has (:func:`cover.io.jsonl_batch.decode_batch`).
_ARRAYS = ("qid", "vid", "duration", "pred_start", "pred_end", "line", "query", "records")
_RAGGED = ("relevance", "pred_windows")
_STDS = ("start_std", "end_std")


def bulk_predictions(path: str | Path, *, clip: float = DEFAULT_CLIP_SECONDS,
                     batch_lines: int = BATCH_LINES) -> Loaded | None:
    """The table of :func:`cover.io.qvhighlights.read_predictions` read in batches of
    ``batch_lines`` lines, or None when a batch is not plainly clean, a qid repeats
    across batches, the file is empty or a JSON array, or it cannot be read (the
    per-row read then says why)."""
    name = str(path)
    tables: list[GroundingTable] = []
    seen = SeenIds()
    # the parsed rows of every batch stay alive (the table's records) and hold no cycles:
    # the collector would rescan them at every batch
    with gc_paused():
        try:
            for batch in line_chunks(path, batch_lines):
                if not tables and batch[0][1].lstrip()[:1] == b"[":
                    return None  # a JSON array (or lines that are not objects)
                got = decode_batch(name, batch, clip=clip, keep_records=True, keep_stds=True)
                if got is None:
                    return None
                table = got.loaded.table
                if seen.add(table.qid).any():
                    return None  # the per-row reader names the repeat and its first line
                tables.append(table)
        except (InputError, OSError, EOFError, zlib.error):
            return None  # a missing or damaged file: the per-row read's message
        if not tables:
            return None  # an empty file: an error the per-row read words
        return Loaded(concat_tables(tables), [], {})


def concat_tables(tables: list[GroundingTable]) -> GroundingTable:
    """The rows of ``tables`` (decoded prediction batches of one file, same ``clip`` and
    ``source``) one after the other: every array column joined, ragged offsets shifted
    by the values before them; ``start_std``/``end_std`` are NaN in a part without them,
    and both None when no ``start_std`` is finite, as the per-row read makes them (a
    part's stds must then be kept: ``decode_batch(..., keep_stds=True)``). The parts' columns
    are dropped as they are joined (``tables`` is emptied): one column is held twice at
    a time, never the whole table."""
    first = tables[0]
    sizes = [len(t) for t in tables]
    parts: dict[str, list[Any]] = {
        "qid": [raw_ids(t) for t in tables], "vid": [raw_ids(t, "vid") for t in tables],
        **{k: [getattr(t, k) for t in tables] for k in (*_ARRAYS[2:], *_RAGGED, *_STDS)}}
    clip, source = first.clip, first.source
    for t in tables:
        if t.clip != clip or t.source != source or t.truth is not None:
            raise ValueError("concat_tables joins prediction batches of one file")
    tables.clear()
    out: dict[str, Any] = {}
    for k in _ARRAYS:
        out[k] = np.concatenate(parts.pop(k))
    for k in _RAGGED:
        out[k] = _concat_ragged(parts.pop(k))
    for k in _STDS:
        cols = parts.pop(k)
        out[k] = np.concatenate([np.full(n, np.nan) if c is None else c
                                 for c, n in zip(cols, sizes, strict=True)])
    if not np.isfinite(out["start_std"]).any():  # the per-row read's rule, over every row
        out["start_std"] = out["end_std"] = None
    return GroundingTable(clip=clip, source=source, **out)


def _concat_ragged(parts: list[Ragged]) -> Ragged:
    """Ragged rows one after the other: values joined, each part's offsets moved past
    the values before it."""
    starts = np.cumsum([0] + [int(r.offsets[-1] - r.offsets[0]) for r in parts])
    offsets: list[NDArray[np.int64]] = [np.zeros(1, dtype=np.int64)]
    offsets += [r.offsets[1:] - r.offsets[0] + s for r, s in zip(parts, starts, strict=False)]
    values = np.concatenate([r.values[r.offsets[0]:r.offsets[-1]] for r in parts])
    return Ragged(values, np.concatenate(offsets))


__all__ = ["BATCH_LINES", "bulk_predictions", "concat_tables"]
