"""The cross-batch duplicate check flags exactly the ids of earlier batches."""

from __future__ import annotations

import numpy as np
from hypothesis import given
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
