"""cover.io.durations_document: the typed read of a durations document gives what the
whole-document read gives, or leaves the document to it."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from conftest import example_dir
from cover.errors import InputError
from cover.io import durations
from cover.io.durations_document import document_durations

# Raw JSON text, so numbers are written as a file may write them (an overflowing one, an
# integer past 64 bits, an exponent) and bytes that are not UTF-8 can be spliced in.
NUMBERS = st.sampled_from([
    "1", "30", "23.21", "0", "-4", "1e2", "1E+2", "2.5e-3", "1e400", "1.8e308", "18e307",
    "1.7976931348623157e308", "1e-400", "9007199254740993", "123456789012345678901234567890",
    "1" * 210, "-0.0", "NaN", "Infinity", "true", "false", "null"])
TEXTS = st.sampled_from(['"a"', '"training"', '"E123"', '"\\u00e9t\\u00e9"', '"\\ud800"',
                         '"x\\"y"', '""', '"1e999"'])
SCALARS = st.one_of(NUMBERS, TEXTS)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
    st.lists(st.tuples(st.sampled_from(["k", "actions", "t"]), inner), max_size=2).map(
        lambda kv: "{" + ", ".join(f'"{k}": {v}' for k, v in kv) + "}")), max_leaves=6)
FIELDS = st.sampled_from(["duration", "duration", "duration", "subset", "actions", "fps",
                          "num_frames", "timestamps", "sentences"])
# A duration msgspec reads as a float: most are good, some are not > 0.
DURATION = st.sampled_from(["1", "30", "23.21", "1e2", "2.5e-3", "9007199254740993",
                            "123456789012345678901234567890", "0", "-4", "-0.0"])
CHARADES = st.tuples(st.lists(st.tuples(FIELDS, SCALARS), max_size=2), DURATION,
                    st.lists(st.tuples(FIELDS, st.one_of(SCALARS, VALUES)), max_size=2)).map(
    lambda t: "{" + ", ".join([*(f'"{k}": {v}' for k, v in t[0]), f'"duration": {t[1]}',
                               *(f'"{k}": {v}' for k, v in t[2])]) + "}")
# Mostly videos as charades.json writes them (the typed read's case), fields around.
ENTRY = st.one_of(CHARADES, CHARADES, CHARADES,
                  st.lists(st.tuples(FIELDS, VALUES), max_size=6).map(
                      lambda kv: "{" + ", ".join(f'"{k}": {v}' for k, v in kv) + "}"),
                  VALUES)
KEYS = st.sampled_from(["v1", "v2", "v3", "vid", "E002I", "\\u00e9", "b", "5e123"])


@st.composite
def any_documents(draw: st.DrawFn) -> bytes:
    """Any object of entries, mostly not a clean document of durations."""
    entries = draw(st.lists(st.tuples(KEYS, ENTRY), max_size=5))
    text = "{" + ", ".join(f'"{k}": {v}' for k, v in entries) + "}"
    data = text.encode()
    if draw(st.integers(0, 9)) == 0:  # a byte that is not UTF-8, somewhere
        at = draw(st.integers(0, len(data)))
        data = data[:at] + b"\xff" + data[at:]
    return data


#: What one entry of a clean document may be given to make it one the typed read must
#: leave to the whole read (or, for None, not).
TWISTS = [None, "overflow", "vid", "duration", "utf8", "tacos"]


@st.composite
def near_clean_documents(draw: st.DrawFn) -> bytes:
    """A document of videos as charades.json writes them, with at most one twist."""
    n = draw(st.integers(1, 4))
    keys = draw(st.lists(st.sampled_from(["v1", "v2", "v3", "E002I", "5e123"]),
                         min_size=n, max_size=n))
    durs = draw(st.lists(DURATION.filter(lambda d: not d.startswith(("0", "-"))),
                         min_size=n, max_size=n))
    entries = [{"subset": '"training"', "duration": d, "actions": "[[1, 2.5, 3.0]]"}
               for d in durs]
    twist, at = draw(st.sampled_from(TWISTS)), draw(st.integers(0, n - 1))
    if twist == "overflow":
        entries[at]["actions"] = f"[[1, {draw(st.sampled_from(NUMBERS_PAST_DOUBLE))}]]"
    elif twist == "vid":
        keys[at] = "vid"
    elif twist == "duration":
        entries[at]["duration"] = draw(st.sampled_from(["0", "-4", "-0.0", "true", '"3"',
                                                        "null", "[]"]))
    elif twist == "tacos":
        entries[0] |= {"timestamps": "[[0, 30]]", "sentences": '["a"]', "fps": "30",
                       "num_frames": "300"}
    text = "{" + ", ".join(f'"{k}": {{' + ", ".join(f'"{f}": {v}' for f, v in e.items())
                           + "}" for k, e in zip(keys, entries, strict=True)) + "}"
    data = text.encode()
    return data.replace(b"training", b"tr\xffaining", 1) if twist == "utf8" else data


NUMBERS_PAST_DOUBLE = ["1e400", "1.8e308", "18E+307", "-2e308", "1" * 320]


def _whole(path) -> object:
    """The whole-document read alone: its index or its message."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(durations, "document_durations", lambda data: None)
        try:
            return durations.read_video_index(path)
        except InputError as exc:
            return str(exc)


@settings(max_examples=150, deadline=None)
@given(st.one_of(any_documents(), near_clean_documents()))
def test_the_typed_read_is_the_whole_read_or_leaves_it(tmp_path_factory, data):
    path = example_dir(tmp_path_factory) / "videos.json"
    path.write_bytes(data)
    want = _whole(path)
    lean = document_durations(data)
    try:
        got: object = durations.read_video_index(path)
    except InputError as exc:
        got = str(exc)
    if isinstance(want, str):
        assert lean is None and got == want
        return
    assert not isinstance(got, str), got
    assert got.vid.tolist() == want.vid.tolist() and np.array_equal(got.t, want.t)
    if lean is not None:  # the typed read alone gives the whole read's videos too
        event("typed read")
        assert durations.VideoIndex.of(np.array(lean[0], dtype=str), lean[1]).vid.tolist() \
            == want.vid.tolist()


def test_charades_durations_are_read_typed(data_dir):
    """The real charades.json takes the typed read, with the whole read's numbers."""
    path = data_dir / "charades_sta" / "annotations" / "charades.json"
    lean = document_durations(path.read_bytes())
    assert lean is not None and len(lean[0]) == 9848
    got, want = durations.read_video_index(path), _whole(path)
    assert not isinstance(want, str), want
    assert got.vid.tolist() == want.vid.tolist() and np.array_equal(got.t, want.t)


@pytest.mark.parametrize("literal", ["1e400", "1.8e308", "18E+307", "1" * 320])
def test_a_number_past_a_double_in_a_skipped_field_is_left_to_the_whole_read(literal):
    """orjson rejects it anywhere; msgspec would skip it: the typed read must not answer."""
    data = f'{{"v": {{"duration": 3, "actions": [[1, {literal}]]}}}}'.encode()
    assert document_durations(data) is None
    assert document_durations(b'{"v": {"duration": 3, "actions": [[1, 2.5]]}}') == (
        ["v"], pytest.approx(np.array([3.0])))


def test_a_tacos_split_with_durations_is_read_as_frames_over_fps(tmp_path):
    """A TACoS split is read as TACoS (``num_frames / fps``, ".avi" dropped) even when
    its entries carry a duration too: the typed read leaves it to the whole read."""
    entry = {"timestamps": [[0, 30]], "sentences": ["a"], "fps": 30, "num_frames": 300,
             "duration": 99}
    data = json.dumps({"s13-d21.avi": entry}).encode()
    assert document_durations(data) is None
    path = tmp_path / "tacos.json"
    path.write_bytes(data)
    got = durations.read_video_index(path)
    assert got.vid.tolist() == [b"s13-d21"] and got.t.tolist() == [10.0]


def test_a_duration_that_is_a_list_is_named_not_a_crash(tmp_path):
    """Two videos whose durations are lists made a 2-D array of them (a numpy error);
    the first is named, with what it holds."""
    path = tmp_path / "videos.json"
    path.write_text('{"v1": {"duration": []}, "v2": {"duration": []}}')
    with pytest.raises(InputError, match=r"video v1: duration must be a finite number > 0, "
                                         r"got \[\]$"):
        durations.read_video_index(path)
