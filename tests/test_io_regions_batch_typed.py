"""The typed decode of certified lines (``cover evaluate``'s bulk regions reader): on lines
written in any way JSON allows, it gives exactly the per-row reader's regions, table and
counts or leaves the batch to it; it never accepts a row the per-row reader rejects."""

from __future__ import annotations

import json

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.errors import InputError
from cover.io.jsonl_typed import exact_values, pairs_column
from cover.io.regions_batch import decode_regions, load_regions
from cover.io.seen import SeenIds
from test_io_regions_batch import FIRSTS, per_row, rows, same

BIG = b"18446744073709551616"  # 2**64: orjson reads it as a float, msgspec as an int
#: Fields put first in a line (a later key of the same name wins, as in a dict).
PREFIXES = [b"", b'"pred_saliency_scores": [1e400], ', b'"pred_saliency_scores": [1, 2.5e-3], ',
            b'"note": "\xff", ', b'"note": "\\ud800", ', b'"note": "caf\xc3\xa9", ',
            b'"x": NaN, ', b'"x": ' + BIG + b", ", b'"cover": 3, ', b'"qid": "zz", ',
            b'"pred_relevant_windows": 5, ', b'"extra": {"a": [true, null, {}]}, ']
#: Rewrites of a written line: blanks, exponents, integers beyond 64 bits.
REWRITES = [(b"", b""), (b", ", b","), (b": ", b" :  "), (b"[", b"[ "), (b"]", b" ]"),
            (b'"k": 9', b'"k": ' + BIG), (b'"alpha": 0.1', b'"alpha": 1e-1'),
            (b'"duration": 150', b'"duration": 1' + b"0" * 30),
            (b'"query": "a query"', b'"query": [1, ' + BIG + b"]"),
            (b'"threshold": 2', b'"threshold": ' + BIG), (b'"region": []', b'"region": [ ]')]


@st.composite
def written(draw: st.DrawFn, rec: dict[str, object]) -> bytes:
    """``rec`` as one line, written with a prefix and a rewrite drawn."""
    body = json.dumps(rec).encode()  # NaN written as NaN: the per-row reader takes it
    old, new = draw(st.sampled_from(REWRITES))
    if old:
        body = body.replace(old, new)
    return b"{" + draw(st.sampled_from(PREFIXES)) + body[1:] if body != b"{}" else body


def lines(clean: bool, most: int = 8) -> st.SearchStrategy[list[bytes]]:
    """Lines of rows; clean rows have distinct qids (the odd row may repeat one)."""
    recs = st.lists(rows(clean), min_size=1, max_size=most)
    if clean:
        recs = recs.map(lambda rs: [{**r, "qid": i} for i, r in enumerate(rs)])
    return recs.flatmap(lambda rs: st.tuples(*map(written, rs))).map(list)


#: Mostly clean rows written in any way, now and then with a doubtful one among them.
MIXED = st.tuples(lines(clean=True), st.lists(lines(clean=False, most=1), max_size=1)).map(
    lambda parts: parts[0] + [ln for odd in parts[1] for ln in odd])


def as_batch(lines_: list[bytes]) -> list[tuple[int, bytes]]:
    return [(i + 2, ln) for i, ln in enumerate(lines_)]


def check(batch: list[tuple[int, bytes]], first) -> bool:
    """The typed read is the per-row reader's, or the batch was left to it; True when
    the typed read took the batch."""
    ref = per_row(batch, SeenIds(), first)
    fast = decode_regions("r.jsonl", batch, seen=SeenIds(), first=first)
    if fast is None:
        return False
    assert not isinstance(ref, str), ref  # never accepts a file the per-row reader refuses
    assert ref.problems == []  # never accepts a row the per-row reader rejects
    same(fast, ref)
    return True


@settings(max_examples=150)
@given(st.one_of(MIXED, lines(clean=False)), FIRSTS)
def test_typed_read_equals_the_per_row_reader_or_defers_to_it(lines_, first):
    check(as_batch(lines_), first)


@settings(max_examples=60)
@given(lines(clean=True), FIRSTS)
def test_load_regions_gives_the_per_row_result_on_any_writing(lines_, first):
    batch = as_batch(lines_)
    ref = per_row(batch, SeenIds(), first)
    try:
        got = load_regions("r.jsonl", batch, seen=SeenIds(), first=first)
    except InputError as exc:  # the same error, message included
        assert str(exc) == ref
        return
    assert not isinstance(ref, str)
    same(got, ref)


CERTIFIED = (b'{"qid": %d, "query": "q", "vid": "v0_0.0_150.0", "duration": 150.0, '
             b'"pred_relevant_windows": [[70.0, 102.0, 0.9483], [30.0, 62.0, 0.9476]], '
             b'"pred_saliency_scores": [-10.7578125, -9.6015625, 1e-3], '
             b'"cover": {"status": "certified", "region": [[0.0, 150.0]], "refused": false, '
             b'"duration": 150.0, "score": "norm", "rule": "split", "alpha": 0.1, "k": 9001, '
             b'"n_calibration": 10000, "calibration_sha256": "b4c5", "threshold": 6.5}}')


def certified(i: int, old: bytes = b"", new: bytes = b"") -> bytes:
    return (CERTIFIED % i).replace(old, new) if old else CERTIFIED % i


@pytest.mark.parametrize(("old", "new"), [
    (b"", b""),
    (b'"status": "certified"', b'"status": "abstained", "reason": "no answer"'),
    (b'"status": "certified"', b'"status": "abstained"'),
    (b'"refused": false, ', b""),
    (b'"threshold": 6.5', b'"threshold": "inf", "in_calibration": true'),
    (b'"region": [[0.0, 150.0]]', b'"region": [[0, 10], [20.5, 3e1]]'),
    (b'"status": "certified", "region": [[0.0, 150.0]]', b'"status": "rejected", "region": [ ]'),
    (b"[-10.7578125", b'["\xc3\xa9", 1e400, -1'),  # the saliency is never read
    (b'"cover": {', b'"cover": {"p_value": 0.5, "relevance": "proposals", '),
])
def test_certify_output_is_read_typed(old, new):
    batch = as_batch([certified(i, old, new) for i in range(3)])
    assert check(batch, None)


@pytest.mark.parametrize(("old", "new"), [
    (b'"vid": "v0_0.0_150.0", ', b""),
    (b'"cover": {"status": "certified", "region": [[0.0, 150.0]], ', b'"cover": {'),
    (b'"region": [[0.0, 150.0]]', b'"region": null'),
    (b'"region": [[0.0, 150.0]]', b'"region": [[0.0, 150.0, 1.0]]'),
    (b'"region": [[0.0, 150.0]]', b'"region": [[0.0, true]]'),
    (b'"region": [[0.0, 150.0]]', b'"region": [[0.0, 1e400]]'),
    (b'"refused": false', b'"refused": 0'),
    (b'"k": 9001', b'"k": ' + BIG),
    (b'"status": "certified"', b'"status": "abstained", "reason": ' + BIG),
    (b'"query": "q"', b'"query": {"text": "q"}'),
    (b"[-10.7578125", b"[NaN, -10.7578125"),
    (b"[-10.7578125", b'["\xff"'),  # not UTF-8: the per-row reader rejects the line
])
def test_doubtful_lines_leave_the_batch_to_the_per_row_reader(old, new):
    batch = as_batch([certified(i) for i in range(2)] + [certified(2, old, new)])
    assert decode_regions("r.jsonl", batch) is None
    ref = per_row(batch, None, None)
    try:
        got = load_regions("r.jsonl", batch)
    except InputError as exc:  # the per-row reader's error, message included
        assert str(exc) == ref
        return
    same(got, ref)


def test_the_helpers_on_their_own():
    raw = msgspec.Raw
    reg, per_row_ = pairs_column([raw(b"[[0, 1], [2, 3.5]]"), raw(b"[]"), raw(b"[[4,5]]")])
    assert reg.tolist() == [[0, 1], [2, 3.5], [4, 5]] and per_row_.tolist() == [2, 0, 1]
    assert pairs_column([raw(b"[[0, 1]]"), raw(b"null")]) is None
    assert pairs_column([msgspec.UNSET]) is None
    assert exact_values(["a", 1.5, None, True, 2**64 - 1, -(2**63)])
    assert not exact_values([2**64]) and not exact_values([-(2**63) - 1])
    assert not exact_values([[1]]) and not exact_values([{"a": 1}])
