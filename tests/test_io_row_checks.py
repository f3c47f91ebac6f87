"""Row checks shared by the readers: every rejected row keeps its line and reason."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.data.rules import id_problem, raise_on_rejections
from cover.errors import InputError
from cover.io.jsonl import RawRows
from cover.io.row_checks import check_ids, check_required, check_unique_qids


def _raw(records: list[dict]) -> RawRows:
    return RawRows("f.jsonl", records, np.arange(1, len(records) + 1, dtype=np.int64))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 5), max_size=30))
def test_unique_qids_keeps_first_occurrences_in_order(qids):
    raw = _raw([{"qid": q} for q in qids])
    check_unique_qids(raw)
    kept = [r["qid"] for r in raw.records]
    assert kept == list(dict.fromkeys(qids))
    assert len(raw.problems) == len(qids) - len(kept) == len(raw.rejected)
    for p in raw.problems:  # each repeat names the line of the first occurrence
        first = qids.index(int(p.qid)) + 1
        assert p.problem == f"duplicate qid (first seen on line {first})" and p.line > first


@pytest.mark.parametrize(("value", "ok"), [
    (12, True), ("a1", True), (2579.0, False), (True, False), (" 12", False), ("", False),
    ({"x": 1}, False), (float("nan"), False),
])
def test_id_problem_accepts_only_integers_and_clean_text(value, ok):
    why = id_problem(value)
    assert (why is None) == ok
    assert why is None or ("qid" in why and "np." not in why)


def test_required_and_ids_reject_with_reasons_then_raise_names_the_rows():
    raw = _raw([{"qid": 1, "vid": "v"}, {"qid": 2.0, "vid": "v"}, {"qid": 3}])
    check_required(raw, ("qid", "vid"))
    check_ids(raw)
    assert [r["qid"] for r in raw.records] == [1]
    assert [(p.line, p.action) for p in raw.problems] == [(3, "rejected"), (2, "rejected")]
    raise_on_rejections(raw.problems, "reject", "f.jsonl")  # set aside: no error
    with pytest.raises(InputError, match="2 bad row"):
        raise_on_rejections(raw.problems, "raise", "f.jsonl")
