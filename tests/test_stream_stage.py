"""The certify stage every streamed format runs: the calibration-row mark, and which
inputs are certify's own output."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cover
from cover.io.prediction_rows import Loaded
from cover.stream.stage import CertifyStage

IDS = st.text(st.sampled_from("ab1é_0"), min_size=1, max_size=10)


@settings(max_examples=100, deadline=None)
@given(st.lists(IDS, min_size=4, max_size=30, unique=True),
       st.lists(IDS, min_size=1, max_size=30, unique=True))
def test_rows_the_calibrator_was_fitted_on_are_marked_and_only_they(fitted, batch):
    """A batch row is marked ``in_calibration`` exactly when its qid is one of the
    calibrator's fitted qids (compared as text, whatever their widths and order)."""
    n = len(fitted)
    cal = cover.Calibrator(score="sec", alpha=0.25).fit(cover.GroundingTable.from_arrays(
        qid=np.array(fitted), duration=100.0, pred_start=np.full(n, 10.0),
        pred_end=np.full(n, 20.0), truth=(np.full(n, 11.0), np.linspace(12, 30, n))))
    m = len(batch)
    table = cover.GroundingTable.from_arrays(
        qid=np.array(batch), duration=100.0, pred_start=np.full(m, 10.0),
        pred_end=np.full(m, 20.0))
    staged = CertifyStage.of(cal).run(Loaded(table, [], {}))
    assert staged.in_calibration is not None
    marked = dict(zip(staged.table.qid.tolist(), staged.in_calibration.tolist(),
                      strict=True))
    assert marked == {q: q in set(fitted) for q in batch}


def test_certify_output_is_told_by_the_fields_certify_writes_only() -> None:
    """The ``cover`` block and the CSV output's columns mark an input as certify's own
    output; a user's column that merely starts alike (``cover_type``) does not."""
    from cover.errors import InputError
    from cover.stream.output_fields import CERTIFIED_FIELDS, refuse_certified

    for field in sorted(CERTIFIED_FIELDS):
        with pytest.raises(InputError, match=rf"^p\.csv: the input already has a '{field}' "):
            refuse_certified("p.csv", ["qid", field])
    refuse_certified("p.csv", ["qid", "cover_type", "coverage", "covered"])
    assert {"cover", "cover_status", "cover_p_value"} <= CERTIFIED_FIELDS
