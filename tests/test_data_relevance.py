"""The relevance signal from proposals (``cover.data.relevance``): the rule that rejects a
row whose duration would make its signal too long."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from cover.data.relevance import (
    MAX_SIGNAL_CLIPS,
    long_signal_rows,
    rebuild_relevance,
    reject_long_signals,
    signal_clips,
    signal_rule,
)
from cover.data.table import GroundingTable
from cover.errors import InputError
from cover.ragged import Ragged

#: Durations around the bound: ordinary videos, and some whose signal is too long.
DURATIONS = st.one_of(st.floats(1.0, 3_600.0),
                      st.sampled_from([MAX_SIGNAL_CLIPS * 2.0, MAX_SIGNAL_CLIPS * 2.0 + 2.0,
                                       1e9, 1e12]))


def _table(durations: list[float], windows: list[list[tuple[float, float, float]]],
           clip: float) -> GroundingTable:
    n = len(durations)
    t = GroundingTable.from_arrays(qid=np.array([f"q{i}" for i in range(n)]),
                                   duration=np.array(durations), pred_start=np.zeros(n),
                                   pred_end=np.ones(n), clip=clip)
    flat = np.array([w for row in windows for w in row], dtype=np.float64).reshape(-1, 3)
    off = np.concatenate([[0], np.cumsum([len(row) for row in windows])]).astype(np.int64)
    return replace(t, pred_windows=Ragged(flat, off), source="p.json",
                   line=np.arange(1, n + 1, dtype=np.int64))


def _clips(duration: object, clip: float) -> np.ndarray:
    """The signal's clip count: ``ceil(T / clip)``, the quotient rounded to 9 decimals
    first (a T a rounding error past a clip boundary, 30.000000001 s, is 15 clips of 2 s)."""
    return np.ceil(np.round(np.asarray(duration, dtype=np.float64) / clip, 9))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(DURATIONS, st.lists(st.tuples(
    st.floats(0, 100), st.floats(0, 50), st.floats(-1, 1)), min_size=1, max_size=4)),
    min_size=1, max_size=8), st.sampled_from([1.0, 2.0]))
@example(rows=[(1.0000000000000002, [(0.0, 0.0, 0.0)])], clip=1.0)  # one clip, not two
def test_a_row_is_rejected_exactly_when_its_signal_would_be_too_long(rows, clip):
    """Rows whose duration needs more than MAX_SIGNAL_CLIPS clips are rejected, each named
    by its line and qid, the others kept in order; the kept rows build their signal
    (where the whole table raised), and the rule is the one the certify stage and the
    calibration join apply for relevance from proposals."""
    durations = [d for d, _ in rows]
    windows = [[(s, s + w, c) for s, w, c in ws] for _, ws in rows]
    table = _table(durations, windows, clip)
    too_long = _clips(durations, clip) > MAX_SIGNAL_CLIPS
    kept, problems = reject_long_signals(table)
    assert kept.qid.tolist() == table.qid[~too_long].tolist()
    assert [(p.line, p.qid) for p in problems] == [
        (i + 1, f"q{i}") for i in np.flatnonzero(too_long).tolist()]
    assert all(p.action == "rejected" and p.path == "p.json" and
               f"would need more than {MAX_SIGNAL_CLIPS:,} clips of {clip:g} s" in p.problem
               for p in problems)
    # an unlabelled row's duration is its own (or --videos'): not called the truth's
    assert not any("ground truth" in p.problem for p in problems)
    # the kept rows build their signal (those at the bound itself, 32 MB each, left out)
    small = kept.take(kept.duration / clip < 1e5)
    assert rebuild_relevance(small).relevance.lengths.tolist() == _clips(
        small.duration, clip).astype(np.int64).tolist()
    if too_long.any():
        with pytest.raises(InputError, match=r"p\.json:\d+ \(qid=q\d+\)"):
            rebuild_relevance(table)
    assert signal_rule("proposals") is reject_long_signals
    assert signal_rule("saliency") is None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.one_of(DURATIONS, st.sampled_from([float("nan"), 0.0, -5.0])),
                          st.lists(st.tuples(st.floats(0, 100), st.sampled_from(
                              [1.0, 50.0, MAX_SIGNAL_CLIPS * 4.0]), st.floats(-1, 1)),
                              min_size=1, max_size=3)), min_size=1, max_size=8),
       st.sampled_from([1.0, 2.0]))
def test_the_rows_too_long_are_those_whose_signal_would_be(rows, clip):
    """long_signal_rows reads T alone: it marks exactly the rows whose signal length
    (signal_clips, which reads the windows too) passes the bound. A row whose T is not
    known is never marked, however far its proposals reach: its signal stands in, capped,
    until T is known."""
    durations = [d for d, _ in rows]
    windows = [[(s, s + w, c) for s, w, c in ws] for _, ws in rows]
    # an unknown T (NaN, or not > 0) as a table holds it before T is known
    table = replace(_table([1.0] * len(rows), windows, clip),
                    duration=np.array(durations, dtype=np.float64))
    w = table.pred_windows
    assert w is not None
    lengths, _, _ = signal_clips(w.values, w.offsets, table.duration, clip)
    over = long_signal_rows(table)
    assert over.tolist() == (lengths > MAX_SIGNAL_CLIPS).tolist()
    assert not over[~(np.array(durations) > 0)].any()
