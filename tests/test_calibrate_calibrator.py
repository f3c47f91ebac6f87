"""The Calibrator's per-row thresholds: the one-group shortcut equals the general path."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.calibrate import Calibrator
from test_calibrator_file import make_table


def _general_path(cal: Calibrator, table) -> tuple[np.ndarray, np.ndarray | None]:
    """``row_lams`` through the labelling and lookup it skips for one group."""
    groups = cal.groups
    object.__setattr__(cal, "groups", "not-all")  # any name but "all" takes the long way
    try:
        return cal.row_lams(table)
    finally:
        object.__setattr__(cal, "groups", groups)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 50), rule=st.sampled_from(["split", "bonferroni", "rcps", "crc"]),
       score=st.sampled_from(["norm", "sec", "sls"]))
def test_one_group_shortcut_equals_the_lookup(seed, rule, score):
    if rule == "bonferroni" and score == "sls":
        return  # per-boundary rules need an interval score (a clear error, tested elsewhere)
    table = make_table(80, seed=seed)
    cal = Calibrator(score=score, alpha=0.2, rule=rule).fit(table)
    fast_s, fast_e = cal.row_lams(table)
    slow_s, slow_e = _general_path(cal, table)
    assert np.array_equal(fast_s, slow_s)
    assert (fast_e is None) == (slow_e is None)
    if fast_e is not None:
        assert np.array_equal(fast_e, slow_e)


def test_unseen_group_message_lists_at_most_ten_known_groups():
    table = make_table(300, seed=1)
    cal = Calibrator(score="sec", alpha=0.2, rule="mondrian", groups="key",
                     group_params={"field": "qid"}).fit(table)
    other = make_table(5, seed=2)
    object.__setattr__(other, "qid", np.array([f"new{i}" for i in range(5)]))
    with pytest.raises(ValueError, match=r"\.\.\. and \d+ more\)") as err:
        cal.certify(other)
    assert "was not seen at calibration" in str(err.value) and len(str(err.value)) < 600
