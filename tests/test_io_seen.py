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


_IDS = st.text(alphabet=st.sampled_from(["0", "1", "a", "é", "\x00", "𝄞", "Z"]), max_size=11)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(batches=st.lists(st.lists(_IDS, max_size=12), max_size=10))
def test_compact_check_agrees_with_a_python_set(batches):
    """The compact blocks (ASCII as bytes, other text apart, merged as they grow) say
    exactly what a Python set of the ids says, for ids of any width and alphabet."""
    seen, earlier = SeenIds(), set()
    for b in batches:
        qids = np.array(b, dtype=str)  # numpy drops trailing NULs: the reader's ids too
        dup = seen.add(qids)
        assert dup.tolist() == [q in earlier for q in qids.tolist()]
        earlier.update(qids.tolist())
        assert len(seen) == len(earlier)
    assert seen.array().tolist() == sorted(earlier)


def test_many_batches_keep_few_blocks_and_every_id():
    """Blocks merge as they grow (a logarithmic number), and nothing is lost on a merge."""
    seen = SeenIds()
    for a in range(0, 20_000, 500):
        assert not seen.add(np.arange(a, a + 500).astype(str)).any()
    assert seen.add(np.array(["19999", "20000", "0"])).tolist() == [True, False, True]
    assert len(seen) == 20_001 and len(seen._blocks[0]) <= 6
    assert seen.array().tolist() == sorted(str(i) for i in range(20_001))


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(batches=st.lists(st.lists(_IDS, max_size=12), max_size=10))
def test_first_lines_are_those_a_dict_of_first_lines_gives(batches):
    """add_lines names, for each id of an earlier batch, the line it was first met on (the
    first row of that id in its first batch), as a dict filled with setdefault would."""
    seen, first = SeenIds(), {}
    line = 0
    for raw in batches:
        qids = np.array(raw, dtype=str)  # numpy drops trailing NULs: the reader's ids too
        b = qids.tolist()
        lines = np.arange(line + 1, line + 1 + len(b), dtype=np.int64)
        line += len(b)
        dup, at = seen.add_lines(qids, lines)
        assert dup.tolist() == [q in first for q in b]
        assert at[dup].tolist() == [first[q] for q, d in zip(b, dup.tolist(), strict=True) if d]
        for q, ln in zip(b, lines.tolist(), strict=True):
            first.setdefault(q, ln)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(batches=st.lists(st.lists(_IDS, max_size=12), max_size=14))
def test_capped_blocks_still_answer_as_a_dict_of_first_lines(batches):
    """With blocks capped at 4 ids, merges stop early and many blocks are searched: the
    answers (repeat or not, first line) are still a dict's, and no merge passes the cap."""
    import cover.io.seen as seen_mod

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(seen_mod, "_BLOCK_IDS", 4)
        seen, first = SeenIds(), {}
        line = 0
        for raw in batches:
            qids = np.array(raw, dtype=str)
            b = qids.tolist()
            lines = np.arange(line + 1, line + 1 + len(b), dtype=np.int64)
            line += len(b)
            dup, at = seen.add_lines(qids, lines)
            assert dup.tolist() == [q in first for q in b]
            assert at[dup].tolist() == [first[q] for q, d in zip(b, dup.tolist(), strict=True)
                                        if d]
            for q, ln in zip(b, lines.tolist(), strict=True):
                first.setdefault(q, ln)
            assert all(k.size <= max(4, len(first) // 8, 12)
                       for blocks in seen._blocks for k, _ in blocks)
        assert seen.array().tolist() == sorted(first)


def test_lines_past_32_bits_are_kept_whole():
    """First lines are held in 4 bytes only while they fit: a later line number past
    2**32 is named exactly."""
    seen = SeenIds()
    big = np.array([2**33 + 5, 7], dtype=np.int64)
    seen.add_lines(np.array(["a", "b"]), big)
    seen.add_lines(np.array(["c"]), np.array([3], dtype=np.int64))  # merged with the above
    dup, at = seen.add_lines(np.array(["a", "b", "c"]), np.array([9, 9, 9], dtype=np.int64))
    assert dup.all() and at.tolist() == [2**33 + 5, 7, 3]
