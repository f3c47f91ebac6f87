"""The ranks scan is numpy's accumulate along the first axis, bit for bit, in any shape."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.scans import accumulate_ranks


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.tuples(st.integers(0, 3000), st.integers(1, 40)),  # blocks
                 st.tuples(st.integers(0, 40), st.integers(500, 600))),  # steps in place
       st.sampled_from(["add", "maximum"]), st.booleans(), st.booleans(),
       st.integers(0, 2**32 - 1))
def test_scan_is_numpys_accumulate_in_blocks_or_not(shape, op, reverse, scratch, seed):
    """The ranks scan (in place for many columns; for few, blocks laid side by side,
    padded with the operation's neutral value) is ``accumulate`` along the first axis,
    forward or from the last rank up, bit for bit; an input not given as scratch is
    left as it was."""
    rng = np.random.default_rng(seed)
    w, m = shape
    if op == "add":
        a = rng.integers(0, 3, size=(w, m))
        ufunc, identity = np.add, 0
    else:
        a = np.where(rng.random((w, m)) < 0.3, -np.inf, rng.random((w, m)))
        ufunc, identity = np.maximum, -np.inf
    kept = a.copy()
    want = (ufunc.accumulate(a[::-1], axis=0)[::-1] if reverse
            else ufunc.accumulate(a, axis=0))
    got = accumulate_ranks(a, ufunc, identity, reverse=reverse, scratch=scratch)
    assert got.shape == want.shape and got.dtype == want.dtype and got.flags.c_contiguous
    assert np.array_equal(got, want)
    assert scratch or np.array_equal(a, kept)
    if op == "add":  # the counts of a boolean column, as int64
        flags = a > 1
        assert np.array_equal(accumulate_ranks(flags, np.add, 0, np.int64, reverse=reverse),
                              np.add.accumulate(flags[::-1] if reverse else flags, axis=0,
                                                dtype=np.int64)[::-1 if reverse else 1])
