"""A labelled table in one call: predictions + ground truth, read, checked and joined."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from cover.data.join import index_of
from cover.data.relevance import PROPOSALS, rebuild_relevance, signal_rule
from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable
from cover.errors import InputError, RowProblem, check_on_error
from cover.io import formats
from cover.io.batch_join import QidList, join_batches, rejected_qids, row_problems
from cover.io.charades_rf import NO_MOMENT, no_moment_qids
from cover.io.jsonl import OnError
from cover.io.order_join import join_truth
from cover.io.qids import read_qid_lines
from cover.io.qvhighlights import Loaded


@dataclass(frozen=True)
class Labelled:
    """A joined labelled table, every problem found reading it, and where its
    relevance signal came from (``saliency`` or ``proposals``: what a calibrator fitted
    on it records, :class:`cover.calibrate.calibrator.Calibrator`)."""

    table: GroundingTable
    problems: list[RowProblem]
    relevance: str
    #: ``(the ground truth's qids, the same queries' names in the predictions)`` when the
    #: join renamed the ground truth (:func:`truth_named_as_predictions`), else None.
    renamed: tuple[np.ndarray, np.ndarray] | None = None

    def truth_qids(self) -> np.ndarray:
        """Each row's qid in the ground truth's own names (the table's are the
        predictions' when the join renamed them): what two grounders share."""
        if self.renamed is None:
            return self.table.qid
        old, new = self.renamed
        j, hit = index_of(new.astype(str), self.table.qid)
        return np.where(hit, old.astype(str)[j], self.table.qid)

    def named_as(self, other: Labelled) -> GroundingTable:
        """This table with each row named as ``other`` (read against the same ground
        truth) names the same query, where ``other`` has it: two grounders that name
        their queries otherwise (TGN's ``<vid>-<k>``, the ground truth's line numbers)."""
        j, hit = index_of(other.truth_qids(), self.truth_qids())
        return replace(self.table, qid=np.where(hit, other.table.qid[j], self.table.qid))


def load_labelled(preds: str | Path, gt: str | Path, **kw: Any
                  ) -> tuple[GroundingTable, list[RowProblem]]:
    """:func:`read_labelled` as ``(table, problems)`` (the same keywords)."""
    got = read_labelled(preds, gt, **kw)
    return got.table, got.problems


def read_labelled(
    preds: str | Path,
    gt: str | Path,
    *,
    qids: str | Path | None = None,
    clip: float = DEFAULT_CLIP_SECONDS,
    strict: bool = False,
    on_error: OnError = "raise",
    pred_format: str | None = None,
    gt_format: str | None = None,
    gt_durations: str | Path | None = None,
    columns: str | dict[str, str] | None = None,
    gt_columns: str | dict[str, str] | None = None,
    log: Callable[[str], None] | None = None,
    relevance_from: str | None = None,
    max_duration: float | None = None,
    keep_records: bool = True,
) -> Labelled:
    """Read both files (format detected, or ``pred_format`` / ``gt_format``, or a
    ``columns`` mapping; :mod:`cover.io.formats`), keep the query ids in ``qids`` (a
    file, one per line) when given, and join on qid
    (:func:`cover.data.join.attach_truth`).

    When either format numbers its queries by position and the qids do not agree,
    rows are joined on (vid, query text) instead (:mod:`cover.io.content_join`).
    Ground-truth queries with no moment (Charades-RF) and their predictions are set
    aside as ``noted``. ``log`` receives one line per file naming the format read.
    A mapping that names no vid takes each row's from the ground truth, by qid, and
    says so. ``relevance_from="proposals"`` builds the relevance signal from the scored
    windows (:mod:`cover.data.relevance`), over ``[0, T]`` once T is known from the
    ground truth. ``max_duration`` keeps the queries on videos of at most that many
    seconds (ground-truth T; the COVER paper's ActivityNet protocol: 150), counted.
    ``keep_records=False`` lets the prediction reader drop the parsed rows (the table's
    ``records`` may be None): for a caller that reads none of their fields.

    Returns the joined table, every problem found on the way (a listed qid found in
    neither file is one) and the relevance source. Under ``on_error='raise'`` a
    rejected row raises; a ground-truth row without a prediction gets its own message,
    because a silently dropped query biases calibration and the usual cause is
    calibrating on a subset without ``qids``.
    """
    check_on_error(on_error)
    say = log or (lambda _msg: None)
    # The ground truth first, as a stream must read it (its index before any batch): a
    # bad row in both files stops the run at the same file on either path.
    g = formats.read(gt, "ground_truth", format=gt_format,
                     options=formats.Options(on_error=on_error, durations=gt_durations,
                                             columns=gt_columns))
    p = formats.read(preds, "predictions", format=pred_format,
                     options=formats.Options(clip=clip, on_error=on_error, columns=columns,
                                             relevance_from=relevance_from,
                                             keep_records=keep_records))
    say(f"{preds}: {p.format} ({len(p.loaded.table)} rows)")
    say(f"{gt}: {g.format} ({len(g.loaded.table)} rows)")
    ptab, gtab = p.loaded.table, g.loaded.table
    problems: list[RowProblem] = []
    empty = no_moment_qids(g.loaded)
    if empty:
        drop = np.isin(ptab.qid, np.array(sorted(empty), dtype=str))
        problems += row_problems(ptab, drop, NO_MOMENT, "noted")
        ptab = ptab.take(~drop)
        say(f"{gt}: {len(empty)} queries have no relevant moment; set aside "
            f"({int(drop.sum())} predictions for them)")
    if not p.vid_given:
        ptab = vid_from_truth(ptab, gtab, f"{preds}: the mapping names no vid", gt, say)
    gtab, renamed, held = truth_named_as_predictions(p, g, ptab, say)
    listed = None
    if qids is not None:
        wanted, lines = read_qid_lines(qids)
        if renamed is not None:  # a list made from the ground truth's own qids
            wanted = _translate(wanted, *renamed, keep=ptab.qid)
        listed = QidList(qids, wanted, lines)
    kept: list[GroundingTable] = []
    # One batch, its rows' problems with it (in line order, the join's among them), the
    # truth's first: as a stream tallies them.
    # The claims: a row rejected for its numbers still holds its qid (a listed qid it
    # has is no unknown one), as in a stream.
    problems = join_batches([Loaded(ptab, p.loaded.problems, {}, claims=p.loaded.claims)],
                            gtab, preds=preds,
                            gt_name=gt, qids=listed, strict=strict, on_error=on_error,
                            head=[*g.loaded.problems, *problems],
                            use=kept.append, keep=None,
                            truth_rejected=np.union1d(rejected_qids(g.loaded.problems), held),
                            row_rule=signal_rule(p.loaded.relevance)).kept
    table = kept[0]
    if p.loaded.relevance == PROPOSALS:  # asked for, or the mapping's default
        table = rebuild_relevance(table)  # over [0, T] now that T is known
    if max_duration is not None:
        table = _shorter(table, max_duration, gt, say)
    return Labelled(table, problems, p.loaded.relevance, renamed)


def truth_named_as_predictions(p: formats.Read, g: formats.Read, ptab: GroundingTable,
                               say: Callable[[str], None]
                               ) -> tuple[GroundingTable, tuple[np.ndarray, np.ndarray] | None,
                                          np.ndarray]:
    """The ground truth of ``g`` under the qids of the predictions ``ptab`` (read as
    ``p``) when another join matches more of them than their qids do
    (:func:`cover.io.order_join.join_truth`), said, with ``(old qids, new qids)`` and
    the names of the places its rejected rows hold (an order join's); else the ground
    truth as read, None and no name."""
    none = np.empty(0, dtype=str)
    gtab = g.loaded.table
    # A format numbering queries by position, or text qids (charades_sta_test_<i>: the
    # grounder's own names), may name the ground truth's queries differently: try the
    # joins on content. Numeric qids of two id-keyed files are the ids themselves.
    try_content = not (p.native_qids and g.native_qids) or not _numeric(ptab.qid)
    joined_by = join_truth(ptab, gtab, g.loaded.rejected) if try_content else None
    if joined_by is None or joined_by.gt is gtab:
        return gtab, None, none
    differs = (f"; {joined_by.text_differs} of them with a different query text"
               if joined_by.text_differs else "")
    say(f"joined on {joined_by.how}: {joined_by.matched} of {len(ptab)} predictions "
        f"matched ({joined_by.agree} by qid){differs}")
    return joined_by.gt, (gtab.qid, joined_by.gt.qid), joined_by.rejected


def _translate(wanted: np.ndarray, old: np.ndarray, new: np.ndarray, *,
               keep: np.ndarray) -> np.ndarray:
    """``wanted`` qids that are ground-truth qids renamed by the content join, in their
    new (prediction) names; prediction qids pass through unchanged."""
    order = np.argsort(old, kind="stable")
    pos = np.minimum(np.searchsorted(old[order], wanted), max(old.size - 1, 0))
    hit = (old.size > 0) & (old[order][pos] == wanted) & ~np.isin(wanted, keep)
    return np.where(hit, new[order][pos], wanted)


def vid_from_truth(ptab: GroundingTable, gtab: GroundingTable, why: str, gt: str | Path,
                    say: Callable[[str], None]) -> GroundingTable:
    """``ptab`` with each vid taken from the ground-truth row of the same qid, said."""
    j, hit = index_of(gtab.qid, ptab.qid)
    vid = ptab.vid.astype(object)  # object: a longer vid must not be cut to the qid's width
    vid[hit] = gtab.vid[j[hit]]
    say(f"{why}; took it from {gt} for {int(hit.sum())} of {len(ptab)} rows (by qid)")
    return replace(ptab, vid=vid.astype(str))


def _shorter(table: GroundingTable, max_duration: float, gt: str | Path,
             say: Callable[[str], None]) -> GroundingTable:
    """The rows on videos of at most ``max_duration`` seconds (T from ``gt``), counted."""
    if not max_duration > 0:
        raise InputError(f"--max-duration must be a number of seconds > 0, got {max_duration}")
    keep = table.duration <= max_duration
    say(f"--max-duration {max_duration:g}: kept {int(keep.sum())} of {len(table)} queries "
        f"(videos of at most {max_duration:g} s in {gt})")
    return table.take(np.flatnonzero(keep))


def _numeric(qid: np.ndarray) -> bool:
    try:
        qid.astype(np.float64)
    except ValueError:
        return False
    return True
