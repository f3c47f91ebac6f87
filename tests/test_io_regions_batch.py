"""Bulk reading of a batch of certified region lines (``cover evaluate``): it either
gives exactly the per-row reader's regions, table and counts or leaves the batch to it;
it never accepts a row the per-row reader rejects."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from bulk_rows import encode
from cover.data.table import GroundingTable
from cover.errors import InputError
from cover.intervals import Intervals
from cover.io.jsonl import parse_json_lines
from cover.io.regions_batch import decode_regions, load_regions
from cover.io.regions_jsonl import LoadedRegions, regions_from_rows
from cover.io.seen import SeenIds
from cover.ragged import Ragged

MISSING = object()
numbers = st.one_of(st.floats(0, 150, allow_nan=False), st.integers(0, 150))
odd = st.sampled_from([math.nan, math.inf, -1.0, 200.0, True, "1.5", None, [1.0], 10**400])
maybe = st.one_of(numbers, numbers, numbers, odd)
ids = st.one_of(st.integers(-5, 30), st.sampled_from(["a", "b", "q1", "7", "x y"]))
odd_ids = st.sampled_from(["", " a", 2.0, True, None, [1], MISSING])


def pairs(number: st.SearchStrategy[object], width: int = 2) -> st.SearchStrategy[object]:
    return st.lists(st.lists(number, min_size=width, max_size=width), max_size=3)


def clean_region() -> st.SearchStrategy[object]:
    return st.lists(st.tuples(st.floats(0, 100), st.floats(0, 100)).map(sorted).map(list),
                    max_size=3)


def block(clean: bool) -> st.SearchStrategy[dict[str, object]]:
    num = numbers if clean else maybe
    return st.fixed_dictionaries({
        # clean: every status evaluate reads, a rejected row with its empty region (a miss)
        "status": st.sampled_from(["certified", "refused", "abstained", "rejected"]) if clean else
        st.sampled_from(["certified", "refused", "rejected", None, ["certified"], {"a": 1}]),
        "region": clean_region() if clean else st.one_of(
            clean_region(), pairs(num), pairs(num, 3), st.sampled_from([None, 5, "[]"])),
        "refused": st.sampled_from([True, False]) if clean else st.sampled_from(
            [True, False, None, 1, MISSING]),
        "duration": st.sampled_from([100.0, 150, 120.5]) if clean else st.one_of(
            num, st.sampled_from([0, MISSING])),
        "score": st.just("norm") if clean else st.sampled_from(["norm", "sls"]),
        "rule": st.just("split"),
        "alpha": st.just(0.1) if clean else st.sampled_from([0.1, 0.2, MISSING]),
        "k": st.just(9),
        "n_calibration": st.just(10),
        "threshold": st.one_of(st.floats(0, 9), st.sampled_from(["inf", 2])) if clean else
        st.one_of(num, st.sampled_from(["inf", "-inf", "x", [2.0], {"v": 2}, MISSING])),
        "in_calibration": st.sampled_from([MISSING, True]) if clean else st.sampled_from(
            [MISSING, True, False, 1]),
        "reason": st.sampled_from([MISSING, "no answer", 3]) if clean else st.just(MISSING),
    }).map(lambda d: {k: v for k, v in d.items() if v is not MISSING}).map(
        lambda d: _plain(d) if clean else d)


def _plain(block: dict[str, object]) -> dict[str, object]:
    """A clean block as certify writes it: ``refused`` agreeing with the status, a
    rejected row's region empty, a reason on abstained rows only."""
    out = {**block, "refused": block["status"] == "refused"}
    if out["status"] == "rejected":
        out["region"] = []
    if out["status"] not in ("abstained", "rejected"):
        out.pop("reason", None)
    return out


def rows(clean: bool) -> st.SearchStrategy[dict[str, object]]:
    num = numbers if clean else maybe
    wins = st.lists(st.tuples(st.floats(0, 50), st.floats(0, 50), st.floats(0, 1)).map(
        list), max_size=4)
    return st.fixed_dictionaries({
        "qid": ids if clean else st.one_of(ids, ids, odd_ids),
        "vid": ids if clean else st.one_of(ids, ids, odd_ids),
        "query": st.sampled_from([MISSING, "a query", None]),
        "pred_relevant_windows": st.one_of(wins, st.just(MISSING)) if clean else st.one_of(
            wins, pairs(num), pairs(num, 3), st.sampled_from([None, MISSING, 5, [[1, 2, 3, 4]]])),
        "pred_saliency_scores": st.lists(num, max_size=4),
        # another layout's prediction (DisTime's): the window of a row without the above
        "start": st.one_of(numbers, st.just(MISSING)) if clean else st.one_of(
            maybe, st.just(MISSING)),
        "end": st.one_of(numbers, st.just(MISSING)) if clean else st.one_of(
            maybe, st.just(MISSING)),
        "cover": block(clean) if clean else st.one_of(block(False), block(False),
                                                      st.sampled_from([MISSING, None, 3])),
    }).map(lambda d: {k: v for k, v in d.items() if v is not MISSING})


def as_batch(recs: list[dict[str, object]], extra: list[bytes] = ()) -> list[tuple[int, bytes]]:
    return [(i + 3, ln) for i, ln in enumerate([encode(r) for r in recs] + list(extra))]


def seen_with(qids: list[str]) -> SeenIds:
    s = SeenIds()
    s.add_lines(np.array(qids, dtype=str), np.arange(1, len(qids) + 1, dtype=np.int64))
    return s


def same(a: LoadedRegions, b: LoadedRegions) -> None:
    for f in dataclasses.fields(GroundingTable):
        if f.name == "records":  # the bulk read keeps no parsed rows
            continue
        x, y = getattr(a.table, f.name), getattr(b.table, f.name)
        _same_value(x, y, f.name)
    for name in ("duration", "refused", "threshold"):
        _same_value(getattr(a.regions, name), getattr(b.regions, name), name)
    _same_value(a.regions.intervals, b.regions.intervals, "intervals")
    reasons = [r.abstain_reason for r in (a.regions, b.regions)]
    assert (reasons[0] is None) == (reasons[1] is None), "abstain_reason"
    if reasons[0] is not None:
        _same_value(reasons[0], reasons[1], "abstain_reason")
    assert (a.regions.family, a.regions.alpha) == (b.regions.family, b.regions.alpha)
    assert a.regions.threshold_end is None and b.regions.threshold_end is None
    assert a.problems == b.problems
    assert (a.rejected_at_certify, a.meta, a.meta_line) == (
        b.rejected_at_certify, b.meta, b.meta_line)
    _same_value(a.in_calibration, b.in_calibration, "in_calibration")


def _same_value(x: object, y: object, name: str) -> None:
    if isinstance(x, Ragged | Intervals):
        for part in ("values", "offsets") if isinstance(x, Ragged) else ("starts", "ends",
                                                                         "offsets"):
            np.testing.assert_array_equal(getattr(x, part), getattr(y, part), err_msg=name)
    elif isinstance(x, np.ndarray):
        assert isinstance(y, np.ndarray) and x.dtype == y.dtype, name
        if x.dtype == object:
            assert x.tolist() == y.tolist(), name
        else:
            np.testing.assert_array_equal(x, y, err_msg=name)
    else:
        assert x == y, name


def per_row(batch, seen, first):
    try:
        return regions_from_rows(parse_json_lines("r.jsonl", batch), seen=seen, first=first)
    except InputError as exc:
        return str(exc)


FIRSTS = st.sampled_from([None, ({"score": "norm", "rule": "split", "alpha": 0.1, "k": 9,
                                  "n_calibration": 10, "calibration_sha256": None}, 1)])


@given(st.lists(rows(clean=False), min_size=1, max_size=8),
       st.lists(st.sampled_from([b"not json", b"[1, 2]", b'{"qid": NaN}', b"  "]),
                max_size=1),
       st.lists(st.sampled_from(["1", "a", "q9"]), max_size=2), FIRSTS)
def test_bulk_read_equals_the_per_row_reader_or_defers_to_it(recs, extra, earlier, first):
    batch = as_batch(recs, extra)
    seen_a, seen_b = seen_with(earlier), seen_with(earlier)
    ref = per_row(batch, seen_b, first)
    fast = decode_regions("r.jsonl", batch, seen=seen_a, first=first)
    if fast is None:
        assert len(seen_a) == len(set(earlier))  # a deferred batch leaves the qids seen alone
        return
    assert not isinstance(ref, str), ref  # never accepts a file the per-row reader refuses
    assert ref.problems == []  # never accepts a row the per-row reader rejects
    same(fast, ref)
    ids = seen_a.array()  # the same ids seen, each with the same first line
    assert ids.tolist() == seen_b.array().tolist()
    assert seen_a.add_lines(ids, None)[1].tolist() == seen_b.add_lines(ids, None)[1].tolist()


@given(st.lists(rows(clean=False), min_size=1, max_size=8), FIRSTS)
def test_load_regions_gives_the_per_row_result_messages_included(recs, first):
    batch = as_batch(recs)
    ref = per_row(batch, SeenIds(), first)
    try:
        got = load_regions("r.jsonl", batch, seen=SeenIds(), first=first)
    except InputError as exc:
        assert str(exc) == ref
        return
    assert not isinstance(ref, str)
    same(got, ref)


@given(st.lists(rows(clean=True), min_size=1, max_size=8).map(
    lambda rs: [{**r, "qid": i} for i, r in enumerate(rs)]))
def test_clean_rows_are_read_in_bulk(recs):
    batch = as_batch(recs)
    fast = decode_regions("r.jsonl", batch, seen=SeenIds())
    assert fast is not None
    same(fast, per_row(batch, SeenIds(), None))


def test_rows_rejected_at_certify_are_counted_in_bulk():
    good = {"qid": 1, "vid": "v", "pred_relevant_windows": [[1, 2, 0.5]],
            "cover": {"status": "certified", "region": [[0, 3]], "refused": False,
                      "duration": 10, "score": "norm", "threshold": 1.0}}
    bad = {"cover": {"status": "rejected", "region": None, "reason": "x", "line": 4}}
    batch = as_batch([good, bad, {**good, "qid": 2}])
    fast = decode_regions("r.jsonl", batch)
    assert fast is not None and fast.rejected_at_certify == 1
    np.testing.assert_array_equal(fast.table.line, [3, 5])
    same(fast, per_row(batch, None, None))


@pytest.mark.parametrize("change", [
    {"qid": 1},  # a repeated qid
    {"vid": None},
    {"cover": {"status": "certified", "region": [[0, 30]], "duration": 10}},  # outside [0, T]
    {"pred_relevant_windows": [[1, 2]]},  # another width than the rows before
])
def test_a_bad_row_anywhere_sends_the_batch_to_the_per_row_reader(change):
    row = {"qid": 1, "vid": "v", "pred_relevant_windows": [[1, 2, 0.5]],
           "cover": {"status": "certified", "region": [[0, 3]], "duration": 10}}
    batch = as_batch([row] + [{**row, "qid": i} for i in range(2, 200)] + [{**row, **change}])
    assert decode_regions("r.jsonl", batch) is None
    assert decode_regions("r.jsonl", batch[:-1]) is not None


def test_a_row_of_another_layout_gives_its_start_and_end_as_its_window() -> None:
    """pred_relevant_windows when the row has it (null: no window); else [[start, end]]
    when both are numbers (a boolean, a string or one alone: no window); the bulk read
    and the per-row reader alike."""
    blk = {"status": "certified", "region": [[0.0, 9.0]], "refused": False,
           "duration": 10.0, "score": "norm", "rule": "split", "alpha": 0.1, "k": 9,
           "n_calibration": 10, "threshold": 1.0}
    recs = [{"qid": 1, "vid": "v", "start": 2, "end": 3.5, "cover": blk},
            {"qid": 2, "vid": "v", "start": 2.0, "end": "3", "cover": blk},
            {"qid": 3, "vid": "v", "start": True, "end": 3.0, "cover": blk},
            {"qid": 4, "vid": "v", "start": 2.0, "cover": blk},
            {"qid": 5, "vid": "v", "pred_relevant_windows": [[1.0, 2.0, 0.5]], "start": 7.0,
             "end": 8.0, "cover": blk},
            {"qid": 6, "vid": "v", "pred_relevant_windows": None, "start": 7.0, "end": 8.0,
             "cover": blk}]
    batch = as_batch(recs)
    want = regions_from_rows(parse_json_lines("r.jsonl", batch))
    got = decode_regions("r.jsonl", batch)
    assert got is not None  # every row plainly read: in bulk
    same(got, want)
    w = want.table.pred_windows
    assert w.offsets.tolist() == [0, 1, 1, 1, 1, 2, 2]
    assert w.values[:, :2].tolist() == [[2.0, 3.5], [1.0, 2.0]]
    # every row of another layout (a DisTime file): read as two columns, the same values
    # to the bit (the lone window's score -0.0 included)
    flat = as_batch([{"qid": i, "vid": "v", "start": float(i), "end": i + 2, "cover": blk}
                     for i in range(5)])
    want = regions_from_rows(parse_json_lines("r.jsonl", flat))
    got = decode_regions("r.jsonl", flat)
    assert got is not None
    same(got, want)
    a, b = got.table.pred_windows.values, want.table.pred_windows.values
    assert a.tobytes() == b.tobytes() and np.signbit(a[:, 2]).all()


def test_windows_named_by_columns_are_read_row_by_row_and_named_in_problems() -> None:
    """--columns on JSON-lines regions, in the mapping language of the named layouts:
    windows=SOURCE (with scores=SOURCE; |json decodes a string; a record certify echoed
    under "value" is read there) or start=,end=; a value that is not numbers rejects its
    row naming the source; any other mapping is refused."""
    from cover.io.regions_batch import load_regions
    from cover.io.regions_windows import windows_of

    blk = {"status": "certified", "region": [[0.0, 9.0]], "refused": False,
           "duration": 10.0, "score": "norm", "rule": "split", "alpha": 0.1, "k": 9,
           "n_calibration": 10, "threshold": 1.0}
    recs = [{"qid": 1, "vid": "v", "p": {"w": [[1.0, 2.0, 0.9]], "t": [3.0, 4.0]},
             "s": "[[5, 6]]", "cover": blk},
            {"qid": 2, "vid": "v", "p": {"w": "1 to 2", "t": ["3", 4.0]}, "s": "[[5",
             "cover": blk},
            {"qid": 3, "vid": "v", "value": [{"ts": [7.0, 8.0], "sc": 0.5}], "cover": blk}]
    batch = as_batch(recs[:2])

    def read(spec: str, rows: list[tuple[int, bytes]] = batch) -> LoadedRegions:
        return load_regions("r.jsonl", rows, windows=windows_of(spec))

    got = read("windows=p.w")
    assert got.table.qid.tolist() == ["1"]  # the second row rejected, naming its source
    assert [p.problem for p in got.problems] == [
        "p.w must look like [[start, end(, score)], ...] of numbers"]
    assert got.table.pred_windows.values.tolist() == [[1.0, 2.0, 0.9]]
    got = read("start=p.t.0,end=p.t.1")
    assert got.table.qid.tolist() == ["1"]  # "3" is no number
    assert got.table.pred_windows.values[:, :2].tolist() == [[3.0, 4.0]]
    got = read("windows=s|json")
    assert got.table.qid.tolist() == ["1"]  # "[[5" is not JSON: its row is rejected
    assert [p.problem for p in got.problems] == [
        "s|json must look like [[start, end(, score)], ...] of numbers"]
    got = read("windows=*.ts,scores=*.sc", as_batch(recs[2:]))
    assert got.table.pred_windows.values.tolist() == [[7.0, 8.0, 0.5]]
    for bad in ("vid=x", "qid=x", "start=a", "windows=a,start=b,end=c", "scores=a", ""):
        with pytest.raises(InputError, match="--columns"):
            windows_of(bad)


def test_the_layout_of_certified_rows_is_detected_from_a_row(tmp_path) -> None:
    """Rows certify echoed from a named layout's records (their own field names): the one
    layout whose sources read a base prediction from the row; none for rows that carry
    pred_relevant_windows or start and end numbers, or nothing at all (--compact)."""
    from cover.io.regions_windows import detected_layout

    blk = {"cover": {"status": "certified"}}
    rows = {
        "shuffling-videos": {"qid": "v-0", "vid": "v", "sentence": "x",
                             "timestamp": [1.0, 2.0], "score": 0.5, **blk},
        "distime-results": {"qid": "v-0", "vid": "v", "query": "x",
                            "timestamp": [[1.0, 2.0]], **blk},
        "distime-list": {"qid": "QVHighlight_7", "vid": "v", "query": "x",
                         "prediction": "[[1.0, 2.0]]", "duration": 150.0, **blk},
        "tgn-proposals": {"qid": "v-1", "vid": "v",
                          "value": [{"timestamp": [1.0, 2.0], "score": 0.4}], **blk},
    }
    for name, row in rows.items():
        assert detected_layout(row) == name, name
    for row in ({"qid": 1, "vid": "v", "pred_relevant_windows": [[1, 2, 0.5]], **blk},
                {"qid": 1, "vid": "v", "start": 1.0, "end": 2.0, **blk},
                {"qid": 1, "vid": "v", **blk},  # --compact
                {"qid": "QVHighlight_7", "prediction": "[[1.0", **blk},  # not JSON
                None):
        assert detected_layout(row) is None, row
    # The API reads them as the command does: TGN's proposals under "value"
    from cover.io import read_regions

    full = {"status": "certified", "region": [[0.0, 9.0]], "refused": False,
            "duration": 10.0, "score": "norm", "rule": "split", "alpha": 0.1, "k": 9,
            "n_calibration": 10, "threshold": 1.0}
    path = tmp_path / "r.jsonl"
    path.write_text("".join(encode({"qid": f"v-{i}", "vid": "v", "value": [
        {"timestamp": [1.0, 2.0 + i], "score": 0.4}], "cover": full}).decode() + "\n"
        for i in range(3)))
    got = read_regions(path).table.pred_windows
    assert got.offsets.tolist() == [0, 1, 2, 3]
    assert got.values.tolist() == [[1.0, 2.0, 0.4], [1.0, 3.0, 0.4], [1.0, 4.0, 0.4]]
