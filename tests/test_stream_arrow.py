"""The Arrow batch kernel: every row out, in order, certified, refused or rejected."""

from __future__ import annotations

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")

import cover  # noqa: E402
from cover.errors import InputError  # noqa: E402
from cover.stream import certify_batch  # noqa: E402

COLS = {"qid": "qid", "vid": "vid", "duration": "duration", "windows": "w"}


def _calibrator() -> cover.Calibrator:
    n = 99
    t = cover.GroundingTable.from_arrays(
        qid=np.arange(n), duration=150.0, pred_start=np.full(n, 40.0),
        pred_end=np.full(n, 60.0), truth=(np.full(n, 45.0), 60.0 + np.arange(n) / 4))
    return cover.Calibrator(score="sec", alpha=0.1).fit(t)  # threshold 22.25 s


def _batch(windows: list, durations: list) -> pa.Table:
    n = len(windows)
    return pa.table({"qid": list(range(n)), "vid": [f"v{i % 2}" for i in range(n)],
                     "duration": pa.array(durations, pa.float64()),
                     "w": pa.array(windows, pa.list_(pa.list_(pa.float64())))})


def test_every_row_comes_out_with_its_fate():
    cal = _calibrator()
    batch = _batch([[[40.0, 60.0, 0.9]], [], [[10.0, 5.0, 0.1]], [[0.0, 1.0, 1.0]]],
                   [150.0, 100.0, 150.0, None])
    out, problems = certify_batch(cal, batch, columns=COLS, first_line=11, source="f.parquet")
    block = out.column("cover").combine_chunks()
    assert out.num_rows == 4 and out.column("qid").to_pylist() == [0, 1, 2, 3]
    assert block.field("status").to_pylist() == ["certified", "refused", "rejected",
                                                 "rejected"]
    assert block.field("region").to_pylist() == [[[17.75, 82.25]], [[0.0, 100.0]], None, None]
    reasons = block.field("reason").to_pylist()
    assert reasons[:2] == [None, None]
    assert "start > end" in reasons[2] and "no duration known" in reasons[3]
    assert [(p.line, p.qid) for p in problems if p.action == "rejected"] == [(13, "2"),
                                                                             (14, "3")]
    assert block.field("threshold").to_pylist()[:2] == [22.25, 22.25]


def test_durations_come_from_videos_when_rows_lack_them():
    cal = _calibrator()
    batch = _batch([[[40.0, 60.0, 0.9]], [[40.0, 60.0, 0.9]]], [None, None])
    videos = (np.array(["v0", "v1"]), np.array([70.0, 150.0]))
    out, _ = certify_batch(cal, batch, columns=COLS, videos=videos)
    assert out.column("cover").combine_chunks().field("region").to_pylist() == [
        [[17.75, 70.0]], [[17.75, 82.25]]]


def test_already_certified_input_is_refused():
    cal = _calibrator()
    out, _ = certify_batch(cal, _batch([[[40.0, 60.0, 0.9]]], [150.0]), columns=COLS)
    with pytest.raises(InputError, match="already has a 'cover' field"):
        certify_batch(cal, out, columns=COLS)


def test_a_calibrator_without_a_fitted_on_record_writes_its_metadata():
    """``fitted_on_`` may be None (no calibration set recorded): the Parquet metadata says
    so (null), as the JSON block does, instead of failing on ``None.get``."""
    import json

    from cover.stream.arrow import calibrator_metadata

    cal = _calibrator()
    cal.fitted_on_ = None
    meta = json.loads(calibrator_metadata(cal)[b"cover.calibrator"])
    assert meta["fitted_on"] is None and meta["score"] == "sec"
