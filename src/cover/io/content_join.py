"""Joining on (video, query text) when a file's qids are only positions.

Charades-STA's text file, ActivityNet Captions and TACoS json have no query ids;
each tool numbers their queries its own way (line index, 12404 + line index, a
running count over splits). When the qids of two files do not agree, rows are
matched on ``(vid, normalised query, occurrence)``: the k-th prediction for a given
(video, query) pairs with the k-th ground-truth row for it, both in qid order
(numeric when every qid is a number, else file order). The normalised query is
lower-cased, stripped, with runs of blanks collapsed and a final period dropped
(Charades-CD drops periods; ActivityNet keeps leading spaces).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.join import index_of
from cover.data.table import GroundingTable

#: A normalised query longer than this joins by its digest: the keys are one text column,
#: as wide as its longest, and one query of a million characters would make every key so.
LONG_QUERY = 256


def normalise(query: NDArray[np.object_] | None, n: int) -> NDArray[np.str_]:
    """Each query lower-cased, blanks collapsed, a final period dropped (a long one as
    the BLAKE2b digest of that: equal queries, equal keys)."""
    if query is None:
        return np.full(n, "", dtype=str)
    text = [" ".join(str(q).lower().split()).removesuffix(".") if q is not None else ""
            for q in query.tolist()]
    return np.array([t if len(t) <= LONG_QUERY else _digest(t) for t in text], dtype=str)


def _digest(text: str) -> str:
    import hashlib

    # \x1e (record separator) cannot start a normalised query: split() strips it
    return "\x1e" + hashlib.blake2b(text.encode("utf-8", "surrogatepass"),
                                     digest_size=16).hexdigest()


def _order(qid: NDArray[np.str_]) -> NDArray[np.int64]:
    try:
        return np.argsort(qid.astype(np.float64), kind="stable")
    except ValueError:
        return np.arange(qid.size, dtype=np.int64)


def rank_within(keys: NDArray[Any]) -> NDArray[np.int64]:
    """0-based position of each row among the rows with the same key, in row order."""
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    new = np.r_[True, sk[1:] != sk[:-1]] if sk.size else np.zeros(0, dtype=bool)
    group_start = np.maximum.accumulate(np.where(new, np.arange(sk.size), 0))
    rank = np.empty(keys.size, dtype=np.int64)
    rank[order] = np.arange(sk.size) - group_start
    return rank


def content_keys(t: GroundingTable) -> NDArray[np.str_]:
    """``vid \x1f query \x1f k`` per row, k = occurrence of (vid, query) in qid order."""
    base = np.char.add(np.char.add(t.vid.astype(str), "\x1f"), normalise(t.query, len(t)))
    order = _order(t.qid)
    occ = np.empty(base.size, dtype=np.int64)
    occ[order] = rank_within(base[order])
    return np.char.add(np.char.add(base, "\x1f"), occ.astype(str))


def qid_agreement(preds: GroundingTable, gt: GroundingTable) -> int:
    """How many predictions find a ground-truth row with the same qid and vid."""
    j, hit = index_of(gt.qid, preds.qid)
    return int((hit & (gt.vid[j] == preds.vid)).sum()) if gt.qid.size else 0


def rekey(preds: GroundingTable, gt: GroundingTable, pk: NDArray[np.str_],
          gk: NDArray[np.str_]) -> tuple[GroundingTable, int]:
    """``gt`` with each row's qid replaced by the qid of the prediction whose key
    (``pk``) is the row's (``gk``), and its query text set to the prediction's; returns
    it with the number of rows matched. Unmatched rows keep their qid, suffixed ``~gt``
    if it collides with a prediction's qid."""
    j, hit = index_of(pk, gk)
    qid = gt.qid.astype(object)
    qid[hit] = preds.qid[j[hit]]
    clash = ~hit & np.isin(gt.qid, preds.qid)
    qid[clash] = np.char.add(gt.qid[clash], "~gt")
    query = gt.query
    if query is not None and preds.query is not None:
        query = query.copy()
        query[hit] = preds.query[j[hit]]
    return replace(gt, qid=qid.astype(str), query=query), int(hit.sum())


def known_vids(vid: NDArray[np.str_], known: NDArray[np.str_]) -> NDArray[np.str_]:
    """``vid`` with a video-file extension (``X.mp4``) and then a ``v_`` prefix removed
    where that names a video of ``known`` and the id as written does not, the way the
    TimeChat readers normalise their ids (:mod:`cover.io.timechat`)."""
    from cover.io.timechat import strip_ext

    out = vid.astype(str)
    missing = ~np.isin(out, known)
    if not missing.any():
        return out
    # The text edits run once per distinct unknown id, not once per row.
    names, back = np.unique(out[missing], return_inverse=True)
    bare = np.array([strip_ext(v) for v in names.tolist()], dtype=str)
    unprefixed = np.array([v.removeprefix("v_") for v in bare.tolist()], dtype=str)
    fixed = names
    for cand in (bare, unprefixed):
        fix = ~np.isin(fixed, known) & np.isin(cand, known)
        fixed = np.where(fix, cand, fixed)
    out[missing] = fixed[back]  # out is astype's copy, not the caller's column
    return out
