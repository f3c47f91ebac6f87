"""The ``cover`` block read back (``cover.io.regions_block``): thresholds as certify
writes them are known to their calibrator and no other's; one file, one calibrator."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cover._json import to_json_number
from cover.errors import InputError
from cover.io.jsonl import RawRows
from cover.io.regions_block import common_meta, known_thresholds, threshold_value

_THRESHOLDS = st.lists(st.floats(-1e6, 1e6, allow_nan=False)
                       | st.sampled_from([math.inf, -math.inf]), min_size=1, max_size=6,
                       unique=True)


@given(want=_THRESHOLDS, shift=st.floats(1e-6, 10))
def test_thresholds_as_certify_writes_them_are_known_and_others_are_not(want, shift):
    """Each threshold of a calibrator, written to JSON and read back, is one of its
    thresholds; a value more than a relative 1e-6 away from every finite one, or NaN,
    is not."""
    written = [json.loads(json.dumps(to_json_number(x))) for x in want]
    got = np.array([threshold_value(x) for x in written])
    assert known_thresholds(got, np.array(want)).all()
    finite = [x for x in want if math.isfinite(x)]
    top = max((abs(x) for x in finite), default=0.0)
    other = np.array([top * (1 + shift) + shift, math.nan])  # past every finite one
    assert not known_thresholds(other, np.array(want)).any()


def test_unreadable_thresholds_read_as_nan():
    assert [threshold_value(x) for x in ("inf", "-inf", 2, None)][:3] == [math.inf, -math.inf,
                                                                          2.0]
    assert all(math.isnan(threshold_value(x)) for x in (None, "x", [2.0], {"v": 2}, 10**400))


def test_rows_of_two_calibrators_are_an_error_naming_the_first_that_differs():
    block = {"score": "norm", "rule": "split", "alpha": 0.1, "k": 9, "n_calibration": 10,
             "calibration_sha256": "ab"}
    recs = [{"qid": 1, "cover": block}, {"qid": 2, "cover": {**block, "alpha": 0.2}}]
    raw = RawRows("r.jsonl", recs, np.array([4, 7]))
    with pytest.raises(InputError, match=r"r.jsonl:7 \(qid=2\): cover.alpha is 0.2 but 0.1 "
                                         r"on line 4"):
        common_meta(raw)
    meta, line = common_meta(RawRows("r.jsonl", recs[:1], np.array([4])))
    assert meta == block and line == 4
