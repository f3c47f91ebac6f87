"""Video durations from a JSON-lines file: streamed, per video, as the per-row reader
gives them, and the per-row reader's message for anything it rejects."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import example_dir
from cover.errors import InputError
from cover.io import durations, qvhighlights
from cover.io.durations import read_video_durations

_ROW = st.fixed_dictionaries({}, optional={
    "vid": st.sampled_from(["v1", "v2", "é3", 7]),
    "duration": st.sampled_from([10, 10.0, 20.5, 7.25]),
    "qid": st.integers(0, 9)})


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(rows=st.lists(_ROW, min_size=2, max_size=12))  # one line: a JSON document
def test_streamed_durations_equal_the_per_row_reader(tmp_path_factory, rows):
    path = example_dir(tmp_path_factory) / "gt.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _same_as_per_row(path)  # a message: no row with both, or two durations for one video


def _same_as_per_row(path) -> str | None:
    """Assert that ``path``'s durations are the per-row reader's, or its message (then
    returned)."""
    try:
        want = qvhighlights.read_durations(path)
    except InputError as exc:
        with pytest.raises(InputError) as got:
            read_video_durations(path)
        assert str(got.value) == str(exc)
        return str(exc)
    vid, t = read_video_durations(path)
    assert vid.tolist() == want[0].tolist() and t.tolist() == want[1].tolist()
    return None


def test_a_clean_file_is_not_read_whole(tmp_path, monkeypatch):
    """A clean file (here gzipped) never reaches the per-row reader, which holds
    every parsed row."""
    path = tmp_path / "gt.jsonl"
    path.write_bytes(gzip.compress(b"".join(
        json.dumps({"qid": i, "vid": f"v{i // 3}", "duration": 30 + i // 3}).encode() + b"\n"
        for i in range(3000))))
    monkeypatch.setattr(durations, "read_durations", lambda p: pytest.fail("read whole"))
    vid, t = read_video_durations(path)
    assert vid.size == 1000 and t[np.searchsorted(vid, "v10")] == 40.0


BAD_LINES = [
    ('{"vid": "v", "duration": -1}', "vid v: duration must be a finite number > 0, got -1"),
    ('{"vid": "v", "duration": true}', "vid v: duration must be a finite number > 0, got true"),
    ('{"vid": " v", "duration": 3}', "vid"),
    # A line that cannot be read is named, never skipped: its video's duration would be
    # lost without a word (every row of that video then rejected for want of one).
    ('{"vid": "v", "duration": ', "malformed JSON"),
    (b'{"vid": "v", "query": "\xff", "duration": 3}', "not UTF-8 text (byte 0xff"),
]


@pytest.mark.parametrize("line, why", BAD_LINES)
def test_a_bad_row_gets_the_per_row_message(tmp_path, line, why):
    path = tmp_path / "gt.jsonl"
    text = line if isinstance(line, bytes) else line.encode()
    path.write_bytes(b'{"vid": "a", "duration": 3}\n' + text + b"\n")
    message = _same_as_per_row(path)
    assert message is not None and why in message and f"{path}:2:" in message


@pytest.mark.parametrize("line, why", BAD_LINES)
def test_a_file_of_one_bad_line_gets_the_per_row_message(tmp_path, line, why):
    """One line is a JSON document or a JSON line: when it is not a document of
    durations, the per-row reader reads it and names line 1 (not the whole-document
    parser's column of the file)."""
    path = tmp_path / "gt.jsonl"
    path.write_bytes((line if isinstance(line, bytes) else line.encode()) + b"\n")
    message = _same_as_per_row(path)
    assert message is not None and why in message and f"{path}:1" in message


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(rows=st.lists(_ROW, min_size=2, max_size=8), indent=st.sampled_from([" ", "  ", "\t"]))
def test_indented_json_lines_are_read_as_lines(tmp_path_factory, rows, indent):
    """Lines that open with blanks are JSON lines all the same (not a document followed
    by more): the per-row reader's durations or message."""
    path = example_dir(tmp_path_factory) / "gt.jsonl"
    path.write_text("".join(indent + json.dumps(r) + "\n" for r in rows))
    _same_as_per_row(path)


@pytest.mark.parametrize("typed", [True, False])
def test_a_video_id_too_long_in_a_durations_document_is_an_error_naming_it(tmp_path, typed):
    """A durations document (charades.json's shape) keyed by an id of a million
    characters: an error naming it by its start, not a column of every video as wide as
    it (37 GB for charades.json's 9,849 videos). Both reads: the typed one, and the
    whole parse a document with any other entry (here a list) goes to."""
    long = "K" * 1_000_000
    doc = {"3MSZA": {"duration": 30.96}, long: {"duration": 12.0}}
    if not typed:
        doc["odd"] = {"duration": 5.0, "extra": [1, 2]}
    path = tmp_path / "charades.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"charades.json: video K{40}\.\.\. \(1,000,000 "
                                         r"characters\): vid is 1,000,000 characters long"):
        durations.read_video_index(path)


def test_a_ground_truth_with_no_durations_is_named_as_not_a_durations_file(data_dir):
    """Charades-STA's text ground truth given as --videos (it is the --gt of the same
    run): the message says it is not a durations file, what one holds, and where
    Charades-STA's durations are, not only that its lines are malformed JSON."""
    path = data_dir / "charades_sta/annotations/charades_sta_test.txt"
    with pytest.raises(InputError) as got:
        durations.read_video_index(path)
    head, *rows = str(got.value).splitlines()
    assert head.startswith(f"{path}: not a durations file (none of its lines is JSON): "
                           "JSON lines with vid and duration, or a JSON object vid -> ")
    assert head.endswith("its videos' are in charades.json")
    assert rows == [f"  {path}:1: malformed JSON (Extra data at column 2)",
                    f"  {path}:2: malformed JSON (Extra data at column 2)",
                    "  ... and 3718 more"]


def test_a_document_whose_videos_have_no_duration_field_says_so(data_dir, tmp_path):
    """UAG-OOPS' ground truth (clip name -> start_time, end_time, ...) given as --videos:
    the error says its entries have no duration field and what a durations file holds,
    not "duration must be a finite number > 0, got nan". A duration that is there but
    no number keeps its own message."""
    path = data_dir / "oops_uag/annotations/uag_oops_dataset_v1_start_time_fixed.json"
    with pytest.raises(InputError) as got:
        durations.read_video_index(path)
    said = str(got.value)
    assert said.startswith(f"{path}: video 34 Funny Kid Nominees - FailArmy Hall Of Fame "
                           "(May 2017)0 has no duration field (its fields: description, ")
    assert "not a durations file: JSON lines with vid and duration, or a JSON object" in said
    assert "got nan" not in said
    bad = tmp_path / "d.json"
    bad.write_text('{"v1": {"duration": 12.5}, "v2": {"duration": "long"}}')
    with pytest.raises(InputError, match=r"video v2: duration must be a finite number > 0, "
                                         r"got long"):
        durations.read_video_index(bad)
