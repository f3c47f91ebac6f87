"""Query files: plain query lists and any ground-truth file with query text."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cover.errors import InputError
from cover.grounders.queries import read_queries


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_plain_query_list_with_and_without_durations(tmp_path: Path):
    q = _jsonl(tmp_path / "q.jsonl", [{"qid": 1, "vid": "a", "query": "x"},
                                      {"qid": 2, "vid": "b", "query": "y", "duration": 12.5}])
    t = read_queries(q, need_duration=False).table
    assert t.qid.tolist() == ["1", "2"] and t.truth is None
    np.testing.assert_array_equal(t.duration, [np.nan, 12.5])
    with pytest.raises(InputError, match="missing field"):
        read_queries(q)
    loaded = read_queries(q, on_error="reject")
    assert len(loaded.table) == 1 and loaded.problems[0].line == 1


def test_bad_rows_are_named(tmp_path: Path):
    q = _jsonl(tmp_path / "q.jsonl", [{"qid": 1, "vid": "a", "query": "x", "duration": -1},
                                      {"qid": 1, "vid": "a", "query": "x", "duration": 3}])
    with pytest.raises(InputError) as err:
        read_queries(q)
    assert "duplicate qid" in str(err.value) and "duration must be" in str(err.value)
    with pytest.raises(InputError, match="no such file"):
        read_queries(tmp_path / "none.jsonl")


def test_ground_truth_files_keep_their_labels(tmp_path: Path, data_dir: Path):
    t = read_queries(data_dir / "lighthouse" / "tacos_test_release.jsonl").table
    assert len(t) == 4001 and t.truth is not None and t.query is not None
    gt = _jsonl(tmp_path / "gt.jsonl", [{"qid": 1, "vid": "a", "duration": 10,
                                         "relevant_windows": [[1, 2]]}])
    with pytest.raises(InputError, match="missing field: query"):
        read_queries(gt)
