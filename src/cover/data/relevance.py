"""A per-clip relevance signal built from scored proposals, for SLS on grounders that
write no saliency (TGN's ten anchors, Moment-DETR's ranked windows).

Rule: clip ``c`` (``[c*clip, (c+1)*clip)``) gets the best score of the proposals that
overlap it; a clip no proposal overlaps gets the floor, 0 (or the row's lowest score
when its scores go below 0). So the super-level set at any level contains every
proposal scoring at least that level, whole, and a level low enough takes the whole
video. The floor is the row's own, so a row's signal depends on that row alone: the
same whichever rows share its batch, file or path (``cover certify`` builds it batch by
batch, once the durations are known). The signal covers ``[0, T]`` where T is known,
else up to the furthest proposal end, or none when that is past ``MAX_SIGNAL_CLIPS``
clips (it stands in until T is known; clips past the signal never enter a region:
:func:`cover.scores.superlevel_score`).

Cost: one pass over the (proposal, clip) pairs, ``sum over proposals of (clips it
spans)`` values, vectorised (no Python loop over rows or proposals); memory is the
same count of int64 indices. A row's signal holds at most :data:`MAX_SIGNAL_CLIPS`
clips (97 days of 2-second clips): a duration that would need more (in the wrong unit,
e.g. milliseconds) is an error naming its row, before anything is allocated, never a
process the machine runs out of memory for; where rows get a fate each (``cover
certify``), such a row is rejected with that reason (:func:`reject_long_signals`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.table import GroundingTable
from cover.errors import InputError, RowProblem
from cover.ragged import Ragged, offsets_from_lengths, row_ids, segment_max, segment_min

#: Where an SLS relevance signal comes from: the grounder's own per-clip saliency, or
#: its scored proposals (this module). ``--relevance-from`` and the calibrator file's
#: ``relevance`` field take these names.
SALIENCY = "saliency"
PROPOSALS = "proposals"
RELEVANCE_SOURCES = (SALIENCY, PROPOSALS)

#: The most clips one row's signal from proposals may hold (32 MB of float64).
MAX_SIGNAL_CLIPS = 1 << 22
#: What a signal from proposals is called in the reason a row has none.
FROM_PROPOSALS = "a relevance signal from proposals"


def require_signal_clips(table: GroundingTable, rows: NDArray[np.int64],
                         clips: NDArray[Any], what: str, clip: float) -> None:
    """An :class:`InputError` naming the first of ``rows`` (of ``table``) whose ``clips``
    (a count over its duration) are more than :data:`MAX_SIGNAL_CLIPS`: its duration is
    surely in the wrong unit, and the array would not fit in memory."""
    over = ~(np.asarray(clips) <= MAX_SIGNAL_CLIPS)  # NaN counts as over
    if over.any():
        i = int(rows[np.argmax(over)])
        raise InputError(f"{table.where(i)}: {_too_long(what, table, i, clip)}")


def _too_long(what: str, table: GroundingTable, i: int, clip: float) -> str:
    """Why row ``i``'s signal of ``clip``-second clips over its duration cannot be built.
    The row is named by its prediction's line; a labelled row's duration is its ground
    truth's (the join takes it from there), so the message says whose it is."""
    whose = " (its ground truth's)" if table.truth is not None else ""
    return (f"{what} over its duration of {float(table.duration[i]):g} s{whose} would need "
            f"more than {MAX_SIGNAL_CLIPS:,} clips of {clip:g} s (no video is that long: is "
            "it in seconds?)")


def signal_rule(relevance: str) -> Callable[[GroundingTable], tuple[
        GroundingTable, list[RowProblem]]] | None:
    """The rule a joined row meets for its relevance: from proposals, a signal its
    duration does not make too long (:func:`reject_long_signals`); else none."""
    return reject_long_signals if relevance == PROPOSALS else None


def long_signal_rows(table: GroundingTable) -> NDArray[np.bool_]:
    """The rows whose relevance from proposals over ``[0, T]`` would need more than
    :data:`MAX_SIGNAL_CLIPS` clips (none without proposals): the rule
    :func:`rebuild_relevance` raises on. Only a known T can pass the bound
    (:func:`signal_clips` caps a signal that stands in for an unknown one), so the
    windows are not read."""
    if table.pred_windows is None:
        return np.zeros(len(table), dtype=bool)
    t = np.asarray(table.duration, dtype=np.float64)
    known = _known(t)
    return known & ~(_clip_count(np.where(known, t, 0.0), table.clip) <= MAX_SIGNAL_CLIPS)


def _known(t: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Where the duration T is known (a finite number > 0)."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(t) & (t > 0)


def _clip_count(span: NDArray[np.float64], clip: float) -> NDArray[np.float64]:
    """``ceil(span / clip)`` clips, as floats (a count past int64 must not wrap round to a
    small one; NaN stays NaN), rounded first so that 30.000000001 s is 15 clips of 2 s."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.ceil(np.round(span / clip, 9))


def long_signal_problems(table: GroundingTable, over: NDArray[np.bool_]) -> list[RowProblem]:
    """A rejection naming each row of ``over`` (:func:`long_signal_rows`) and why."""
    lines = table.line if table.line is not None else np.zeros(len(table), dtype=np.int64)
    return [RowProblem(table.source, int(lines[i]), str(table.qid[i]),
                       _too_long(FROM_PROPOSALS, table, i, table.clip),
                       "rejected") for i in np.flatnonzero(over).tolist()]


def reject_long_signals(table: GroundingTable) -> tuple[GroundingTable, list[RowProblem]]:
    """``table`` without the rows of :func:`long_signal_rows`, and a rejection naming
    each: that rule a row at a time (as is without proposals)."""
    over = long_signal_rows(table)
    if not over.any():
        return table, []
    return table.take(~over), long_signal_problems(table, over)


def signal_clips(windows: NDArray[np.float64], offsets: NDArray[np.int64],
                 duration: NDArray[np.float64], clip: float
                 ) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.bool_]]:
    """Each row's signal length ``ceil(T / clip)`` (``MAX_SIGNAL_CLIPS + 1`` past that),
    each row's floor, and which windows count (finite, ``start <= end``). Where T is not
    known yet, the signal reaches the furthest proposal end, and none past
    ``MAX_SIGNAL_CLIPS`` clips: it stands in until T is known (every region needs T), and a
    proposal past the video's end is clipped then."""
    w = np.asarray(windows, dtype=np.float64).reshape(-1, 3)
    ok = np.isfinite(w).all(axis=1) & (w[:, 1] >= w[:, 0])
    floor = np.minimum(segment_min(np.where(ok, w[:, 2], np.inf), offsets, empty=0.0), 0.0)
    reach = segment_max(np.where(ok, w[:, 1], -np.inf), offsets, empty=-np.inf)
    t = np.asarray(duration, dtype=np.float64)
    known = _known(t)
    clips = _clip_count(np.where(known, t, np.maximum(reach, 0.0)), clip)
    fits = clips <= MAX_SIGNAL_CLIPS  # False for NaN
    lengths = np.where(fits, clips, 0).astype(np.int64)
    lengths[known & ~fits] = MAX_SIGNAL_CLIPS + 1
    return lengths, floor, ok


def proposal_relevance(windows: NDArray[np.float64], offsets: NDArray[np.int64],
                       duration: NDArray[np.float64], clip: float) -> Ragged:
    """Per-clip relevance from ragged scored windows (``windows`` rows are start, end,
    score; row ``i`` owns ``windows[offsets[i]:offsets[i+1]]``); see the module rule."""
    w = np.asarray(windows, dtype=np.float64).reshape(-1, 3)
    lengths, floor, ok = signal_clips(w, offsets, duration, clip)
    if (lengths > MAX_SIGNAL_CLIPS).any():
        i = int(np.argmax(lengths > MAX_SIGNAL_CLIPS))
        raise ValueError(f"row {i}: its relevance signal would hold more than "
                         f"{MAX_SIGNAL_CLIPS:,} clips of {clip:g} s")
    return _signal(w, offsets, clip, lengths, floor, ok)


def _signal(w: NDArray[np.float64], offsets: NDArray[np.int64], clip: float,
            lengths: NDArray[np.int64], floor: NDArray[np.float64], ok: NDArray[np.bool_]
            ) -> Ragged:
    """The signal of :func:`proposal_relevance` from :func:`signal_clips`' columns."""
    r = row_ids(offsets)
    out_off = offsets_from_lengths(lengths)
    values = np.repeat(floor, lengths)
    # Clip span of each proposal, clamped to its row's signal.
    lo = np.floor(w[:, 0] / clip)
    hi = np.ceil(w[:, 1] / clip) - 1
    with np.errstate(invalid="ignore"):
        # Clamped as floats, then cast: a start of 1e300 s must not wrap round in int64.
        lo = np.clip(np.where(ok, lo, 0), 0, lengths[r]).astype(np.int64)
        hi = np.minimum(np.where(ok, np.maximum(hi, lo), -1), lengths[r] - 1).astype(np.int64)
    span = np.where(ok & (hi >= lo), hi - lo + 1, 0)
    pair_off = offsets_from_lengths(span)
    p = row_ids(pair_off)  # the proposal of every (proposal, clip) pair
    c = lo[p] + (np.arange(pair_off[-1], dtype=np.int64) - pair_off[p])
    flat = out_off[r[p]] + c
    np.maximum.at(values, flat, w[p, 2])
    return Ragged(values, out_off)


def rebuild_relevance(table: GroundingTable) -> GroundingTable:
    """``table`` with its relevance built from its scored windows (``pred_windows``)
    over ``[0, T]`` where T is known; as is when it has none."""
    if table.pred_windows is None:
        return table
    w = table.pred_windows
    values = np.asarray(w.values, dtype=np.float64).reshape(-1, 3)
    lengths, floor, ok = signal_clips(values, w.offsets, table.duration, table.clip)
    require_signal_clips(table, np.arange(len(table)), lengths, FROM_PROPOSALS, table.clip)
    return replace(table, relevance=_signal(values, w.offsets, table.clip, lengths, floor, ok))
