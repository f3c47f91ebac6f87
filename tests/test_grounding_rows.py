"""Per-row values of the field's metrics: any subset of rows, taken from them, scores
bit for bit as that subset scored afresh."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cover.grounding_rows as grounding_rows
from cover.grounding_metrics import GroundingSums, grounding_metrics
from cover.grounding_rows import GroundingRows
from cover.ragged import Ragged
from cover.window_matching import rank_by_score, rank_rows_by_score
from test_grounding_metrics import _table, rows

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None)


def _taken(values: GroundingRows, idx: np.ndarray) -> str:
    sums = GroundingSums()
    sums.add_rows(values, idx)
    return repr(sums.finish().to_dict())  # repr: NaN compares equal, floats to the bit


@SETTINGS
@given(rows(), st.randoms(use_true_random=False))
def test_any_subset_in_any_order_scores_as_itself(case, rnd):
    table = _table(*case)
    values = GroundingRows.of(table)
    idx = list(range(len(table)))
    rnd.shuffle(idx)
    idx = np.array(idx[:rnd.randint(0, len(idx))], dtype=np.int64)
    assert _taken(values, idx) == repr(grounding_metrics(table.take(idx)).to_dict())


def test_real_file_with_highlights_every_split_and_any_block_size(qdetr_table,
        qvh_gt: Path, qdetr_preds: Path, monkeypatch: pytest.MonkeyPatch):
    from cover.data.splits import split_by_unit

    table = qdetr_table
    values = GroundingRows.of(table)
    for seed in (0, 3):
        test = split_by_unit(table.units, seed=seed).test
        want = grounding_metrics(table.take(test))
        assert want.highlight is not None and want.highlight.n > 0
        assert _taken(values, np.flatnonzero(test)) == repr(want.to_dict())
    # Worked out in blocks (a stand-in for AP_BLOCK_ROWS on large tables): the same values.
    monkeypatch.setattr(grounding_rows, "AP_BLOCK_ROWS", 97)
    blocked = GroundingRows.of(table)
    assert _taken(blocked, np.arange(len(table))) == _taken(values, np.arange(len(table)))
    assert np.array_equal(blocked.full.ap, values.full.ap)
    assert np.array_equal(blocked.hl_ap["VeryGood"], values.hl_ap["VeryGood"])
    # Summed a block at a time (what a table read whole adds): the same bits and IoU.
    # (the module from sys.modules: ``cover.grounding_metrics`` is also a function of cover)
    monkeypatch.setattr(sys.modules["cover.grounding_metrics"], "AP_BLOCK_ROWS", 97)
    sums = GroundingSums()
    iou = sums.add(table)
    assert repr(sums.finish().to_dict()) == _taken(values, np.arange(len(table)))
    assert np.array_equal(iou, values.full.iou)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from([0.1, 0.5, 0.9]), max_size=4), min_size=1,
                max_size=6))
def test_rank_rows_by_score_names_the_rows_it_reordered(scores):
    vals = np.array([[0.0, 1.0, s] for row in scores for s in row]).reshape(-1, 3)
    off = np.r_[0, np.cumsum([len(r) for r in scores])].astype(np.int64)
    ranked, reordered = rank_rows_by_score(Ragged(vals, off))
    again, n = rank_by_score(Ragged(vals, off))
    assert np.array_equal(ranked.values, again.values)
    assert int(reordered.sum()) == n
    assert reordered.tolist() == [row != sorted(row, reverse=True) for row in scores]


@SETTINGS
@given(rows(), st.randoms(use_true_random=False))
def test_rows_worked_out_in_parts_are_the_rows_worked_out_at_once(case, rnd):
    """GroundingRows.empty + put of rows in any parts and order (a study's table, its
    test rows first, more with each split seed) equals GroundingRows.of the table."""
    table = _table(*case)
    idx = list(range(len(table)))
    rnd.shuffle(idx)
    cut = rnd.randint(0, len(idx))
    built = GroundingRows.empty(len(table))
    for part in (np.array(idx[:cut], dtype=np.int64), np.array(idx[cut:], dtype=np.int64)):
        built.put(part, GroundingRows.of(table.take(part)))
    assert _taken(built, np.arange(len(table))) == _taken(GroundingRows.of(table),
                                                          np.arange(len(table)))
    np.testing.assert_array_equal(built.full.ap, GroundingRows.of(table).full.ap)
