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

The columns are built a batch of rows at a time (:class:`CompactColumns`: by the typed
read of a QVHighlights-style file, :func:`cover.io.gt_lean.read_truth_compact`) or from a
table read in memory (:func:`compact_truth`: every other format).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.table import GroundingTable, qid_text
from cover.intervals import Intervals
from cover.io.content_join import normalise
from cover.io.narrow import int_keys, narrow_float, narrow_int, per_vid, sorted_find, sorted_unique
from cover.io.seen import SeenIds
from cover.ragged import Ragged, offsets_from_lengths, take_index
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
        on what a join on content can match (:func:`cover.io.content_join.rekey_truth`)."""
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


class Column:
    """One column grown in place (capacity x1.5 when full), so a batch leaves no array
    of its own behind: the Python objects of a batch's parsed rows are freed whole and
    their memory returns to the allocator, where a small array kept per batch would pin
    a block of it each time (about 1 KB a row over a file). ``capacity``: the rows
    expected (when known, the first buffer holds them all: no growth, no slack)."""

    def __init__(self, capacity: int = 0) -> None:
        self.buf: NDArray[Any] | None = None
        self.n = 0
        self.capacity = capacity

    def append(self, values: NDArray[Any]) -> None:
        need = self.n + values.size
        buf = self.buf
        dtype = values.dtype if buf is None else np.promote_types(buf.dtype, values.dtype)
        if buf is None or need > buf.size or dtype != buf.dtype:
            grown = np.empty(max(need, self.capacity if buf is None else buf.size * 3 // 2,
                                 1024), dtype)
            if buf is not None:
                grown[:self.n] = buf[:self.n]
            self.buf = buf = grown
        buf[self.n:need] = values
        self.n = need

    def array(self, empty: Any) -> NDArray[Any]:
        """The values (of dtype ``empty`` when none), the buffer let go."""
        buf, self.buf = self.buf, None
        if buf is None:
            return np.zeros(0, dtype=empty)
        if buf.size != self.n:
            buf.resize(self.n, refcheck=False)  # shrunk in place: no second copy
        return buf


class CompactColumns:
    """The compact columns of a ground truth, built part by part (:meth:`add`), then
    indexed once (:meth:`finish`)."""

    def __init__(self, source: str, clip: float) -> None:
        self.source, self.clip = source, clip
        self.qids = Column()
        self.int_qids = True
        self.vids = Column()  # each part's distinct vids, one after another
        self.vid_codes = Column()  # a row's index into self.vids
        self.queries: dict[Any, int] | None = {}  # distinct str/None queries -> code
        self.query_codes = Column()
        self.no_query = False
        self.floats = (Column(), Column(), Column())
        self.counts = Column()
        self.lines = Column()
        self.from_one = True
        self.no_lines = False
        self.n = 0

    def add(self, qid: NDArray[Any], vid: NDArray[np.str_],
            query: NDArray[np.object_] | list[Any] | None, duration: NDArray[np.float64],
            starts: NDArray[np.float64], ends: NDArray[np.float64],
            counts: NDArray[np.int64], line: NDArray[np.int64] | None) -> None:
        """Append rows: qid (text or integers) and vid text, query values (None: the table
        has none), durations, the windows flat with their count per row, file lines (or None)."""
        m = qid.size
        keys = (qid if qid.dtype.kind == "i" else int_keys(qid)) if self.int_qids else None
        if keys is None and self.int_qids:  # from now on every qid is kept as text
            self.int_qids = False
            text = as_bytes(self.qids.array(np.int8).astype(str))
            self.qids = Column()
            self.qids.append(text)
        self.qids.append(narrow_int(keys) if keys is not None else as_bytes(qid_text(qid)))
        uniq, inv = np.unique(as_bytes(vid), return_inverse=True)
        self.vid_codes.append(narrow_int(inv.reshape(-1) + self.vids.n))
        self.vids.append(uniq)
        self._add_query(query, m)
        for col, values in zip(self.floats, (duration, starts, ends), strict=True):
            col.append(narrow_float(values))
        self.counts.append(narrow_int(np.asarray(counts)))
        self._add_lines(line, m)
        self.n += m

    def _add_lines(self, line: NDArray[np.int64] | None, m: int) -> None:
        """Lines are kept only once they stop being ``1, 2, ...`` (then from the start)."""
        if line is None:
            self.from_one = False
            self.no_lines = True
            return
        line = np.asarray(line, dtype=np.int64)
        if self.from_one and bool((line == np.arange(self.n + 1, self.n + m + 1)).all()):
            return
        if self.from_one and self.n:
            self.lines.append(narrow_int(np.arange(1, self.n + 1)))
        self.from_one = False
        self.lines.append(narrow_int(line))

    def _add_query(self, query: NDArray[np.object_] | list[Any] | None, m: int) -> None:
        if query is None:
            self.no_query = True
            return
        values = list(query)
        if self.queries is not None and set(map(type, values)) <= {str, type(None)}:
            codes = self.queries
            for q in dict.fromkeys(values):  # the batch's distinct queries, in order
                codes.setdefault(q, len(codes))
            self.query_codes.append(narrow_int(np.fromiter(  # a C-level lookup a row
                map(codes.__getitem__, values), dtype=np.int64, count=m)))
            return
        part = np.empty(m, dtype=object)
        part[:] = values
        if self.queries is not None:  # a query that is not text: kept as it is, per row
            distinct = np.array(list(self.queries), dtype=object)  # text or None: 1-d
            before = distinct[self.query_codes.array(np.int32)]
            self.query_codes, self.queries = Column(), None
            self.query_codes.append(before)
        self.query_codes.append(part)

    def finish(self, saliency: Ragged | None, *, unique: bool = True
               ) -> CompactTruth | None:
        """The indexed truth; None when a qid repeats and ``unique`` (else a repeated
        qid finds its first row, as a stable sort of the text would). Each column is
        trimmed and its buffer let go before the next."""
        keys = self.qids.array(np.int8 if self.int_qids else "S1")
        order = None
        if keys.size > 1 and not bool((keys[1:] > keys[:-1]).all()):
            order = np.argsort(keys, kind="stable")
            ranked = keys[order]
            if unique and bool((ranked[1:] == ranked[:-1]).any()):
                return None  # a repeated qid: the per-row reader names its line
            del ranked
        # every column trimmed before the vids are merged (the read's largest transient)
        dur, starts, ends = (c.array(np.float32) for c in self.floats)
        counts = self.counts.array(np.int8)
        offsets = None if bool((counts == 1).all()) else offsets_from_lengths(counts)
        del counts
        lines = self.lines.array(np.int8)
        queries, query_code = self._query_columns()
        vids, vid_code = self._vids()
        dur, by_vid = per_vid(dur, vid_code, vids.size)
        return CompactTruth(
            keys=keys, order=order, vids=vids, vid_code=vid_code, duration=dur,
            starts=starts, ends=ends, offsets=offsets,
            line=None if self.from_one or self.no_lines else lines,
            lines_from_one=self.from_one, queries=queries,
            query_code=query_code, saliency=saliency, source=self.source, clip=self.clip,
            duration_by_vid=by_vid)

    def _vids(self) -> tuple[NDArray[np.bytes_], NDArray[np.integer]]:
        """Every part's distinct vids merged once: sorted vids and each row's code."""
        parts = self.vids.array("S1")
        vids, inv = sorted_unique(parts)
        del parts
        codes = self.vid_codes.array(np.int8)  # its type holds every index into parts
        for a in range(0, codes.size, 1 << 20):  # in place: no second column of codes
            codes[a:a + (1 << 20)] = inv[codes[a:a + (1 << 20)]]
        return vids, codes

    def _query_columns(self) -> tuple[NDArray[np.object_] | None, NDArray[Any] | None]:
        if self.no_query:
            return None, None
        if self.queries is None:  # values kept per row: each row its own code
            values = self.query_codes.array(object)
            return values, np.arange(values.size, dtype=np.int64)
        distinct = np.array(list(self.queries), dtype=object)
        codes = self.query_codes.array(np.int32)
        if distinct.size == 1:  # one query for every row: one code shared by all (read only)
            return distinct, np.broadcast_to(np.int8(0), codes.shape)
        return distinct, narrow_int(codes)


def compact_truth(gt: GroundingTable) -> CompactTruth:
    """:class:`CompactTruth` of a table read in memory (every ground-truth format)."""
    cols = CompactColumns(gt.source, gt.clip)
    truth = gt.require_truth()
    cols.add(gt.qid, gt.vid, gt.query, gt.duration, truth.starts, truth.ends,
             np.diff(truth.offsets), gt.line)
    out = cols.finish(gt.truth_saliency, unique=False)
    assert out is not None  # repeated qids are allowed here
    return out
