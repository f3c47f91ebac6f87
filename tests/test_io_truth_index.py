"""The compact ground truth (cover.io.truth_index) answers as the table it was built from."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.data.table import GroundingTable
from cover.intervals import Intervals
from cover.io.content_join import normalise
from cover.io.gt_compact import compact_truth
from cover.io.seen import SeenIds
from cover.io.truth_index import TruthSeen
from cover.ragged import Ragged, offsets_from_lengths

_QIDS = st.sampled_from(["int", "mixed", "unicode", "shuffled"])


def _table(seed: int, n: int, qids: str, multi: bool, queries: bool) -> GroundingTable:
    rng = np.random.default_rng(seed)
    ids = np.arange(n) * 7 - 3
    if qids == "shuffled":
        ids = rng.permutation(ids)
    text = ids.astype(str)
    if qids == "mixed":
        text = np.array([f"q{t}" if i % 3 == 0 else t for i, t in enumerate(text.tolist())])
    elif qids == "unicode":
        text = np.array([f"é{t}" for t in text.tolist()])
    lengths = rng.integers(1, 3, n) if multi else np.ones(n, dtype=np.int64)
    s = rng.uniform(0, 50, int(lengths.sum())).round(1)
    dur = np.where(rng.random(n) < 0.5, 150.0, rng.uniform(60, 150, n).round(2))
    q = np.empty(n, dtype=object)
    q[:] = [None if i % 5 == 0 else f"A query  {i % 4}." for i in range(n)]
    return GroundingTable(
        qid=text, vid=np.array([f"v{i // 3}_0.0_150.0" if i % 2 else f"ü{i // 2}"
                               for i in range(n)]),
        duration=dur, pred_start=np.full(n, np.nan), pred_end=np.full(n, np.nan),
        relevance=Ragged(np.empty(0), np.zeros(n + 1, dtype=np.int64)),
        truth=Intervals(s, s + 2.5, offsets_from_lengths(lengths)),
        line=np.arange(1, n + 1) * (1 if seed % 2 else 2), source="gt.jsonl",
        query=q if queries else None)


def _same_table(a: GroundingTable, b: GroundingTable) -> None:
    assert a.qid.tolist() == b.qid.tolist() and a.vid.tolist() == b.vid.tolist()
    for name in ("duration", "line"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and np.array_equal(x, y)
    assert a.truth is not None and b.truth is not None
    for name in ("starts", "ends", "offsets"):
        x, y = getattr(a.truth, name), getattr(b.truth, name)
        assert x.dtype == y.dtype and np.array_equal(x, y)
    assert (a.query is None) == (b.query is None)
    if a.query is not None and b.query is not None:
        assert a.query.tolist() == b.query.tolist()
    assert a.source == b.source and a.clip == b.clip


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 40), qids=_QIDS, multi=st.booleans(),
       queries=st.booleans())
def test_compact_truth_finds_and_takes_what_the_table_holds(seed, n, qids, multi, queries):
    gt = _table(seed, n, qids, multi, queries)
    truth = compact_truth(gt)
    rng = np.random.default_rng(seed)
    asked = np.concatenate([rng.choice(gt.qid, size=min(n, 5)),
                            ["nope", "007", "+7", "-0", " 4", "99999999999999999999"]])
    j, hit = truth.find(asked)
    table_pos = {q: i for i, q in enumerate(gt.qid.tolist())}
    assert hit.tolist() == [q in table_pos for q in asked.tolist()]
    assert j[hit].tolist() == [table_pos[q] for q in asked[hit].tolist()]
    rows = np.sort(rng.choice(n, size=min(n, 7), replace=False))
    _same_table(truth.take(rows), gt.take(rows))
    assert truth.same_vid(rows, gt.vid[rows]).all()
    assert not truth.same_vid(rows, np.char.add(gt.vid[rows], "x")).any()
    assert sorted(truth.known_vids().tolist()) == sorted(set(gt.vid.tolist()))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 30), queries=st.booleans())
def test_content_hits_count_as_the_text_keys_do(seed, n, queries):
    gt = _table(seed, n, "int", False, queries)
    rng = np.random.default_rng(seed)
    m = 12
    q = np.empty(m, dtype=object)
    q[:] = [rng.choice([None, "a query 1", "A  query 2.", "other", "a query 3."])
            for _ in range(m)]
    t = GroundingTable(qid=np.arange(m).astype(str), duration=np.full(m, 150.0),
                       vid=rng.choice(np.append(gt.vid, "zz"), m),
                       pred_start=np.zeros(m), pred_end=np.ones(m),
                       relevance=Ragged(np.empty(0), np.zeros(m + 1, dtype=np.int64)),
                       query=q)

    def bases(x: GroundingTable) -> np.ndarray:
        return np.char.add(np.char.add(x.vid.astype(str), "\x1f"), normalise(x.query, len(x)))

    assert compact_truth(gt).content_hits(t) == int(np.isin(bases(t), bases(gt)).sum())


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), qids=_QIDS, cuts=st.lists(st.integers(0, 30),
                                                                max_size=4))
def test_truth_seen_answers_as_seen_ids(seed, qids, cuts):
    gt = _table(seed, 20, qids, False, False)
    rng = np.random.default_rng(seed)
    stream = rng.choice(np.append(gt.qid, ["x1", "x2", "007"]), size=30)
    lines = np.arange(1, 31) * 3
    plain, compact = SeenIds(), TruthSeen(compact_truth(gt))
    for a, b in zip([0, *sorted(cuts)], [*sorted(cuts), 30], strict=True):
        batch = stream[a:b]
        assert compact.any_of(batch.tolist()) == plain.any_of(batch.tolist())
        d1, f1 = plain.add_lines(batch, lines[a:b])
        d2, f2 = compact.add_lines(batch, lines[a:b])
        assert d1.tolist() == d2.tolist() and f1.tolist() == f2.tolist()
    assert len(compact) == len(plain)


def test_truth_seen_refuses_rows_without_a_line():
    """A truth row counts as seen by the line it was first seen on: line 0 would leave
    it unseen, so a repeat in a later batch would pass unnoticed."""
    gt = _table(0, 5, "unicode", False, False)
    seen = TruthSeen(compact_truth(gt))
    with pytest.raises(ValueError, match="line numbers start at 1"):
        seen.add_lines(gt.qid[:2], np.array([0, 1]))
    dup, first = seen.add_lines(gt.qid[:2], np.array([4, 9]))
    assert not dup.any()
    dup, first = seen.add_lines(gt.qid[1:3], np.array([12, 13]))
    assert dup.tolist() == [True, False] and first.tolist() == [9, 0]


def test_integer_qids_take_a_few_bytes_a_row():
    n = 200_000
    q = np.empty(n, dtype=object)
    q[:] = ["a person does something"] * n
    gt = GroundingTable(qid=np.arange(n), vid=np.char.add("v", (np.arange(n) // 3).astype(str)),
                        duration=np.full(n, 150.0), pred_start=np.full(n, np.nan),
                        pred_end=np.full(n, np.nan),
                        relevance=Ragged(np.empty(0), np.zeros(n + 1, dtype=np.int64)),
                        truth=Intervals.single(np.full(n, 2.0), np.full(n, 10.0)),
                        line=np.arange(1, n + 1), query=q)
    truth = compact_truth(gt)
    held = sum(a.nbytes for a in (truth.keys, truth.vids, truth.vid_code, truth.duration,
                                  truth.starts, truth.ends, truth.query_code))
    assert truth.order is None and truth.offsets is None and truth.line is None
    assert held < 32 * n  # the table: over 150 bytes a row, and a string per query


def test_a_repeated_qid_finds_its_first_row_as_the_text_search_did():
    gt = _table(1, 6, "int", False, True)
    gt = gt.take(np.array([0, 3, 1, 3, 2, 1]))  # a table rekeyed on content may repeat
    j, hit = compact_truth(gt).find(gt.qid[[1, 2, 4]])
    assert hit.all() and j.tolist() == [1, 2, 4]


def _plain_ints(text: np.ndarray) -> np.ndarray | None:
    """The rule of :func:`int_keys` as written: numpy's parse, then its print back."""
    try:
        ints = text.astype(np.int64)
    except (ValueError, OverflowError):
        return None
    return ints if bool((ints.astype(text.dtype) == text).all()) else None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(
    st.integers(-(2**63), 2**63 - 1).map(str),
    st.text(alphabet="0123456789-+ _a\x00\u0663", max_size=5)), min_size=1, max_size=6))
def test_int_keys_read_from_code_points_as_numpy_parses_them(values):
    """The code-point reading of integer qids accepts exactly the plainly written ones
    (no '+', leading zero, '-0', blank, NUL or other digit), with their values; 19
    digits and more go through numpy's parse."""
    from cover.io.narrow import int_keys

    text = np.array(values, dtype=str)
    got, want = int_keys(text), _plain_ints(text)
    assert (got is None) == (want is None)
    if want is not None:
        assert got is not None and got.dtype == np.int64 and np.array_equal(got, want)


def test_a_duration_shared_by_every_row_of_a_video_is_kept_once_per_video():
    """One duration per vid (QVHighlights: every query of a clip has its length): held
    once per vid, taken back per row as the table holds it; a vid whose rows disagree
    keeps one per row."""
    n = 30
    vid = np.array([f"v{i // 3}" for i in range(n)])
    same = np.repeat(np.arange(10) * 10.0 + 60.0, 3)
    for dur, by_vid in ((same, True), (np.where(np.arange(n) == 4, 61.5, same), False)):
        t = GroundingTable(
            qid=np.arange(n).astype(str), vid=vid, duration=dur,
            pred_start=np.full(n, np.nan), pred_end=np.full(n, np.nan),
            relevance=Ragged(np.empty(0), np.zeros(n + 1, dtype=np.int64)),
            truth=Intervals.single(np.zeros(n), np.full(n, 2.0)), source="gt.jsonl",
            line=np.arange(1, n + 1) * 2)
        c = compact_truth(t)
        assert c.duration_by_vid == by_vid and c.duration.size == (10 if by_vid else n)
        rows = np.array([29, 0, 4, 5])
        _same_table(c.take(rows), t.take(rows))
        assert c.durations(rows).tolist() == dur[rows].tolist()
        c.release()  # a stream done joining: ids and durations stay, windows go
        assert c.durations(rows).tolist() == dur[rows].tolist()
        assert c.find(np.array(["4"]))[1].all()
        with pytest.raises(RuntimeError, match="released"):
            c.take(rows)
