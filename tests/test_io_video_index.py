"""``--videos`` durations held as sorted UTF-8 bytes (:class:`VideoIndex`): a batch's
lookup gives what the whole text index gave, and the JSON-lines reader folds its chunks
into the same columns however often it folds."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import example_dir
from cover.data.join import fill_durations
from cover.data.table import GroundingTable
from cover.errors import InputError
from cover.io import durations, jsonl_batch, qvhighlights
from cover.io.durations import read_video_index
from cover.io.video_index import VideoIndex

_VID = st.text(alphabet=st.sampled_from(["a", "b", "é", "𝄞", "Z", "0"]), min_size=1,
               max_size=4)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(known=st.lists(st.tuples(_VID, st.sampled_from([10.0, 20.5, 30.0])), max_size=12),
       asked=st.lists(_VID, max_size=12))
def test_known_gives_the_first_duration_of_each_asked_vid(known, asked):
    """Each distinct asked vid that the (unsorted, repeating) pairs hold, sorted, with
    the duration of its first pair, as a dict filled with setdefault would say."""
    first: dict[str, float] = {}
    for v, t in known:
        first.setdefault(v, t)
    index = VideoIndex.of(np.array([v for v, _ in known], dtype=str),
                          np.array([t for _, t in known], dtype=np.float64))
    vid, t = index.known(np.array(asked, dtype=str))
    want = sorted({v for v in asked if v in first})
    assert vid.tolist() == want and t.tolist() == [first[v] for v in want]
    assert index.texts()[0].tolist() == sorted(v for v, _ in known)


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(known=st.lists(st.tuples(_VID, st.sampled_from([10.0, 20.5])), max_size=8,
                      unique_by=lambda p: p[0]),
       rows=st.lists(st.tuples(_VID, st.sampled_from([np.nan, 10.0, 20.5])), min_size=1,
                     max_size=10))
def test_a_batch_lookup_fills_as_the_whole_index_does(known, rows):
    """fill_durations with only a batch's known vids keeps, fills and rejects the same
    rows with the same messages as with every video of the file."""
    vids = np.array([v for v, _ in known] or ["zz"], dtype=str)
    t = np.array([d for _, d in known] or [1.0])
    table = GroundingTable.from_arrays(
        qid=np.arange(len(rows)).astype(str), vid=np.array([v for v, _ in rows], dtype=str),
        duration=np.array([d for _, d in rows]), pred_start=np.zeros(len(rows)),
        pred_end=np.full(len(rows), 5.0), on_error="reject")
    whole, whole_found = fill_durations(table, vids, t, source="v.jsonl")
    part = VideoIndex.of(vids, t).known(table.vid)
    batch, batch_found = fill_durations(table, *(part if part[0].size else (None, None)),
                                        source="v.jsonl")
    assert batch.qid.tolist() == whole.qid.tolist()
    assert batch.duration.tolist() == whole.duration.tolist()
    assert [str(p) for p in batch_found] == [str(p) for p in whole_found]


_ROW = st.fixed_dictionaries({"vid": st.sampled_from([f"v{i}" for i in range(9)] + ["é", 7]),
                              "duration": st.sampled_from([10, 10.0, 20.5, 10.0000001])})


@settings(max_examples=80, deadline=None, derandomize=True, database=None)
@given(rows=st.lists(_ROW, min_size=2, max_size=40))
def test_folding_small_parts_reads_as_the_per_row_reader(tmp_path_factory, rows):
    """With lines read 2 at a time and a part made every 3 rows, folds happen often
    (videos met again in later folds, spans widening across them): the result, or the
    per-row reader's message for two durations of one video, is the per-row reader's."""
    path = example_dir(tmp_path_factory) / "gt.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(durations, "_GATHER", 3)
        mp.setattr(jsonl_batch, "CHUNK_LINES", 2)
        try:
            want = qvhighlights.read_durations(path)
        except InputError as exc:
            with pytest.raises(InputError) as got:
                read_video_index(path)
            assert str(got.value) == str(exc)
            return
        index = read_video_index(path)
    assert index.vid.dtype.kind == "S"  # bytes, not 4-byte text
    vid, t = index.texts()
    assert vid.tolist() == want[0].tolist() and t.tolist() == want[1].tolist()


_VALUE = st.one_of(st.none(), st.booleans(), st.sampled_from(["v1", "é", "", " v2"]),
                   st.integers(-3, 3), st.integers(2**63 - 2, 2**64 + 2),
                   st.sampled_from([10.0, 20.5, 0.0, -1.0, 1e308]),
                   st.lists(st.integers(0, 2**65), max_size=2))
_LINE = st.one_of(
    st.builds(lambda v, d, extra: json.dumps({"vid": v, "duration": d, **extra}).encode(),
              st.sampled_from(["v1", "v2", 7, 2**64, True]) | _VALUE,
              st.sampled_from([10, 10.0, 20.5]) | _VALUE,
              st.dictionaries(st.sampled_from(["relevant_windows", "query", "qid"]), _VALUE,
                              max_size=2)),
    st.sampled_from([b'{"vid": "v1", "vid": "v2", "duration": 10}',  # the last one counts
                     b'{"vid": "v1", "query": "\xff", "duration": 10}',  # not UTF-8
                     b'{"vid": "v1", "duration": NaN}', b'[1, 2]', b'{"vid": "v1"}',
                     b'{"vid": "v3", "duration": 10, "windows": [[1e400, 2]]}']))


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@example(lines=[b'{"vid": "v1", "vid": "v2", "duration": 10}', b'{"vid": 7, "duration": 3}'])
@given(lines=st.lists(_LINE, min_size=1, max_size=6))
def test_lean_lines_read_as_the_per_row_reader_on_any_line(tmp_path_factory, lines):
    """The lean read decodes only vid and duration: on lines whose other fields, numbers
    or bytes the two parsers could read apart (an integer past 64 bits, a duplicated key,
    a byte that is not UTF-8, NaN, a number past float range, an odd type) it gives the
    per-row reader's durations, or leaves the file to it (None)."""
    path = example_dir(tmp_path_factory) / "gt.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    lean = durations._lines_lean(path)
    try:
        want = qvhighlights.read_durations(path)
    except InputError:
        assert lean is None  # the per-row reader's message, never a table
        return
    if lean is not None:
        vid, t = lean.texts()
        assert vid.tolist() == want[0].tolist() and t.tolist() == want[1].tolist()


@pytest.mark.parametrize("rel", [
    "lighthouse/charades_test_release.jsonl",  # JSON lines, read lean
    "lighthouse/activitynet_val_release.jsonl",
    "qvhighlights/annotations/highlight_val_release.jsonl",
    "charades_sta/annotations/charades.json",  # a document: vid -> {"duration": ...}
])
def test_real_durations_files_index_as_their_readers_read_them(data_dir, rel):
    """Golden: the index of a real --videos file holds every video of the per-row reader
    (or the document), sorted, with the same durations bit for bit."""
    path = data_dir / rel
    got = read_video_index(path)
    vid, t = got.texts()
    if path.suffix == ".json":
        doc = json.loads(path.read_text())
        want = sorted((v, float(d["duration"])) for v, d in doc.items())
    else:
        v, d = qvhighlights.read_durations(path)
        want = sorted(zip(v.tolist(), d.tolist(), strict=True))
    assert list(zip(vid.tolist(), t.tolist(), strict=True)) == want
    assert got.vid.dtype.kind == "S"  # held as UTF-8 bytes, not numpy text
