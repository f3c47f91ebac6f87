"""Every reader of the format registry, fuzzed: a table plus problems, or an InputError.

Each format starts from a small valid file; hypothesis then truncates it anywhere,
flips and inserts bytes, or puts a random JSON value at any place of the document.
Whatever comes out, the reader returns a :class:`Loaded` whose rows are accounted for
(kept + rejected <= rows read) or raises :class:`InputError` naming the file — never
any other exception. The JSON-lines readers have their own, deeper fuzz in
``test_io_fuzz.py``; the UAG-OOPS and Otani readers are fuzzed from real file heads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cover.errors import InputError
from cover.io import formats
from cover.io.otani import read_otani
from cover.io.qvhighlights import Loaded
from cover.io.uag_oops import read_oops_onsets, read_uag_answers, read_uag_ground_truth

DURATIONS = {"3MSZA": {"duration": 30.96}, "a": {"duration": 40.0}}

#: One small valid file per registered format: (role, file name, text).
VALID: dict[str, tuple[str, str, str]] = {
    "moment-detr": ("predictions", "p.jsonl", "\n".join(json.dumps(r) for r in [
        {"qid": 1, "vid": "v", "duration": 30, "pred_relevant_windows": [[1, 5, 0.9]],
         "pred_saliency_scores": [0.1, 0.2]},
        {"qid": 2, "vid": "w", "duration": 20, "pred_relevant_windows": [[2, 4, 0.5]]}])),
    "timechat-tvg": ("predictions", "p.json", json.dumps(
        {"1": {"timestamp": [[2.0, 5.0]], "query": "a b", "vid": "a.mp4"},
         "2": {"timestamp": [[1.0, 3.0]], "query": "c", "vid": "a.mp4"}})),
    "timechat-vhd": ("predictions", "p.json", json.dumps(
        [{"qid": 1, "vid": "v_a.mp4", "pred_saliency_scores": [0.1, 0.7, 0.2]}])),
    "lmms-eval-samples": ("predictions", "p.jsonl", json.dumps(
        {"doc_id": 0, "doc": {"video": "a.mp4", "caption": "x", "timestamp": [1, 2]},
         "filtered_resps": ["1.0 - 2.0 seconds"]})),
    "lmms-eval-submission": ("predictions", "p.json", json.dumps(
        {"a.mp4>>>x>>>[1, 2]": "It happens from 1.0 to 2.0 seconds."})),
    "moment-detr-gt": ("ground_truth", "g.jsonl", json.dumps(
        {"qid": 1, "query": "x", "duration": 30, "vid": "v", "relevant_windows": [[1, 5]]})),
    "moment-detr-gt-by-line": ("ground_truth", "g.jsonl", json.dumps(
        {"qid": 0, "query": "x", "duration": 30, "vid": "v", "relevant_windows": [[1, 5]]})),
    "charades-sta": ("ground_truth", "g.txt",
                     "3MSZA 24.3 30.4##person turn a light on.\na 1.0 5.5##a b c.\n"),
    "timeit-gt": ("ground_truth", "g.json", json.dumps({"annotations": [
        {"image_id": "a.mp4", "caption": "x", "timestamp": [1, 2], "id": 0}]})),
    "activitynet-captions": ("ground_truth", "g.json", json.dumps(
        {"v_a": {"duration": 55.0, "timestamps": [[0.2, 50.0], [3, 9]],
                 "sentences": ["x", "y"]}})),
    "tacos": ("ground_truth", "g.json", json.dumps(
        {"s.avi": {"timestamps": [[141, 354]], "sentences": ["x"], "fps": 29.4,
                   "num_frames": 7346}})),
    "charades-cd": ("ground_truth", "g.json", json.dumps(
        {"W": {"timestamps": [[28.0, 36.0]], "sentences": ["x"], "video_duration": 35.4}})),
    "charades-rf": ("ground_truth", "g.json", json.dumps(
        {"3M": {"duration": 30.9, "sts": [
            {"sentence": "x", "id": "3M-0", "timestamp": [24.3, 30.4], "no_answer": False},
            {"sentence": "y", "id": "3M-1", "timestamp": [0, 0], "no_answer": True}]}})),
    "uag-oops": ("ground_truth", "g.json", json.dumps(
        {"Fails (May 2017)0": {"video_path": "x/0.mp4", "start_time": 3.03, "end_time": 3.75,
                               "description": "x"},
         "Fails (May 2017)1": {"video_path": "x/1.mp4", "start_time": "1.5", "end_time": 7.0,
                               "description": "y"}}, indent=4)),
    # Nested layouts read by named mappings (cover.io.layouts): the example of each.
    "distime-by-video": ("predictions", "p.json", json.dumps(
        {"3MSZA": {"person turn a light on.": {"start": 14.96, "end": 29.79, "conf": 1}}})),
    "distime-results": ("predictions", "p.json", json.dumps({"results": {
        "v_a-0": {"video_id": "v_a", "anno_id": 0, "timestamp": [[0.02, 6.83]],
                  "query": "Two men"}}})),
    "distime-list": ("predictions", "p.json", json.dumps([
        {"qid": "QVHighlight_2579", "query": "A girl", "prediction": "[[82.04, 145.33]]",
         "target": "[[82, 150]]", "duration": 150.02}])),
    "shuffling-videos": ("predictions", "p.json", json.dumps({"version": "V0", "results": {
        "v_a": [{"sentence": "we see", "timestamp": [0.0, 2.0], "gt_timestamp": [0.0, 3.16],
                 "score": 1.76, "video_duration": 126.6}]}})),
    "tgn-proposals": ("predictions", "p.json", json.dumps({"results": {
        "JVLAZ-1": [{"timestamp": [0.5, 5.5], "score": 0.49},
                    {"timestamp": [11.5, 23.5], "score": 0.44}]}})),
    "predictions-wrapper": ("predictions", "p.json", json.dumps(
        {"config": {"window": 10}, "predictions": {"2579": [80.0, 140.0]}})),
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=3),
    max_leaves=6)


def test_every_registered_format_is_fuzzed():
    assert set(VALID) == {f.name for f in formats.FORMATS}


def _read(name: str, path: Path, durations: Path) -> Loaded | None:
    role = VALID[name][0]
    try:
        got = formats.read(path, role, format=name,  # type: ignore[arg-type]
                           options=formats.Options(on_error="reject", durations=durations))
    except InputError as exc:
        assert str(exc)  # a message, never empty
        return None
    loaded = got.loaded
    assert isinstance(loaded, Loaded)
    assert len(loaded.table) >= 0 and loaded.n_rejected >= 0
    assert all(p.path for p in loaded.problems)
    return loaded


def _files(tmp: Path, name: str, data: bytes) -> tuple[Path, Path]:
    path = tmp / VALID[name][1]
    path.write_bytes(data)
    durations = tmp / "charades.json"
    durations.write_text(json.dumps(DURATIONS))
    return path, durations


@pytest.mark.parametrize("name", sorted(VALID))
def test_the_valid_file_reads(name, tmp_path):
    loaded = _read(name, *_files(tmp_path, name, VALID[name][2].encode()))
    assert loaded is not None and len(loaded.table) >= 1


def _mutate(doc: Any, path: list[int], value: Any) -> Any:
    """``doc`` with the node found by walking ``path`` (indices mod size) set to ``value``."""
    if not path or not isinstance(doc, (dict, list)) or not doc:
        return value
    if isinstance(doc, dict):
        key = list(doc)[path[0] % len(doc)]
        return {**doc, key: _mutate(doc[key], path[1:], value)}
    i = path[0] % len(doc)
    return [*doc[:i], _mutate(doc[i], path[1:], value), *doc[i + 1:]]


SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("name", sorted(VALID))
@SETTINGS
@given(data=st.data())
def test_truncated_or_damaged_bytes(name, tmp_path, data):
    raw = VALID[name][2].encode()
    cut = data.draw(st.integers(0, len(raw)))
    noise = data.draw(st.binary(max_size=12))
    at = data.draw(st.integers(0, cut))
    _read(name, *_files(tmp_path, name, raw[:at] + noise + raw[at:cut]))


@pytest.mark.parametrize("name", sorted(n for n, v in VALID.items() if v[1].endswith("json")
                                        or v[1].endswith("jsonl")))
@SETTINGS
@given(path=st.lists(st.integers(0, 50), max_size=5), value=json_values)
def test_any_json_value_anywhere(name, tmp_path, path, value):
    lines = VALID[name][2].splitlines()
    docs = [json.loads(line) for line in lines] if VALID[name][1].endswith("jsonl") \
        else [json.loads(VALID[name][2])]
    docs[path[0] % len(docs) if path else 0] = _mutate(
        docs[path[0] % len(docs) if path else 0], path[1:], value)
    text = "\n".join(json.dumps(d) for d in docs)  # NaN / Infinity included, as Python writes
    _read(name, *_files(tmp_path, name, text.encode()))


# ---- readers outside the registry, from the heads of the real files ------------------
def _head_cases(data_dir: Path) -> list[tuple[str, Any, Path]]:
    uag = data_dir / "oops_uag"
    return [
        ("uag ground truth", read_uag_ground_truth, uag / "annotations" /
         "uag_oops_dataset_v1_start_time_fixed.json"),
        ("oops onsets", read_oops_onsets, uag / "annotations" / "oops_transition_times.json"),
        ("uag answers", read_uag_answers, uag / "hasnat79_uag" /
         "videochat2_pred_uag_oops_dataset_v1_null_fixed.json"),
        ("otani", read_otani, data_dir / "charades_sta" / "otani_reannotation" /
         "test_00.csv"),
    ]


@SETTINGS
@given(which=st.integers(0, 3), cut=st.integers(0, 3000), noise=st.binary(max_size=8),
       at=st.integers(0, 3000))
def test_other_readers_on_damaged_heads(data_dir, tmp_path, which, cut, noise, at):
    _, reader, path = _head_cases(data_dir)[which]
    head = path.read_bytes()[:cut]
    at = min(at, len(head))
    target = tmp_path / path.name
    target.write_bytes(head[:at] + noise + head[at:])
    try:
        reader(target)
    except InputError as exc:
        assert str(exc)
