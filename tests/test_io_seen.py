"""The cross-batch duplicate check flags exactly the ids of earlier batches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.io.seen import SeenIds


@given(batches=st.lists(st.lists(st.sampled_from(["1", "2", "3", "a", "10"]), max_size=6),
                        max_size=6))
def test_flags_ids_of_earlier_batches_only(batches):
    seen, earlier = SeenIds(), set()
    for b in batches:
        dup = seen.add(np.array(b, dtype=str))
        assert dup.tolist() == [q in earlier for q in b]  # same-batch repeats: the reader's
        earlier.update(b)
    assert seen.array().tolist() == sorted(earlier) and len(seen) == len(earlier)


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(st.one_of(st.lists(st.integers(-3, 3), max_size=40),
                 st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "ab", "é", ""])),
                          max_size=40)))
def test_repeated_rows_names_each_repeat_and_its_first_row(ids):
    """Every row whose id occurred earlier, with that first row: as a dict would say."""
    pa = pytest.importorskip("pyarrow")
    from cover.io.seen import repeated_rows

    first: dict[object, int] = {}
    want_rows, want_first = [], []
    for i, q in enumerate(ids):
        if q in first:
            want_rows.append(i)
            want_first.append(first[q])
        else:
            first[q] = i
    typ = pa.int64() if all(isinstance(q, int) for q in ids) else pa.string()
    rows, firsts = repeated_rows(pa.chunked_array([pa.array(ids[:5], typ),
                                                   pa.array(ids[5:], typ)], type=typ))
    assert rows.tolist() == want_rows and firsts.tolist() == want_first
