"""Golden checks of the rules on a real grounder (QD-DETR video, QVHighlights val)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from cover.calibrate import Calibrator
from cover.calibrate.rcps import rcps_rank
from cover.data.splits import split_by_unit
from cover.data.table import GroundingTable
from cover.intervals import Intervals
from cover.io.labelled import load_labelled


@pytest.fixture(scope="module")
def table(qdetr_preds: Path, qvh_gt: Path) -> GroundingTable:
    t, _ = load_labelled(str(qdetr_preds), str(qvh_gt), qids=None, clip=2.0, strict=False,
                         on_error="raise")
    return t


def test_golden_thresholds_on_all_rows(table: GroundingTable) -> None:
    assert len(table) == 1550
    split = Calibrator(score="norm", alpha=0.1).fit(table)
    assert (split.k_, split.threshold_) == (1396, pytest.approx(4.25))
    rcps = Calibrator(score="norm", alpha=0.1, rule="rcps").fit(table)
    assert rcps.k_ == rcps_rank(1550, 0.1, 0.1, "binomial") == 1411
    assert rcps.threshold_ == pytest.approx(4.4)
    two = Calibrator(score="norm", alpha=0.1, rule="bonferroni").fit(table)
    rec = two.thresholds_["all"]
    assert rec.sides["start"].k == rec.sides["end"].k == math.ceil(1551 * 0.95) == 1474
    assert rec.sides["start"].value == pytest.approx(13 / 3)
    assert rec.sides["end"].value == pytest.approx(4.4)
    assert two.side_ratio_ == pytest.approx((13 / 3) / 4.4)


@pytest.mark.parametrize("rule", ["split", "bonferroni", "asymmetric", "rcps", "crc"])
def test_every_rule_on_a_held_out_split(rule: str, table: GroundingTable) -> None:
    s = split_by_unit(table.units, cal_frac=0.4, seed=42)
    cal, test = table.take(s.calibration), table.take(s.test)
    c = Calibrator(score="norm", alpha=0.1, rule=rule).fit(cal)
    reg = c.certify(test)
    covered = reg.intervals.contains(Intervals.single(*test.truth_envelope())).mean()
    if rule == "crc":  # controls the uncovered share, so containment can be lower
        inside = reg.intervals.intersection_length(Intervals.single(*test.truth_envelope()))
        ts, te = test.truth_envelope()
        share = np.mean(1 - inside / np.maximum(te - ts, 1e-9))
        assert share <= 0.1 + 0.03
    else:
        assert covered >= 0.9 - 0.03  # one split: within its sampling noise
    assert np.all(reg.length <= test.duration + 1e-9)
