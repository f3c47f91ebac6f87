"""Utility study: the paper's definitions by default (envelope point-IoU, strict
retention), the other definitions as named options."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import cover
from cover.metrics import point_iou
from cover.studies.utility import IOU_DEFINITIONS, RETENTION_RULES, _retained, utility
from study_pairs import real_pair, synthetic_pair


def test_point_iou_envelope_against_windows() -> None:
    table = cover.GroundingTable.from_arrays(
        qid=[0, 1], duration=100.0, pred_start=[10.0, 0.0], pred_end=[30.0, 10.0],
        truth=cover.Intervals.from_lists([[[10, 20], [25, 30]], [[0, 10]]]))
    # Row 0: the prediction is the envelope [10, 30]; the best window overlaps half of it.
    assert point_iou(table).tolist() == [0.5, 1.0]
    assert point_iou(table, "envelope").tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="unknown truth target"):
        point_iou(table, "union")


def test_strict_retention_keeps_exactly_the_share_ties_keep_more() -> None:
    width = np.array([5.0, 1.0, 9.0, 9.0, 9.0, 9.0, 2.0, 9.0, 9.0, 9.0])
    order = np.argsort(width, kind="stable")
    strict, budget = _retained(width, order, 0.5, "strict")
    assert budget == 9.0 and strict.sum() == 5
    # The narrowest rows first; ties at the budget broken by row order.
    assert np.flatnonzero(strict).tolist() == [0, 1, 2, 3, 6]
    ties, _ = _retained(width, order, 0.5, "ties")
    assert ties.all()


def test_defaults_are_the_papers_and_named() -> None:
    pair = synthetic_pair()
    res = utility(pair)
    assert (res.data["iou"], res.data["retention"]) == ("envelope", "strict")
    assert IOU_DEFINITIONS["envelope"] in res.tables[0].caption
    assert RETENTION_RULES["strict"] in res.tables[1].caption
    for c in res.data["cells"]:
        assert [s["retained_share"] for s in c["selective"]] == [
            round(r * c["n"]) / c["n"] for r in (0.2, 0.5, 1.0)]
    other = utility(pair, iou="windows", retention="ties")
    assert IOU_DEFINITIONS["windows"] in other.tables[0].caption
    assert RETENTION_RULES["ties"] in other.tables[1].caption
    with pytest.raises(ValueError, match="iou must be one of envelope, windows"):
        utility(pair, iou="max")


def test_rho_on_qd_detr_qvhighlights(data_dir: Path) -> None:
    """NORM at 0.90: rho = +0.150 with the paper's envelope IoU (paper +0.115), +0.007
    with the max over windows."""
    pair = real_pair(data_dir)
    rho = {c["family"]: c["rho"] for c in utility(pair).data["cells"]}
    assert round(rho["norm"], 3) == 0.150
    windows = {c["family"]: c["rho"] for c in utility(pair, iou="windows").data["cells"]}
    assert round(windows["norm"], 3) == 0.007
