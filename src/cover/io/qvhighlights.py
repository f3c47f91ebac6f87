"""QVHighlights / Moment-DETR / Lighthouse JSON-lines: predictions and ground truth.

Prediction rows: ``qid``, ``vid``, ``pred_relevant_windows`` (``[[s, e, score], ...]``),
optionally ``pred_saliency_scores`` (one float per clip), ``duration``,
``start_std``/``end_std``. The top-1 interval is the highest-scoring window (ties:
the earlier one in the list), not "the first one".

Ground-truth rows: ``qid``, ``vid``, ``duration``, ``relevant_windows``
(``[[s, e], ...]``), optionally ``query``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.relevance import SALIENCY
from cover.data.rules import (
    DURATION_RULE,
    PRED_REVERSED,
    TRUTH_NONFINITE,
    TRUTH_REVERSED,
    check_clip,
    nonfinite_windows,
    reversed_windows,
)
from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable
from cover.errors import InputError, RowProblem
from cover.intervals import Intervals
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
    id_problem,
    json_text,
    number_value,
    raise_on_rejections,
    read_json_rows,
)
from cover.io.saliency_labels import label_problems, saliency_labels
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
    if win.shape[0] and int(lengths.max()) == 1:  # one window or none a row: no ranking
        one = lengths == 1
        ps[one], pe[one] = win[:, 0], win[:, 1]
    elif win.shape[0]:
        r = row_ids(offsets)
        order = np.lexsort((np.arange(r.size), -win[:, 2], r))
        first = order[np.r_[True, r[order][1:] != r[order][:-1]]]
        ps[r[first]] = win[first, 0]
        pe[r[first]] = win[first, 1]
    return ps, pe


@dataclass(frozen=True)
class Loaded:
    """A table read from a file, what was wrong with it, and the rows set aside.

    ``rejected`` maps line -> the original row (dict, or raw text when the line was
    not JSON) of every rejected row, so writers can echo every input row back.
    ``relevance`` says where the table's relevance signal came from: the file's own
    saliency, or its scored proposals (:mod:`cover.data.relevance`).
    """

    table: GroundingTable
    problems: list[RowProblem]
    rejected: dict[int, Any]
    relevance: str = SALIENCY

    @property
    def n_rejected(self) -> int:
        return len(self.rejected)


def read_predictions(
    path: str | Path, *, clip: float = DEFAULT_CLIP_SECONDS, on_error: OnError = "raise"
) -> Loaded:
    """Read a Moment-DETR-style prediction file into a :class:`GroundingTable`.

    A row with no window is a refusal (certified as the whole video). Rows with a
    non-finite number, a window with ``s > e``, a bad duration, a duplicate qid or a
    missing field are rejected with a reason; under ``on_error='raise'`` they raise.
    ``clip`` (seconds per relevance value) must be a finite number > 0.
    """
    check_clip(clip)
    return predictions_from_rows(read_json_rows(path), clip=clip, on_error=on_error)


def predictions_from_rows(raw: RawRows, *, clip: float = DEFAULT_CLIP_SECONDS,
                          on_error: OnError = "raise") -> Loaded:
    """The checks and columns of :func:`read_predictions` on rows already parsed (a
    whole file, or one batch of a streamed file)."""
    check_required(raw, ("qid", "vid"))
    check_ids(raw)
    check_unique_qids(raw)
    no_pred = np.array(
        ["pred_relevant_windows" not in r and "pred_saliency_scores" not in r
         for r in raw.records], dtype=bool)
    reject_rows(raw, first_reason([
        (no_pred, "missing field: pred_relevant_windows (and no pred_saliency_scores)")]))

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
    sal2, soff = trim_ragged(keep, sal[:, None], soff)
    has_std = bool(np.isfinite(std_s[keep]).any())

    ps, pe = top1(win, woff)

    table = table_of(
        raw,
        duration=duration[keep],
        pred_start=ps,
        pred_end=pe,
        relevance=Ragged(sal2[:, 0], soff),
        clip=float(clip),
        start_std=std_s[keep] if has_std else None,
        end_std=std_e[keep] if has_std else None,
        pred_windows=Ragged(win, woff),
    )
    raise_on_rejections(raw.problems, on_error, raw.path)
    return Loaded(table, raw.problems, raw.rejected)


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
        (segment_any(~np.isfinite(sal), soff), "non-finite number in pred_saliency_scores"),
        (reversed_windows(win[:, 0], win[:, 1], woff), PRED_REVERSED),
        (bad_number(*duration, positive=True), DURATION_RULE),
        (bad_number(*std_s, positive=False), "start_std must be a finite number >= 0"),
        (bad_number(*std_e, positive=False), "end_std must be a finite number >= 0"),
    ]


def truth_rules(duration: NDArray[np.float64], win: NDArray[np.float64],
                woff: NDArray[np.int64]) -> list[tuple[NDArray[np.bool_], str]]:
    """The rules a ground-truth row's numbers obey, as ``(bad rows, why)`` in the order
    they are checked (the bulk read, :mod:`cover.io.gt_lean`, keeps a file only when no
    row breaks one)."""
    return [
        (bad_number(duration, np.ones(duration.size, dtype=bool), positive=True),
         DURATION_RULE),
        (np.diff(woff) == 0, "relevant_windows is empty (no true moment)"),
        (nonfinite_windows(win[:, 0], win[:, 1], woff), TRUTH_NONFINITE),
        (reversed_windows(win[:, 0], win[:, 1], woff), TRUTH_REVERSED),
    ]


def read_ground_truth(path: str | Path, *, on_error: OnError = "raise") -> Loaded:
    """Read QVHighlights-style ground truth (``relevant_windows``, ``duration``, and
    the highlight labels ``relevant_clip_ids`` / ``saliency_scores`` when present:
    :mod:`cover.io.saliency_labels`).

    Windows partly outside ``[0, T]`` are kept here and clipped (with a count) when
    truth is attached; rows with ``s > e``, non-finite numbers, no window, a bad
    duration, a missing field or a duplicate qid are rejected with a reason.
    """
    raw = read_json_rows(path)
    check_required(raw, ("qid", "vid", "duration", "relevant_windows"))
    check_ids(raw)
    check_unique_qids(raw)
    win, woff = ragged_field(raw, "relevant_windows", (2,), optional=False)
    win = win[:, :2]
    duration, _ = float_field(raw, "duration")
    reasons = first_reason(truth_rules(duration, win, woff))
    keep = reject_rows(raw, label_problems(raw.records) | reasons)
    win, woff = trim_ragged(keep, win, woff)
    table = table_of(raw, duration=duration[keep],
                     truth=Intervals(win[:, 0].copy(), win[:, 1].copy(), woff),
                     truth_saliency=saliency_labels(raw.records))
    raise_on_rejections(raw.problems, on_error, raw.path)
    return Loaded(table, raw.problems, raw.rejected)


def read_durations(path: str | Path) -> tuple[NDArray[np.str_], NDArray[np.float64]]:
    """``(vid, duration)`` from any JSON-lines annotation file with those two fields
    (QVHighlights' unlabelled release files qualify). Rows lacking either are skipped:
    they cannot say anything about a video's length. Conflicting durations for one
    vid are an error."""
    raw = read_json_rows(path)
    vids: list[str] = []
    durs: list[float] = []
    for rec, line in zip(raw.records, raw.lines.tolist(), strict=True):
        v, d = rec.get("vid"), rec.get("duration")
        if v is None or d is None:
            continue
        why = id_problem(v, "vid")
        if why is not None:
            raise InputError(f"{raw.path}:{line}: {why}")
        t = number_value(d)
        if not (math.isfinite(t) and t > 0):
            raise InputError(f"{raw.path}:{line}: vid {v}: duration must be a finite number "
                             f"> 0, got {json_text(d)}")
        vids.append(str(v))
        durs.append(t)
    if not vids:
        raise InputError(f"{raw.path}: no row has both 'vid' and a numeric 'duration'")
    vid = np.array(vids, dtype=str)
    dur = np.array(durs, dtype=np.float64)
    uniq, inv = np.unique(vid, return_inverse=True)
    lo = np.full(uniq.size, np.inf)
    hi = np.full(uniq.size, -np.inf)
    np.minimum.at(lo, inv, dur)
    np.maximum.at(hi, inv, dur)
    clash = np.flatnonzero(hi - lo > 1e-6)
    if clash.size:
        raise InputError(f"{raw.path}: vid {uniq[clash[0]]} has conflicting durations "
                         f"({lo[clash[0]]} and {hi[clash[0]]})")
    return uniq, lo
