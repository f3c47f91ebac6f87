"""Ground truth held as compact columns, indexed by qid (what ``cover evaluate`` keeps).

A :class:`~cover.data.table.GroundingTable` holds ids as numpy text (4 bytes a
character), the query as one Python string per row and every float as float64: about
0.5 KB a row once read. :class:`CompactTruth` keeps, per row, only what the join needs,
each in the narrowest exact form:

* qid: integers when every qid is written as one (``str(int(q)) == q``), else UTF-8
  bytes; in file order, with the argsort only when they are not increasing already
  (:meth:`find` is a binary search either way);
* vid: a code into the sorted distinct vids (UTF-8 bytes); query: a code into the
  distinct query values;
* duration and windows in their narrowest exact form (:func:`cover.io.narrow.narrow_float`:
  whole seconds in 2 bytes); the duration once per vid when every row of a vid has the
  same one; offsets only when some row has more than one window; lines only when they
  are not ``1..n``.

:meth:`take` gives the rows asked for as a table equal, column for column, to the
table's own ``take`` (the ``records`` dropped), so the join and every number built on
it are unchanged. :class:`TruthSeen` is the streamed duplicate check keyed by truth row.

The columns are built by :mod:`cover.io.gt_compact`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.table import GroundingTable, qid_text
from cover.intervals import Intervals
from cover.io.content_join import normalise
from cover.io.narrow import int_keys, sorted_find
from cover.io.seen import SeenIds
from cover.ragged import Ragged, take_index
from cover.utf8 import as_bytes, as_text


def _int_lookup(qid: NDArray[np.str_], dtype: np.dtype[Any]
                ) -> tuple[NDArray[Any], NDArray[np.bool_]]:
    """Qids as integer keys of ``dtype`` and which can match one at all (written plainly,
    in range); per qid in Python only when some qid of the batch is not an integer."""
    got = int_keys(qid)
    if got is not None:
        ok = np.ones(qid.size, dtype=bool)
    else:
        vals = [_plain_int(q) for q in qid.tolist()]
        ok = np.array([v is not None for v in vals], dtype=bool)
        got = np.array([0 if v is None else v for v in vals], dtype=np.int64)
    info = np.iinfo(dtype)
    ok &= (got >= info.min) & (got <= info.max)
    return np.where(ok, got, 0).astype(dtype), ok


def _plain_int(q: str) -> int | None:
    try:
        v = int(q)
    except ValueError:
        return None
    return v if str(v) == q and -(2**63) <= v < 2**63 else None


@dataclass(eq=False)
class CompactTruth:
    """The ground truth of ``n`` rows as compact columns (see the module doc)."""

    keys: NDArray[Any]
    order: NDArray[np.integer] | None
    vids: NDArray[np.bytes_]
    vid_code: NDArray[np.integer]
    duration: NDArray[np.floating]
    starts: NDArray[np.floating]
    ends: NDArray[np.floating]
    offsets: NDArray[np.int64] | None
    line: NDArray[np.integer] | None
    lines_from_one: bool
    queries: NDArray[np.object_] | None
    query_code: NDArray[np.integer] | None
    saliency: Ragged | None
    source: str
    clip: float
    #: ``duration`` holds one value per vid (indexed by ``vid_code``), not per row.
    duration_by_vid: bool = False

    def __post_init__(self) -> None:
        self._used: NDArray[np.bool_] | None = None
        self._released = False
        self._content: tuple[NDArray[Any], NDArray[np.int64]] | None = None

    @property
    def used(self) -> NDArray[np.bool_]:
        """Which rows a stream matched (made on first use: only ``cover evaluate`` marks them)."""
        if self._used is None:
            self._used = np.zeros(len(self), dtype=bool)
        return self._used

    def durations(self, rows: NDArray[np.integer]) -> NDArray[np.float64]:
        """The duration of each of ``rows`` (float64), gathered a slice at a time (no
        full-length index or narrow copy beside the result)."""
        out = np.empty(len(rows), dtype=np.float64)
        for a in range(0, out.size, 1 << 20):
            part = rows[a:a + (1 << 20)]
            out[a:a + part.size] = self.duration[self.vid_code[part] if self.duration_by_vid
                                                 else part]
        return out

    def release(self) -> None:
        """Let go of the windows, lines, queries and labels: a stream done joining reads
        only ids and durations (:meth:`find`, ``vid_code``, :meth:`durations`) after it;
        :meth:`take` then raises rather than give rows without their windows."""
        self._released = True
        empty = np.zeros(0, dtype=np.float32)
        self.starts = self.ends = empty
        self.offsets = self.line = self.query_code = None
        self.saliency, self._used, self._content = None, None, None

    def __len__(self) -> int:
        return int(self.vid_code.size)

    @property
    def int_qids(self) -> bool:
        return self.keys.dtype.kind == "i"

    def find(self, qid: NDArray[np.str_]) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
        """``(row, hit)`` per qid: the truth row with that qid where ``hit``."""
        keys, ok = (_int_lookup(qid, self.keys.dtype) if self.int_qids
                    else (as_bytes(qid), True))
        j, hit = sorted_find(self.keys, keys, self.order)
        return j.astype(np.int64), hit & ok

    def vid_codes(self, vid: NDArray[np.str_]) -> NDArray[np.int64]:
        """Each vid's code (-1 where no truth row has it)."""
        pos, hit = sorted_find(self.vids, as_bytes(vid))
        return np.where(hit, pos, -1).astype(np.int64)

    def same_vid(self, j: NDArray[np.int64], vid: NDArray[np.str_]) -> NDArray[np.bool_]:
        """Whether truth row ``j[i]`` has video ``vid[i]``."""
        return np.asarray(self.vid_code[j] == self.vid_codes(vid), dtype=bool)

    def known_vids(self) -> NDArray[np.str_]:
        """Every truth vid as text, sorted (:func:`cover.io.content_join.known_vids`)."""
        return as_text(self.vids)

    def take(self, rows: NDArray[np.int64], *, vid_text: NDArray[np.str_] | None = None
             ) -> GroundingTable:
        """The table of ``rows`` (as ``GroundingTable.take`` of the table read);
        ``vid_text``: every vid as text, when ``rows`` hold them all (each decoded once)."""
        if self._released:
            raise RuntimeError("the truth's windows were released: take() needs them")
        rows = np.asarray(rows, dtype=np.int64)
        m = rows.size
        keys = self.keys[rows]
        qid = as_text(keys) if not self.int_qids else qid_text(keys)  # narrowest text
        if self.offsets is None:
            truth = Intervals.single(self.starts[rows].astype(np.float64),
                                     self.ends[rows].astype(np.float64))
        else:
            flat, off = take_index(self.offsets, rows)
            truth = Intervals(self.starts[flat].astype(np.float64),
                              self.ends[flat].astype(np.float64), off)
        line = (rows + 1 if self.lines_from_one else
                None if self.line is None else self.line[rows].astype(np.int64))
        query = (None if self.queries is None or self.query_code is None
                 else self.queries[self.query_code[rows]])
        return GroundingTable(
            qid=qid, vid=as_text(self.vids[self.vid_code[rows]]) if vid_text is None
            else vid_text[self.vid_code[rows]],
            duration=self.durations(rows),
            pred_start=np.full(m, np.nan), pred_end=np.full(m, np.nan),
            relevance=Ragged(np.empty(0), np.zeros(m + 1, dtype=np.int64)),
            clip=self.clip, truth=truth, line=line, source=self.source, query=query,
            records=None, truth_saliency=None if self.saliency is None
            else self.saliency.take(rows))

    def table(self) -> GroundingTable:
        """Every row as one table (the whole-file join on content needs it; the in-memory
        read of a ground truth is this table). Each distinct vid is decoded once: every
        one is in some row, so the text's width is the one a decode per row gives."""
        return self.take(np.arange(len(self), dtype=np.int64), vid_text=as_text(self.vids))

    def content_hits(self, t: GroundingTable) -> int:
        """Rows of ``t`` whose (vid, normalised query) some truth row has: an upper bound
        on what a join on content can match (:func:`cover.io.content_join.rekey`)."""
        if self._content is None:  # built on first need: most runs match by qid
            qtext = normalise(self.queries, 0 if self.queries is None else
                              self.queries.size)
            norm, inv = np.unique(np.append(qtext, ""), return_inverse=True)
            per_row = (np.full(len(self), inv[-1], dtype=np.int64) if self.query_code is None
                       else inv[:-1][self.query_code])
            self._content = norm, np.unique(self.vid_code.astype(np.int64) * norm.size
                                            + per_row)
        norm, pairs = self._content
        v = self.vid_codes(t.vid)
        q = normalise(t.query, len(t))
        at, found = sorted_find(norm, q)
        qc = np.where(found, at, -1)
        key = v * norm.size + qc
        return int(((v >= 0) & (qc >= 0) & np.isin(key, pairs)).sum())


class TruthSeen:
    """Qids met in earlier batches with the line each was first met on, as
    :class:`cover.io.seen.SeenIds` (the same answers), but kept per truth row: a line
    number a row (4 bytes), plus a :class:`SeenIds` for qids no truth row has."""

    def __init__(self, truth: CompactTruth) -> None:
        self.truth = truth
        self.first = np.zeros(len(truth), dtype=np.uint32)  # 0: not seen yet
        self.other = SeenIds()

    def any_of(self, qids: list[str]) -> bool:
        """Whether any of ``qids`` was met already (nothing is added)."""
        q = np.array(qids, dtype=str)
        j, hit = self.truth.find(q)
        return bool((self.first[j[hit]] > 0).any()) or self.other.any_of(
            q[~hit].tolist())

    def add_lines(self, qids: NDArray[np.str_], lines: NDArray[np.int64],
                  found: tuple[NDArray[np.int64], NDArray[np.bool_]] | None = None
                  ) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
        """``(dup, first)``: whether ``qids[i]`` was in an earlier batch and the line it was
        first seen on (0 where new), as :meth:`cover.io.seen.SeenIds.add_lines`; then the
        new ids are added. The lines (1-based) are required: a truth row counts as seen
        by the line it was first seen on, so an id added without one would stay unseen.
        ``found``: ``truth.find(qids)`` when the caller has it."""
        qids = np.asarray(qids)
        lines = np.asarray(lines, dtype=np.int64)
        if lines.size and lines.min() < 1:
            raise ValueError("TruthSeen.add_lines: line numbers start at 1")
        j, hit = self.truth.find(qids) if found is None else found
        first_line = np.zeros(qids.size, dtype=np.int64)
        at = np.flatnonzero(hit)
        first_line[at] = self.first[j[hit]]
        dup = first_line > 0
        if lines.size and lines.max() > np.iinfo(self.first.dtype).max:
            self.first = self.first.astype(np.int64)
        new = at[~dup[at]]
        rows, first = np.unique(j[new], return_index=True)  # a batch's first occurrence
        self.first[rows] = lines[new[first]]
        miss = np.flatnonzero(~hit)
        dup[miss], first_line[miss] = self.other.add_lines(qids[miss], lines[miss])
        return dup, first_line

    def __len__(self) -> int:
        return int((self.first > 0).sum()) + len(self.other)
