"""Joining predictions to ground truth when their qids do not agree: on (vid, query
text) (:mod:`cover.io.content_join`), or by order within each video.

A layout that names each query by its position among its video's queries
(DisTime's ``<vid>-<i>``, TGN's ``<vid>-<k>``, Shuffling-Videos' per-video lists) is
read with qid ``<vid>-<k>`` (:mod:`cover.io.mapping`). The ground-truth row it names
is the k-th (from 0) of that video in the ground-truth file's order, counting the rows
the reader rejected too (a rejected row still holds its place). :func:`join_truth`
tries each join and keeps the one matching the most predictions; an order join also
counts the pairs whose query texts differ beyond case and punctuation, so a shifted
order does not pass unseen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.join import index_of
from cover.data.table import GroundingTable
from cover.io.content_join import content_keys, qid_agreement, rank_within, rekey
from cover.io.row_checks import RejectedRows

_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True)
class Joined:
    """The ground truth rekeyed (or as it was), and how the join went."""

    gt: GroundingTable
    agree: int
    matched: int
    how: str = "qid"
    #: Order join only: matched pairs whose query texts differ beyond case/punctuation.
    text_differs: int = 0
    #: Order join only: the names (``<vid>-<k>``) of the places the reader's rejected
    #: rows hold, so a prediction for one is told its truth row was rejected.
    rejected: NDArray[np.str_] = field(default_factory=lambda: np.empty(0, dtype=str))


def order_qids(t: GroundingTable) -> bool:
    """Whether every qid is ``<vid>-<k>`` of its own row (a position in its video)."""
    return named_by_place(t.qid, t.vid)


def named_by_place(qid: NDArray[Any], vid: NDArray[Any]) -> bool:
    """Whether each ``qid`` is ``<vid>-<k>`` of the ``vid`` beside it (some row given)."""
    if not qid.size:
        return False
    head = np.char.add(vid.astype(str), "-")
    q = qid.astype(str)
    if not np.char.startswith(q, head).all():
        return False
    tail = np.array([s[len(h):] for s, h in zip(q.tolist(), head.tolist(), strict=True)])
    return bool(np.char.isdigit(tail).all())


def order_keys(gt: GroundingTable, rejected: RejectedRows | None = None
               ) -> tuple[NDArray[np.str_], NDArray[np.str_]]:
    """``<vid>-<k>`` of every ground-truth row: k = its place among its video's rows in
    file order (by line, then row), the ``rejected`` rows (``(line, qid)`` -> record with a vid)
    holding their places (a document's rejected row after the kept rows of its line); and
    the names of the places the rejected rows hold."""
    n = len(gt)
    lines = gt.line if gt.line is not None else np.zeros(n, dtype=np.int64)
    extra = [(str(r["vid"]), int(ln)) for (ln, _), r in (rejected or {}).items()
             if isinstance(r, dict) and r.get("vid") is not None]
    vid = np.concatenate([gt.vid.astype(str), np.array([v for v, _ in extra], dtype=str)])
    line = np.concatenate([lines, np.array([ln for _, ln in extra], dtype=np.int64)])
    order = np.argsort(line, kind="stable")  # file order: by line, then row
    rank = np.empty(vid.size, dtype=np.int64)
    rank[order] = rank_within(vid[order])
    keys = np.char.add(np.char.add(vid, "-"), rank.astype(str))
    return keys[:n], keys[n:]


def _words(q: NDArray[np.object_] | None, n: int) -> NDArray[np.str_]:
    if q is None:
        return np.full(n, "", dtype=str)
    return np.array([_NOT_WORD.sub("", str(x).lower()) if x is not None else ""
                     for x in q.tolist()], dtype=str)


def join_truth(preds: GroundingTable, gt: GroundingTable,
               rejected: RejectedRows | None = None) -> Joined:
    """The join that matches the most predictions: by qid (kept when it matches them
    all), by order within each video (predictions whose qids are ``<vid>-<k>``), or on
    (vid, query text). ``rejected`` are the ground-truth reader's rejected rows."""
    agree = qid_agreement(preds, gt)
    if agree >= len(preds):
        return Joined(gt, agree, 0)
    best = Joined(gt, agree, 0)
    if order_qids(preds):
        gk, held = order_keys(gt, rejected)
        rekeyed, matched = rekey(preds, gt, preds.qid.astype(str), gk)
        if matched > agree:
            j, hit = index_of(preds.qid.astype(str), gk)
            pw, gw = _words(preds.query, len(preds))[j[hit]], _words(gt.query, len(gt))[hit]
            differs = int(((pw != "") & (gw != "") & (pw != gw)).sum())
            best = Joined(rekeyed, agree, matched, "order within each video", differs, held)
    if best.matched < len(preds):
        rekeyed, matched = rekey(preds, gt, content_keys(preds), content_keys(gt))
        if matched > max(agree, best.matched):
            best = Joined(rekeyed, agree, matched, "(vid, query text)")
    return best
