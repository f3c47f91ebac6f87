"""Moment-DETR prediction rows already parsed, checked and made a table row by row
(:func:`predictions_from_rows`): the rules every prediction read obeys, the one
reference the bulk reads (:mod:`cover.io.jsonl_batch`) either equal or defer to.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from cover.data.relevance import SALIENCY
from cover.data.rules import (
    DURATION_RULE,
    PRED_REVERSED,
    SALIENCY_NONFINITE,
    reversed_windows,
)
from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable
from cover.errors import RowProblem
from cover.io.fields import (
    bad_number,
    first_reason,
    float_field,
    ragged_field,
    reject_rows,
    table_of,
    trim_ragged,
)
from cover.io.jsonl import (
    OnError,
    RawRows,
    check_ids,
    check_required,
    check_unique_qids,
    raise_on_rejections,
)
from cover.io.row_checks import RejectedRows
from cover.ragged import Ragged, row_ids, segment_any


def top1(win: NDArray[np.float64], offsets: NDArray[np.int64]) -> tuple[
    NDArray[np.float64], NDArray[np.float64]
]:
    """``(s_hat, e_hat)`` of the highest-scoring window per row (``win`` columns are
    start, end, score); ties keep list order; NaN for rows without windows."""
    n = offsets.size - 1
    ps = np.full(n, np.nan)
    pe = np.full(n, np.nan)
    lengths = np.diff(offsets)
    if not win.shape[0]:
        return ps, pe
    if int(lengths.max()) == 1:  # one window or none a row: no ranking
        one = lengths == 1
        ps[one], pe[one] = win[:, 0], win[:, 1]
    elif not np.isnan(win[:, 2]).any():  # no sort: the first window scoring its row's best
        full = np.flatnonzero(lengths)
        at = offsets[full]
        best = np.repeat(np.maximum.reduceat(win[:, 2], at), lengths[full])
        idx = np.where(win[:, 2] == best, np.arange(win.shape[0]), win.shape[0])
        first = np.minimum.reduceat(idx, at)
        ps[full], pe[full] = win[first, 0], win[first, 1]
    else:  # a NaN score ranks below every number, as the sort puts it
        r = row_ids(offsets)
        order = np.lexsort((np.arange(r.size), -win[:, 2], r))
        first = order[np.r_[True, r[order][1:] != r[order][:-1]]]
        ps[r[first]] = win[first, 0]
        pe[r[first]] = win[first, 1]
    return ps, pe


@dataclass(frozen=True)
class Loaded:
    """A table read from a file, what was wrong with it, and the rows set aside.

    ``rejected`` maps ``(line, qid)`` (:attr:`cover.errors.RowProblem.key`: the rows
    of a document may share a line) -> the original row (dict, or raw text when the
    line was not JSON) of every rejected row, so writers can echo every input row back.
    ``relevance`` says where the table's relevance signal came from: the file's own
    saliency, or its scored proposals (:mod:`cover.data.relevance`). ``claims``: the
    ``(qids, lines)`` of every row the duplicate rule kept, rejected later or not (a
    row rejected for its numbers still holds its qid: a later repeat of it is a
    duplicate, as in a whole read), in line order; None: the table's rows (no row was
    rejected after that rule). A stream applies the rule across batches with them
    (:func:`cover.io.batch_join.across_batches`).
    """

    table: GroundingTable
    problems: list[RowProblem]
    rejected: RejectedRows
    relevance: str = SALIENCY
    claims: tuple[NDArray[np.str_], NDArray[np.int64]] | None = None

    @property
    def n_rejected(self) -> int:
        """Rows set aside: one rejected problem each."""
        return sum(p.action == "rejected" for p in self.problems)


def predictions_from_rows(raw: RawRows, *, clip: float = DEFAULT_CLIP_SECONDS,
                          on_error: OnError = "raise") -> Loaded:
    """The checks and columns of :func:`cover.io.qvhighlights.read_predictions` on rows
    already parsed (a whole file, or one batch of a streamed file)."""
    check_required(raw, ("qid", "vid"))
    check_ids(raw)
    claims = (check_unique_qids(raw), raw.lines.copy())
    reject_rows(raw, {i: "missing field: pred_relevant_windows (and no pred_saliency_scores)"
                      for i, r in enumerate(raw.records)
                      if "pred_relevant_windows" not in r and "pred_saliency_scores" not in r})

    win, woff = ragged_field(raw, "pred_relevant_windows", (2, 3), optional=True)
    win_lines = raw.lines
    sal, soff = ragged_field(raw, "pred_saliency_scores", (), optional=True)
    sal = sal[:, 0]
    if raw.lines.size != win_lines.size:  # rows rejected for their saliency: and windows
        win, woff = trim_ragged(np.isin(win_lines, raw.lines), win, woff)
    duration, has_dur = float_field(raw, "duration")
    std_s, has_s = float_field(raw, "start_std")
    std_e, has_e = float_field(raw, "end_std")
    # Vectorised validity checks over all windows and clips at once.
    keep = reject_rows(raw, first_reason(prediction_rules(
        win, woff, sal, soff, (duration, has_dur), (std_s, has_s), (std_e, has_e))))
    win, woff = trim_ragged(keep, win, woff)
    sal, soff = trim_ragged(keep, sal, soff)
    has_std = bool(np.isfinite(std_s[keep]).any())

    ps, pe = top1(win, woff)
    table = table_of(raw, duration=duration[keep], pred_start=ps, pred_end=pe,
                     relevance=Ragged(sal, soff), clip=float(clip),
                     start_std=std_s[keep] if has_std else None,
                     end_std=std_e[keep] if has_std else None, pred_windows=Ragged(win, woff))
    raise_on_rejections(raw.problems, on_error, raw.path)
    return Loaded(table, raw.problems, raw.rejected,
                  claims=None if claims[1].size == len(table) else claims)


Column = tuple[NDArray[np.float64], NDArray[np.bool_]]


def prediction_rules(win: NDArray[np.float64], woff: NDArray[np.int64],
                     sal: NDArray[np.float64], soff: NDArray[np.int64], duration: Column,
                     std_s: Column, std_e: Column) -> list[tuple[NDArray[np.bool_], str]]:
    """The rules a prediction row's numbers obey, as ``(bad rows, why)`` in the order
    they are checked; the bulk read (:mod:`cover.io.jsonl_batch`) keeps a batch only when
    no row breaks one. ``duration`` and the stds are ``(values, present)``."""
    return [
        (segment_any(~np.isfinite(win).all(axis=1), woff),
         "non-finite number (NaN/inf) in pred_relevant_windows"),
        (segment_any(~np.isfinite(sal), soff), SALIENCY_NONFINITE),
        (reversed_windows(win[:, 0], win[:, 1], woff), PRED_REVERSED),
        (bad_number(*duration, positive=True), DURATION_RULE),
        (bad_number(*std_s, positive=False), "start_std must be a finite number >= 0"),
        (bad_number(*std_e, positive=False), "end_std must be a finite number >= 0"),
    ]
