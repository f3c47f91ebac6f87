"""GroundingTable construction: integer ids become the same text ``str(i)`` gives."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.data.table import GroundingTable, qid_text


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(st.lists(st.integers(-(2**63), 2**63 - 1), max_size=20),
       st.sampled_from([np.int64, np.int32, np.uint64, np.uint8]))
def test_integer_qids_are_their_decimal_text(ids, dtype):
    info = np.iinfo(dtype)
    a = np.array([i for i in ids if info.min <= i <= info.max], dtype=dtype)
    text = qid_text(a)
    assert text.dtype.kind == "U"
    assert text.tolist() == [str(int(i)) for i in a]
    assert text.tolist() == a.astype(str).tolist()  # the former <U21 conversion


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 12), st.integers(0, 10**18 - 1)), max_size=30),
       st.sampled_from([np.int64, np.int32, np.uint64, np.uint16]), st.integers(1, 7))
def test_digits_built_at_once_are_numpys_text(ids, dtype, step):
    """Non-negative integers below 10**18 made text from their digits, a few rows at a
    time: numpy's own text, dtype included."""
    from cover.data.ids import decimal_text

    a = np.array([i for i in ids if i <= np.iinfo(dtype).max], dtype=dtype)
    width = max((len(str(int(i))) for i in a), default=1)
    got = decimal_text(a, width, step)
    want = a.astype(f"<U{width}")
    assert got.dtype == want.dtype and got.tolist() == want.tolist()
    assert qid_text(a).tolist() == want.tolist()


def test_table_ids_join_as_text():
    t = GroundingTable.from_arrays(qid=np.array([7, 12, 100]), duration=60.0)
    assert t.qid.tolist() == ["7", "12", "100"] and t.vid.tolist() == t.qid.tolist()
    assert len(t.select_qids(["12", 100])) == 2
    named = GroundingTable.from_arrays(qid=["a", "b"], vid=[3, 4], duration=60.0)
    assert named.qid.tolist() == ["a", "b"] and named.vid.tolist() == ["3", "4"]


def test_from_arrays_repeats_a_scalar_prediction_and_checks_lengths() -> None:
    t = GroundingTable.from_arrays(qid=np.arange(3), duration=150.0, pred_start=10.0,
                                   pred_end=20.0)
    assert t.pred_start.tolist() == [10.0] * 3 and t.pred_end.shape == (3,)
    with pytest.raises(ValueError, match=r"pred_start has shape .* expected 3 values"):
        GroundingTable.from_arrays(qid=np.arange(3), duration=150.0, pred_start=[1.0, 2.0],
                                   pred_end=[3.0, 4.0, 5.0])


def test_integer_ids_stay_integers_until_read_as_text() -> None:
    """A table of integer ids stores them as given (no text made to calibrate or certify);
    the first read of ``qid`` converts once, ``vid`` (defaulting to the qids) shares it,
    and row selection keeps the integers."""
    from dataclasses import replace

    from cover.data.table import raw_ids

    ids = np.array([5, 40, 7, 1000])
    t = GroundingTable.from_arrays(qid=ids, duration=60.0)
    assert raw_ids(t) is ids and "_qid_text" not in t.__dict__
    assert t.qid.tolist() == ["5", "40", "7", "1000"]
    assert t.vid is t.qid  # one conversion serves both
    sub = t.take([2, 0])
    assert raw_ids(sub).dtype.kind == "i" and sub.qid.tolist() == ["7", "5"]
    assert sub.vid.tolist() == ["7", "5"]
    other = replace(t, qid=np.array(["a", "b", "c", "d"]))
    assert other.qid.tolist() == ["a", "b", "c", "d"] and other.vid.tolist() == t.qid.tolist()
    assert len(t) == 4 and t.where(1).endswith("(qid=40)")


def test_units_are_worked_out_once_and_carried_by_take() -> None:
    """A table's units are cached, read-only, and a row subset carries its own."""
    t = GroundingTable.from_arrays(qid=np.arange(4), vid=["a_0_150", "a_150_300", "b", "c"],
                                   duration=150.0, pred_start=np.zeros(4), pred_end=np.ones(4))
    assert t.units.tolist() == ["a", "a", "b", "c"]
    assert t.units is t.units and not t.units.flags.writeable
    sub = t.take([3, 0])
    assert "_units" in sub.__dict__ and sub.units.tolist() == ["c", "a"]
