"""Helpers shared by the tests of the bulk JSON-lines readers (jsonl_batch, gt_lean,
regions_batch, predictions_bulk): prediction rows clean or not, a row encoder and an
exact comparison of two tables."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
from hypothesis import strategies as st

from cover.data.table import GroundingTable
from cover.intervals import Intervals
from cover.ragged import Ragged


def encode(rec: dict[str, object]) -> bytes:
    """One JSON line; a value JSON cannot hold becomes a number out of range."""
    try:
        return json.dumps(rec).encode()
    except ValueError:
        return b'{"qid": 1e999}'


def same_tables(a: GroundingTable, b: GroundingTable, skip: tuple[str, ...] = ()) -> None:
    """Every field of the two tables equal, dtypes included (fields in ``skip`` aside)."""
    for f in dataclasses.fields(GroundingTable):
        if f.name in skip:
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, Ragged | Intervals):
            for part in ("values", "offsets") if isinstance(x, Ragged) else ("starts", "ends",
                                                                             "offsets"):
                np.testing.assert_array_equal(getattr(x, part), getattr(y, part))
        elif isinstance(x, np.ndarray):
            assert x.dtype == y.dtype, f.name
            if x.dtype == object:
                assert x.tolist() == y.tolist(), f.name
            else:
                np.testing.assert_array_equal(x, y, err_msg=f.name)
        else:
            assert x == y, f.name


MISSING = object()

numbers = st.one_of(
    st.floats(-1e3, 1e3, allow_nan=False), st.integers(-100, 100),
    st.sampled_from([0.0, -0.0, 1e308, 2**53 + 1, 10**20]),
)
odd_numbers = st.sampled_from([math.nan, math.inf, -math.inf, True, False, "1.5", None,
                               [1.0], 10**400])
maybe_bad_number = st.one_of(numbers, numbers, numbers, odd_numbers)
ids = st.one_of(st.integers(-5, 30), st.sampled_from(["a", "b", "q1", "7", "x y"]))
odd_ids = st.sampled_from(["", " a", "b ", 2.0, 3.5, True, None, [1], {"a": 1}, MISSING])


def windows(number: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    def of_width(w: int) -> st.SearchStrategy[object]:
        return st.lists(st.lists(number, min_size=w, max_size=w), max_size=4)
    return st.one_of(of_width(3), of_width(2), of_width(3), of_width(1),
                     st.lists(st.lists(number, min_size=2, max_size=3), max_size=3),
                     st.sampled_from([None, MISSING, "[]", 5, [1.0, 2.0], []]))


def rows(clean: bool) -> st.SearchStrategy[dict[str, object]]:
    num = numbers if clean else maybe_bad_number
    fields = {
        "qid": ids if clean else st.one_of(ids, ids, odd_ids),
        "vid": ids if clean else st.one_of(ids, ids, odd_ids),
        "pred_relevant_windows": (st.lists(st.tuples(st.floats(0, 50), st.floats(0, 50),
                                                     st.floats(0, 1)).map(
            lambda t: [min(t[0], t[1]), max(t[0], t[1]), t[2]]), max_size=4)
            if clean else windows(num)),
        "pred_saliency_scores": st.one_of(st.lists(num, max_size=6),
                                          st.sampled_from([MISSING, None])
                                          if not clean else st.just(MISSING)),
        "duration": st.one_of(st.floats(1, 200), st.just(MISSING)) if clean else
        st.one_of(num, st.just(MISSING), st.just(-1.0), st.just(0)),
        "start_std": st.sampled_from([MISSING, None, 0.5, 1]) if clean else
        st.one_of(st.just(MISSING), num),
        "end_std": st.sampled_from([MISSING, 0.25]) if clean else st.one_of(st.just(MISSING),
                                                                              num),
        "query": st.sampled_from([MISSING, "a query", None, "naïve"]),
    }
    return st.fixed_dictionaries(fields).map(
        lambda d: {k: v for k, v in d.items() if v is not MISSING})
