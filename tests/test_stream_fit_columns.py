"""What a streamed calibration keeps (``cover.stream.fit_columns``): each vid's unit as
a code, ranked as the units' text."""

from __future__ import annotations

import numpy as np
import pytest

from cover.io.qvhighlights import read_ground_truth


@pytest.fixture(scope="module")
def gt(qvh_gt):
    return read_ground_truth(qvh_gt).table


def test_unit_codes_rank_units_as_their_text(gt):
    """Per vid, its unit's rank among the units (QVHighlights windows of one YouTube
    video share one), as np.unique of the units' text orders them."""
    from cover.bands import unit_design_effect
    from cover.data.units import split_units
    from cover.stream import fit_columns as mod
    from cover.utf8 import as_bytes

    vids = np.unique(gt.vid)
    for size in (1, 7, 1 << 16):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(mod, "_UNIT_SLICE", size)
            codes = mod.unit_codes(as_bytes(vids))
        want = np.unique(split_units(vids), return_inverse=True)[1]
        assert codes.tolist() == want.tolist()
    rows = np.searchsorted(vids, gt.vid)
    y = np.arange(len(gt)) % 3 > 0
    assert unit_design_effect(y, codes[rows]) == unit_design_effect(y, gt.units)
