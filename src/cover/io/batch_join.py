"""Joining prediction batches to ground truth by qid (a whole file is one batch): the
join every labelled input goes through, in memory (:func:`cover.io.labelled.read_labelled`)
or streamed (:mod:`cover.stream.calibrate`, :mod:`cover.stream.evaluate`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from cover.data.join import KeyIndex, attach_truth
from cover.data.rules import duplicate_reason, in_line_order, with_files_of
from cover.data.table import GroundingTable
from cover.errors import KEEP, InputError, ProblemTally, RowProblem
from cover.io.jsonl import OnError, raise_on_rejections
from cover.io.qids import unknown_qids
from cover.io.qvhighlights import Loaded
from cover.io.seen import SeenIds
from cover.io.truth_index import CompactTruth, TruthSeen


@dataclass(frozen=True)
class QidList:
    """The query ids of a ``--qids`` file and the line each is on (``path`` None: ids
    given in code, not checked against the files)."""

    path: str | Path | None
    wanted: NDArray[np.str_]
    lines: NDArray[np.int64]


def join_batches(
    batches: Iterable[Loaded],
    gt: GroundingTable | CompactTruth,
    *,
    preds: str | Path,
    gt_name: str | Path,
    qids: QidList | None = None,
    strict: bool = False,
    on_error: OnError = "raise",
    head: list[RowProblem] | None = None,
    use: Callable[[GroundingTable], None],
    truth_rows: Callable[[NDArray[np.int64]], None] | None = None,
    keep: int | None = KEEP,
    truth_rejected: NDArray[np.str_] | None = None,
    row_rule: Callable[[GroundingTable], tuple[GroundingTable, list[RowProblem]]] | None = None,
) -> ProblemTally:
    """Join prediction batches (a whole file is one batch) with ``gt`` by qid, handing
    each joined batch to ``use``; returns the problems tallied in this order: ``head``
    (the readers'), a listed qid found in neither file, the batches' own, then
    ground-truth rows no batch predicted. The tally keeps the first ``keep`` problems of
    each action (None: every one, in that order), so a stream's memory stays bounded.

    The rules are those of :func:`cover.data.join.attach_truth` on the whole file, for
    any number of batches: a qid seen on an earlier line is rejected, and a truth row
    without a prediction is known only after the last batch. Under
    ``on_error='raise'`` a rejected row raises once every batch is read; a ground-truth
    row without a prediction gets its own message, because a silently dropped query
    biases calibration and the usual cause is calibrating on a subset without ``qids``.
    ``truth_rows``, when given, gets after each ``use`` the row of ``gt`` each joined
    row was joined with (its qid, vid and duration are that row's): a stream can keep
    those row numbers instead of the text. ``truth_rejected``: the qids of ground-truth
    rows the reader rejected (:func:`rejected_qids`; their predictions say so). A stream
    passes ``gt`` as compact columns
    (:class:`cover.io.truth_index.CompactTruth`): each batch then takes only its own
    truth rows, and the qids seen are kept per truth row (:class:`TruthSeen`).
    ``row_rule``: a rule a joined row must also meet (the rows it keeps, and a rejection
    for each other), as the join's own are met: e.g. a signal from proposals that its
    duration does not make too long (:func:`cover.data.relevance.reject_long_signals`).
    """
    name = str(preds)
    index = gt if isinstance(gt, CompactTruth) else KeyIndex(gt.qid)  # sorted once
    seen: SeenIds | TruthSeen = TruthSeen(gt) if isinstance(gt, CompactTruth) else SeenIds()
    wanted = None if qids is None else np.asarray(qids.wanted).astype(str)
    listed: NDArray[np.bool_] | None = None  # the truth rows a --qids list keeps (all)
    if wanted is not None:
        if isinstance(gt, CompactTruth):
            j, hit = gt.find(wanted)
            listed = np.zeros(len(gt), dtype=bool)
            listed[j[hit]] = True
        else:
            listed = np.isin(gt.qid, wanted)  # as select_qids keeps them
    # The truth rows some kept prediction row joined (a byte a truth row): seen also
    # holds the qids of rows rejected for their numbers, which predict nothing.
    predicted = np.zeros(len(gt), dtype=bool)
    # The truth rows whose prediction row the reader rejected, whatever the reason (a
    # byte a truth row): seen's claims leave out a row rejected for its vid.
    set_aside = np.zeros(len(gt), dtype=bool)
    found = ProblemTally(keep)
    read_bad = ProblemTally()  # the readers' rejections (a stream's reads set them aside)
    source, n_batches = name, 0
    for loaded in batches:
        n_batches += 1
        # The duplicate rule on every row, listed or not, as a whole read applies it.
        # The truth rows of the batch's rows, looked up once when the rows are the claims.
        pre = index.find(loaded.table.qid) if loaded.claims is None else None
        table, read, repeats = across_batches(loaded, loaded.table, seen, found=pre)
        lost = [p.qid for p in read if p.action == "rejected" and p.qid is not None]
        if lost:
            k, found_k = index.find(np.array(lost, dtype=str))
            set_aside[k[found_k]] = True
        j, hit = (pre if pre is not None and len(table) == len(loaded.table)
                  else index.find(table.qid))
        if wanted is not None:  # the rows select_qids keeps
            kept = np.isin(table.qid, wanted)
            table, j, hit = table.take(kept), j[kept], hit[kept]
        source = table.source or name
        if listed is not None:
            hit &= listed[j]
        rows = np.unique(j[hit])
        predicted[rows] = True
        joined, more = attach_truth(table, gt.take(rows), strict=strict,
                                    truth_rejected=truth_rejected)
        if row_rule is not None:
            joined, ruled = row_rule(joined)
            more = [*more, *ruled]
        # A batch's problems in line order: the same first ones, whatever the batch size.
        found.add(sorted([*read, *repeats, *more], key=attrgetter("line")))
        if on_error == "raise":
            read_bad.add(in_line_order([p for p in (*read, *repeats)
                                        if p.action == "rejected"]))
        use(joined)
        if truth_rows is not None:
            truth_rows(index.find(joined.qid)[0])
    if n_batches == 0:
        raise InputError(f"{name}: no prediction lines")
    # A whole read stops at its reader's rejections before any join: a stream, having
    # read every batch, names the same rows.
    raise_on_rejections(read_bad, on_error, name)
    problems = ProblemTally.of(head or [], keep)
    unlisted: list[RowProblem] = []  # of the --qids list, named in the error's first line
    if qids is not None and qids.path is not None:
        assert wanted is not None
        unlisted = unknown_qids(qids.path, qids.wanted, qids.lines,
                                _known(gt, seen, wanted), f"{preds} nor in {gt_name}")
        problems.add(unlisted)
    missing = np.flatnonzero(~predicted if listed is None else listed & ~predicted)
    # A truth row whose qid a rejected prediction row claimed has a prediction, set aside.
    if isinstance(seen, TruthSeen):
        claimed = seen.first[missing] > 0
    else:
        assert isinstance(gt, GroundingTable)  # a SeenIds goes with a table (above)
        claimed = np.isin(gt.qid[missing], seen.array())
    claimed |= set_aside[missing]
    no_pred = ProblemTally(keep)
    why = (f"no prediction for this qid in {source}",
           f"its prediction row in {source} was rejected")
    for a in range(0, missing.size, _CHUNK):  # a chunk of problems at a time: bounded
        part, gone = gt.take(missing[a:a + _CHUNK]), claimed[a:a + _CHUNK]
        no_pred.add(in_line_order([*row_problems(part, ~gone, why[0]),
                                   *row_problems(part, gone, why[1])]))
    problems = problems + found + no_pred
    if no_pred and on_error == "raise":
        raise InputError(
            f"{len(no_pred)} ground-truth row(s) have no prediction, e.g. {no_pred.kept[0]}.\n"
            "A silently dropped query would bias calibration. If you calibrate on a subset "
            "on purpose, pass --qids FILE (e.g. from `cover split`); to set them aside, "
            "pass --on-error reject."
        )
    raise_on_rejections(problems, on_error,
                        with_files_of(f"{preds} joined with {gt_name}", unlisted))
    return problems


def rejected_qids(problems: Iterable[RowProblem]) -> NDArray[np.str_]:
    """The qids of the rows a reader rejected, as sorted unique text, made once for the
    join of every batch (a row without a readable qid has none)."""
    return np.unique(np.array([p.qid for p in problems
                               if p.action == "rejected" and p.qid is not None], dtype=str))


def across_batches(loaded: Loaded, table: GroundingTable, seen: SeenIds | TruthSeen, *,
                   found: tuple[NDArray[np.int64], NDArray[np.bool_]] | None = None
                   ) -> tuple[GroundingTable, list[RowProblem], list[RowProblem]]:
    """The duplicate rule across the batches of a stream, as a whole read applies it:
    ``(table`` without the rows repeating a qid of an earlier batch, the reader's
    problems as a whole read words them, the repeats' own problems``)``. ``seen`` holds
    the earlier batches' qids and gets this batch's claims (:attr:`Loaded.claims`: a row
    the reader rejected for its numbers still holds its qid). A repeat is named with
    the line its qid was first seen on: a rejected row's reason becomes the repeat (the
    duplicate rule comes before the number rules), and so does a repeat within the
    batch, whose first row here repeats an earlier batch's. ``found``: the truth rows of
    ``table``'s qids when the caller has them (they are the claims then; a
    :class:`TruthSeen` looks them up otherwise)."""
    q, lines = loaded.claims if loaded.claims is not None else (table.qid, table.line)
    if lines is None:  # a table built in memory: its rows have no lines to name
        if isinstance(seen, TruthSeen):  # it counts a truth row seen by its first line
            raise ValueError(f"{table.source}: a batch of rows without line numbers")
        dup, _ = seen.add_lines(table.qid, None)
        return table.take(~dup), list(loaded.problems), [
            RowProblem(table.source, 0, q, duplicate_reason(0), "rejected")
            for q in table.qid[dup].tolist()]
    dup, first = (seen.add_lines(q, lines, found)
                  if isinstance(seen, TruthSeen) and loaded.claims is None
                  else seen.add_lines(q, lines))
    if not dup.any():
        return table, list(loaded.problems), []
    moved = dict(zip(lines[dup].tolist(), first[dup].tolist(), strict=True))
    traced = {duplicate_reason(a): duplicate_reason(b) for a, b in moved.items()}

    def whole(p: RowProblem) -> RowProblem:
        why = (duplicate_reason(moved[p.line]) if p.line in moved else
               traced.get(p.problem, p.problem))
        return p if p.action != "rejected" or why == p.problem else RowProblem(
            p.path, p.line, p.qid, why, p.action)

    assert table.line is not None
    hit = np.isin(table.line, np.fromiter(moved, dtype=np.int64, count=len(moved)))
    repeats = [RowProblem(table.source, ln, q, duplicate_reason(moved[ln]), "rejected")
               for ln, q in zip(table.line[hit].tolist(), table.qid[hit].tolist(),
                                strict=True)]
    return table.take(~hit), [whole(p) for p in loaded.problems], repeats


#: Ground-truth rows without a prediction made problems this many at a time.
_CHUNK = 1 << 16


def _known(gt: GroundingTable | CompactTruth, seen: SeenIds | TruthSeen,
           wanted: NDArray[np.str_]) -> NDArray[np.str_]:
    """The ``wanted`` qids some prediction or truth row has (any other is unknown)."""
    if isinstance(seen, SeenIds):
        assert isinstance(gt, GroundingTable)
        return np.union1d(seen.array(), gt.qid)
    assert isinstance(gt, CompactTruth)
    return np.union1d(seen.other.array(), wanted[gt.find(wanted)[1]])


def row_problems(t: GroundingTable, rows: NDArray[Any] | slice, why: str,
              action: Literal["rejected", "noted"] = "rejected") -> list[RowProblem]:
    """A problem at each of ``t``'s ``rows``, naming its file, line and qid."""
    lines = t.line if t.line is not None else np.zeros(len(t), dtype=np.int64)
    return [RowProblem(t.source, int(ln), str(q), why, action)
            for ln, q in zip(lines[rows].tolist(), t.qid[rows].tolist(), strict=True)]


