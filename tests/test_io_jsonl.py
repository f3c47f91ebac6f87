"""Splitting a JSON-lines file into numbered lines a block at a time."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import cover.io.jsonl as jsonl


@given(st.binary(max_size=60).map(lambda b: bytes(b"ab\n\r"[x % 4] for x in b)),
       st.sampled_from([1, 2, 3, 7, 64]))
def test_numbered_lines_are_the_lines_of_one_split(data, block):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(jsonl, "_SPLIT_BYTES", block)
        got = list(jsonl.numbered_lines(data))
    assert got == list(enumerate(data.split(b"\n"), start=1))
