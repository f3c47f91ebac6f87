"""`cover.data.shape`: the table's shape the row rules read, and its ids as given."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from cover.data.shape import ids_as_given, raw_ids, replace_keeping_ids
from cover.data.table import GroundingTable


@given(st.lists(st.integers(-(2**62), 2**62), min_size=1, max_size=8, unique=True),
       st.booleans(), st.booleans())
def test_replace_keeps_ids_as_given(ids, text, own_vid):
    q = np.array([str(i) for i in ids]) if text else np.array(ids, dtype=np.int64)
    v = np.array([f"v{i}" for i in ids]) if own_vid else None
    n = len(ids)
    t = GroundingTable.from_arrays(qid=q, vid=v, duration=np.full(n, 10.0),
                                   pred_start=np.zeros(n), pred_end=np.ones(n))
    out = replace_keeping_ids(t, duration=np.full(n, 20.0))
    assert type(out) is GroundingTable and out.duration.tolist() == [20.0] * n
    assert raw_ids(out) is raw_ids(t) and raw_ids(out, "vid") is raw_ids(t, "vid")
    assert (raw_ids(out, "vid") is raw_ids(out)) == (not own_vid)
    # Row by row: integers as given, text as text; the same words either way.
    assert [str(x) for x in ids_as_given(out).tolist()] == out.qid.tolist()
    assert ids_as_given(out).dtype.kind == ("U" if text else "i")

