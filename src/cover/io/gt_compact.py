"""The compact columns of a ground truth (:class:`cover.io.truth_index.CompactTruth`,
what a stream holds), built a batch of rows at a time (:class:`CompactColumns`: by the
typed read of a QVHighlights-style file, :func:`cover.io.gt_lean.read_truth_compact`) or
from a table read in memory (:func:`compact_truth`: every other format).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.table import GroundingTable, qid_text
from cover.io.narrow import int_keys, narrow_float, narrow_int, per_vid, sorted_unique
from cover.io.truth_index import CompactTruth
from cover.ragged import Ragged, offsets_from_lengths
from cover.utf8 import as_bytes


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
