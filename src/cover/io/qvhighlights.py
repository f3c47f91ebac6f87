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

from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable
from cover.errors import InputError, RowProblem
from cover.intervals import Intervals
from cover.io.jsonl import (
    OnError,
    RawRows,
    check_required,
    check_unique_qids,
    field_column,
    object_column,
    raise_on_rejections,
    read_json_rows,
)
from cover.ragged import Ragged, offsets_from_lengths, row_ids, segment_any, take_index


def _ragged_matrix(
    raw: RawRows, key: str, width: tuple[int, ...], *, optional: bool
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Flatten ``rec[key]`` (a list of rows of ``width`` numbers, or of numbers when
    ``width == ()``) over records; reject rows whose value has the wrong shape."""
    arrays: list[NDArray[np.float64]] = []
    reasons: dict[int, str] = {}
    ncol = max(width) if width else 1
    for i, rec in enumerate(raw.records):
        v = rec.get(key)
        if v is None:
            if not optional:
                reasons[i] = f"missing field: {key}"
            arrays.append(np.empty((0, ncol)))
            continue
        try:
            a = np.asarray(v, dtype=np.float64)
        except (TypeError, ValueError):
            reasons[i] = f"{key} must hold numbers"
            arrays.append(np.empty((0, ncol)))
            continue
        if a.size == 0:
            arrays.append(np.empty((0, ncol)))
        elif not width and a.ndim == 1:
            arrays.append(a.reshape(-1, 1))
        elif width and a.ndim == 2 and a.shape[1] in width:
            if a.shape[1] < ncol:  # windows without a score: rank by list order
                a = np.column_stack([a, -np.arange(a.shape[0], dtype=np.float64)])
            arrays.append(a)
        else:
            shape = "[[start, end(, score)], ...]" if width else "[x, ...]"
            reasons[i] = f"{key} must look like {shape}"
            arrays.append(np.empty((0, ncol)))
    if reasons:
        keep = np.ones(len(raw.records), dtype=bool)
        keep[list(reasons)] = False
        arrays = [a for a, k in zip(arrays, keep, strict=True) if k]
        raw.reject(keep, reasons)
    lengths = np.fromiter((a.shape[0] for a in arrays), dtype=np.int64, count=len(arrays))
    flat = np.concatenate(arrays) if arrays else np.empty((0, ncol))
    return flat, offsets_from_lengths(lengths)


def _first_reason(n: int, checks: list[tuple[NDArray[np.bool_], str]]) -> dict[int, str]:
    """Row -> the first failing check's message."""
    reasons: dict[int, str] = {}
    for bad, why in checks:
        for i in np.flatnonzero(bad).tolist():
            reasons.setdefault(i, why)
    return reasons


def _apply(raw: RawRows, reasons: dict[int, str]) -> NDArray[np.bool_]:
    """Reject the rows in ``reasons``; returns the keep mask over the rows before."""
    keep = np.ones(len(raw.records), dtype=bool)
    if reasons:
        keep[list(reasons)] = False
        raw.reject(keep, reasons)
    return keep


def _trim(keep: NDArray[np.bool_], flat: NDArray[np.float64],
          offsets: NDArray[np.int64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Drop the ragged rows where ``keep`` is False."""
    flat_idx, new_off = take_index(offsets, np.flatnonzero(keep))
    return flat[flat_idx], new_off


def _float_field(raw: RawRows, key: str) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """A scalar float column and where it is present; values that are present but not
    numbers (or are NaN/inf) come back as NaN with ``present`` set, to be rejected."""
    out = np.full(len(raw.records), np.nan)
    present = np.zeros(len(raw.records), dtype=bool)
    for i, rec in enumerate(raw.records):
        v = rec.get(key)
        if v is None:
            continue
        present[i] = True
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[i] = float(v)
    return out, present


def _bad_number(values: NDArray[np.float64], present: NDArray[np.bool_], *,
                positive: bool) -> NDArray[np.bool_]:
    """Present but not a finite number (> 0 when ``positive``, else >= 0)."""
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(values) & ((values > 0) if positive else (values >= 0))
    return present & ~ok


def top1(win: NDArray[np.float64], offsets: NDArray[np.int64]) -> tuple[
    NDArray[np.float64], NDArray[np.float64]
]:
    """``(s_hat, e_hat)`` of the highest-scoring window per row (``win`` columns are
    start, end, score); ties keep list order; NaN for rows without windows."""
    n = offsets.size - 1
    ps = np.full(n, np.nan)
    pe = np.full(n, np.nan)
    if win.shape[0]:
        r = row_ids(offsets)
        order = np.lexsort((np.arange(r.size), -win[:, 2], r))
        first = order[np.r_[True, r[order][1:] != r[order][:-1]]]
        ps[r[first]] = win[first, 0]
        pe[r[first]] = win[first, 1]
    return ps, pe


def table_of(raw: RawRows, **columns: Any) -> GroundingTable:
    """A table of the rows kept in ``raw``: qid, vid (the qid where absent), query,
    line, source and the records come from ``raw``; ``columns`` give the rest, and
    absent predictions / relevance default to none (refusals)."""
    n = len(raw.records)
    qid = np.array([str(rec["qid"]) for rec in raw.records], dtype=str)
    base: dict[str, Any] = {
        "qid": qid,
        "vid": np.array([str(rec.get("vid", rec["qid"])) for rec in raw.records], dtype=str),
        "pred_start": np.full(n, np.nan),
        "pred_end": np.full(n, np.nan),
        "relevance": Ragged(np.empty(0), np.zeros(n + 1, dtype=np.int64)),
        "line": raw.lines,
        "source": raw.path,
        "query": field_column(raw.records, "query"),
        "records": object_column(raw.records),
    }
    return GroundingTable(**(base | columns))


@dataclass(frozen=True)
class Loaded:
    """A table read from a file, what was wrong with it, and the rows set aside.

    ``rejected`` maps line -> the original row (dict, or raw text when the line was
    not JSON) of every rejected row, so writers can echo every input row back.
    """

    table: GroundingTable
    problems: list[RowProblem]
    rejected: dict[int, Any]

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
    """
    raw = read_json_rows(path)
    check_required(raw, ("qid", "vid"))
    check_unique_qids(raw)
    no_pred = np.array(
        ["pred_relevant_windows" not in r and "pred_saliency_scores" not in r
         for r in raw.records], dtype=bool)
    _apply(raw, _first_reason(len(raw.records), [
        (no_pred, "missing field: pred_relevant_windows (and no pred_saliency_scores)")]))

    win, woff = _ragged_matrix(raw, "pred_relevant_windows", (2, 3), optional=True)
    sal, soff = _ragged_matrix(raw, "pred_saliency_scores", (), optional=True)
    sal = sal[:, 0]
    duration, has_dur = _float_field(raw, "duration")
    std_s, has_s = _float_field(raw, "start_std")
    std_e, has_e = _float_field(raw, "end_std")
    # Vectorised validity checks over all windows and clips at once.
    keep = _apply(raw, _first_reason(len(raw.records), [
        (segment_any(~np.isfinite(win).all(axis=1), woff),
         "non-finite number (NaN/inf) in pred_relevant_windows"),
        (segment_any(~np.isfinite(sal), soff), "non-finite number in pred_saliency_scores"),
        (segment_any(win[:, 0] > win[:, 1], woff), "a predicted window has start > end"),
        (_bad_number(duration, has_dur, positive=True), "duration must be a finite number > 0"),
        (_bad_number(std_s, has_s, positive=False), "start_std must be a finite number >= 0"),
        (_bad_number(std_e, has_e, positive=False), "end_std must be a finite number >= 0"),
    ]))
    win, woff = _trim(keep, win, woff)
    sal2, soff = _trim(keep, sal[:, None], soff)
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
    )
    raise_on_rejections(raw.problems, on_error, raw.path)
    return Loaded(table, raw.problems, raw.rejected)


def read_ground_truth(path: str | Path, *, on_error: OnError = "raise") -> Loaded:
    """Read QVHighlights-style ground truth (``relevant_windows``, ``duration``).

    Windows partly outside ``[0, T]`` are kept here and clipped (with a count) when
    truth is attached; rows with ``s > e``, non-finite numbers, no window, a bad
    duration, a missing field or a duplicate qid are rejected with a reason.
    """
    raw = read_json_rows(path)
    check_required(raw, ("qid", "vid", "duration", "relevant_windows"))
    check_unique_qids(raw)
    win, woff = _ragged_matrix(raw, "relevant_windows", (2,), optional=False)
    win = win[:, :2]
    duration, _ = _float_field(raw, "duration")
    keep = _apply(raw, _first_reason(len(raw.records), [
        (_bad_number(duration, np.ones(duration.size, dtype=bool), positive=True),
         "duration must be a finite number > 0"),
        (np.diff(woff) == 0, "relevant_windows is empty (no true moment)"),
        (segment_any(~np.isfinite(win).all(axis=1), woff), "non-finite number in a window"),
        (segment_any(win[:, 0] > win[:, 1], woff), "a true window has start > end"),
    ]))
    win, woff = _trim(keep, win, woff)
    table = table_of(raw, duration=duration[keep],
                     truth=Intervals(win[:, 0].copy(), win[:, 1].copy(), woff))
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
        if not (isinstance(d, (int, float)) and not isinstance(d, bool)
                and math.isfinite(d) and d > 0):
            raise InputError(f"{raw.path}:{line}: vid {v}: duration must be a finite number "
                             f"> 0, got {d!r}")
        vids.append(str(v))
        durs.append(float(d))
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
