"""Calibration-size subsamples draw exactly n units, whole units at a time."""

from __future__ import annotations

import numpy as np

from cover.studies.calsize import unit_subsamples


def test_unit_subsamples_draw_whole_units() -> None:
    units = np.repeat(np.array([f"u{i}" for i in range(30)]), np.arange(30) % 4 + 1)
    masks = unit_subsamples(units, 7, 20, seed=1)
    assert masks.shape == (20, units.size)
    for m in masks:
        assert np.unique(units[m]).size == 7
        assert not np.isin(units[~m], units[m]).any()
    assert len({m.tobytes() for m in masks}) > 1
