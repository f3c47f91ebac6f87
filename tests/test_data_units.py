"""Exchangeability units from vids: computed without copying the vid text first, and
never handing back (to be frozen) the caller's own array."""

from __future__ import annotations

import numpy as np

from cover.data.units import split_units


def test_units_are_a_new_array_and_the_vids_stay_writeable():
    for vid in (np.array(["abc_10.0_160.0", "abc_0.0_150.0", "other"]), np.array([], dtype=str)):
        units = split_units(vid)
        units.flags.writeable = False  # as GroundingTable.units freezes its copy
        assert not np.shares_memory(units, vid) and vid.flags.writeable
    assert split_units(np.array(["abc_10.0_160.0", "other"])).tolist() == ["abc", "other"]
