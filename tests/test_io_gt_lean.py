"""Ground truth read without its parsed rows: the per-row reader's table, column for
column, or (any problem) the per-row reader itself."""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bulk_rows import same_tables
from conftest import example_dir
from cover.errors import InputError
from cover.io import gt_lean
from cover.io.gt_lean import read_ground_truth_lean
from cover.io.qvhighlights import read_ground_truth

MISSING = object()
ids = st.one_of(st.integers(-5, 30), st.sampled_from(["a", "b", "q1", "7", "x y"]))
odd_ids = st.sampled_from(["", " a", 2.0, True, None, [1], MISSING])
clean_windows = st.lists(st.tuples(st.floats(0, 100), st.floats(0, 100)).map(sorted).map(
    list), min_size=1, max_size=3)
odd_numbers = st.sampled_from([math.nan, math.inf, -1.0, True, "1.5", None, 10**400])
odd_windows = st.one_of(
    st.lists(st.lists(st.one_of(st.floats(0, 9), odd_numbers), min_size=2, max_size=2),
             max_size=2),
    st.sampled_from([[], None, MISSING, 5, [[1.0, 2.0, 3.0]], [[3.0, 1.0]], [1.0, 2.0]]))


def rows(clean: bool) -> st.SearchStrategy[dict[str, object]]:
    return st.fixed_dictionaries({
        "qid": ids if clean else st.one_of(ids, ids, odd_ids),
        "vid": ids if clean else st.one_of(ids, ids, odd_ids),
        "query": st.sampled_from([MISSING, "a query", None]),
        "duration": st.sampled_from([150, 30.5]) if clean else st.one_of(
            st.sampled_from([150, 30.5, 0, -2, MISSING]), odd_numbers),
        "relevant_windows": clean_windows if clean else st.one_of(clean_windows,
                                                                  odd_windows),
    }).map(lambda d: {k: v for k, v in d.items() if v is not MISSING})


def write(tmp_path, recs, extra=b""):
    path = tmp_path / "gt.jsonl"
    lines = []
    for r in recs:
        try:
            lines.append(json.dumps(r).encode())
        except ValueError:
            lines.append(b'{"qid": 1e999}')
    path.write_bytes(b"\n".join(lines) + b"\n" + extra)
    return path


def both(path):
    try:
        ref = read_ground_truth(path, on_error="reject")
    except InputError as exc:
        ref = str(exc)
    try:
        got = read_ground_truth_lean(path, on_error="reject")
    except InputError as exc:
        got = str(exc)
    return got, ref


@given(st.lists(rows(clean=False), min_size=1, max_size=8),
       st.sampled_from([b"", b"\n\n", b"not json\n", b"[1]\n", b'{"qid": NaN}\n']))
def test_lean_read_is_the_per_row_read(tmp_path_factory, recs, extra):
    got, ref = both(write(example_dir(tmp_path_factory), recs, extra))
    if isinstance(ref, str):
        assert got == ref
        return
    same_tables(got.table, ref.table, skip=("records",))
    assert (got.problems, got.rejected) == (ref.problems, ref.rejected)


@given(st.lists(rows(clean=True), min_size=1, max_size=8).map(
    lambda rs: [{**r, "qid": i} for i, r in enumerate(rs)]))
def test_clean_files_drop_their_rows(tmp_path_factory, recs):
    path = write(example_dir(tmp_path_factory), recs)
    got, ref = both(path)
    assert got.table.records is None and ref.table.records is not None
    same_tables(got.table, ref.table, skip=("records",))


def test_many_chunks_and_the_real_file(qvh_gt, tmp_path, monkeypatch):
    monkeypatch.setattr(gt_lean, "CHUNK_LINES", 7)
    got, ref = both(qvh_gt)
    assert got.table.records is None and len(got.table) == len(ref.table) > 1000
    same_tables(got.table, ref.table, skip=("records",))
    lines = qvh_gt.read_bytes().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join(lines[:500] + [lines[3]] + lines[500:]) + b"\n")
    got, ref = both(bad)  # a repeated qid far from its first line: the per-row reader
    assert got.table.records is not None and got.problems == ref.problems != []


clean_labels = st.integers(0, 3).flatmap(lambda k: st.fixed_dictionaries({
    "relevant_clip_ids": st.lists(st.integers(0, 75), min_size=k, max_size=k),
    "saliency_scores": st.lists(st.lists(st.integers(0, 4) | st.floats(0, 4), min_size=3,
                                         max_size=3),
                                min_size=k, max_size=k)}))
odd_labels = st.sampled_from([
    {"relevant_clip_ids": [1.0], "saliency_scores": [[1, 2, 3]]},
    {"relevant_clip_ids": [-1], "saliency_scores": [[1, 2, 3]]},
    {"relevant_clip_ids": [2**64], "saliency_scores": [[1, 2, 3]]},
    {"relevant_clip_ids": [2**63], "saliency_scores": [[1, 2, 3]]},
    {"relevant_clip_ids": [1], "saliency_scores": [[1, True, 3]]},
    {"relevant_clip_ids": [1], "saliency_scores": [[1, 2]]},
    {"relevant_clip_ids": [1, 2], "saliency_scores": [[1, 2, 3]]},
    {"relevant_clip_ids": [1]}, {"saliency_scores": [[1, 2, 3]]},
    {"relevant_clip_ids": None, "saliency_scores": None}, {"relevant_clip_ids": None},
    {"relevant_clip_ids": "1", "saliency_scores": [[1, 2, 3]]}])
#: Fields put first in a line (a later key of the same name wins, as in a dict).
PREFIXES = [b"", b"", b'"x": [1e400], ', b'"note": "\xff", ', b'"note": "\\ud800", ',
            b'"x": NaN, ', b'"qid": "zz", ', b'"relevant_windows": 5, ',
            b'"duration": 18446744073709551616, ', b'"query": [18446744073709551616], ']


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(rows(clean=True), st.one_of(clean_labels, clean_labels, odd_labels),
                          st.sampled_from(PREFIXES)), min_size=1, max_size=6).map(
    lambda rs: [({**r, "qid": i}, lab, pre) for i, (r, lab, pre) in enumerate(rs)]))
def test_typed_read_of_any_writing_and_labels_is_the_per_row_read(tmp_path_factory, parts):
    """Lines written in any way JSON allows, with highlight labels clean and not: the
    lean read (typed) is the per-row reader's table, or that reader itself."""
    lines = [b"{" + pre + json.dumps({**r, **lab}).encode()[1:] for r, lab, pre in parts]
    path = example_dir(tmp_path_factory) / "gt.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    got, ref = both(path)
    if isinstance(ref, str):
        assert got == ref
        return
    same_tables(got.table, ref.table, skip=("records",))
    assert (got.problems, got.rejected) == (ref.problems, ref.rejected)
    if got.table.records is None:  # taken typed: no row the per-row reader rejects
        assert ref.problems == []


def test_labels_not_asked_for_are_checked_and_not_kept(qvh_gt, tmp_path):
    """``read_truth(..., labels=False)`` (evaluate, calibrate): the same columns without
    the highlight labels, from the lean read and from the per-row reader alike; a
    malformed label is still the per-row reader's to reject, with its message."""
    from cover.io.formats import read_truth

    kept, dropped = read_truth(qvh_gt).truth, read_truth(qvh_gt, labels=False).truth
    assert kept.saliency is not None and dropped.saliency is None
    same_tables(dropped.table(), kept.table(), skip=("truth_saliency",))
    lines = qvh_gt.read_bytes().splitlines()
    row = json.loads(lines[2])
    row["saliency_scores"][0] = [1, 2]
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join([*lines[:2], json.dumps(row).encode(), *lines[3:]]) + b"\n")
    got = [read_truth(bad, labels=keep, on_error="reject") for keep in (True, False)]
    assert got[1].truth.saliency is None and got[0].truth.saliency is not None
    assert got[0].problems == got[1].problems
    assert [(p.line, p.action) for p in got[1].problems] == [(3, "rejected")]
    assert "saliency_scores" in got[1].problems[0].problem
    same_tables(got[1].truth.table(), got[0].truth.table(), skip=("truth_saliency",))
