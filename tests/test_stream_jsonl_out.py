"""Streamed certify a batch at a time: byte for byte the output of the row by row path."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cover
import cover.stream.jsonl as stream_jsonl
from cover.ragged import Ragged
from cover.stream import certify_jsonl


def _both(cal, src, tmp_path, **kw) -> tuple[bytes, bytes]:
    out = []
    for fast in (True, False):
        dst = tmp_path / f"o{int(fast)}.jsonl"
        certify_jsonl(cal, src, dst, fast=fast, **kw)
        out.append(dst.read_bytes())
    return out[0], out[1]


@pytest.fixture(scope="module")
def labelled(qdetr_table, qdetr_preds, qvh_gt):
    return qdetr_table, cover.read_durations(qvh_gt)


@pytest.mark.parametrize(("score", "rule", "batch", "compact"), [
    ("norm", "split", 333, False), ("sls", "split", 5000, False),
    ("sec", "bonferroni", 1000, False), ("norm", "split", 400, True)])
def test_real_file_bytes_equal_the_row_by_row_output(labelled, qdetr_preds, tmp_path, score,
                                                     rule, batch, compact, monkeypatch):
    table, videos = labelled
    cal = cover.Calibrator(score=score, rule=rule, alpha=0.1).fit(table.take(np.arange(600)))
    slow_calls = []
    real = stream_jsonl._write_rows
    monkeypatch.setattr(stream_jsonl, "_write_rows",
                        lambda *a, **k: slow_calls.append(1) or real(*a, **k))
    qids = table.qid[::3] if compact else None
    fast, slow = _both(cal, qdetr_preds, tmp_path, videos=videos, batch_lines=batch,
                       compact=compact, qids=qids)
    assert fast == slow
    n_batches = -(-1550 // batch)
    assert len(slow_calls) == n_batches  # the reference run only: real batches go in bulk


def _cal(groups: str = "all") -> cover.Calibrator:
    n = 99
    t = cover.GroundingTable.from_arrays(
        qid=np.arange(n), vid=np.where(np.arange(n) % 2, "v", "w"), duration=150.0,
        pred_start=np.full(n, 40.0), pred_end=np.full(n, 60.0),
        truth=(np.full(n, 45.0), 60.0 + np.arange(n) / 4))
    if groups == "key":
        return cover.Calibrator(score="sec", alpha=0.1, rule="mondrian", groups="key",
                                group_params={"field": "vid"}).fit(t)
    return cover.Calibrator(score="sec", alpha=0.1).fit(t)


EDGE = [
    '{"qid": 1, "vid": "v", "duration": 150, "pred_relevant_windows": [[40, 60, 0.9]]}',
    '{"qid": "q2", "vid": "w", "query": "naïve \\u00e9 NaN", "duration": 150.5, '
    '"pred_relevant_windows": [[1e-07, 2.5, 0.1], [3, 1e20, 0.2]]}',
    '{"qid": 3, "vid": "v", "pred_relevant_windows": [[0, 10], [5, 149.9]]}',
    '{"qid": 4, "vid": "v", "duration": 150, "pred_relevant_windows": [[40, 60, 0.9]] }',
    '{ "qid": 5, "vid": "v", "pred_saliency_scores": [0.5, -1, 2]}',
    '{"qid": 6, "vid": "v", "duration": 150, "pred_relevant_windows": []}',
    '{"qid": 7, "vid": "v", "duration": 150, "notes": {"old": 1}, '
    '"pred_relevant_windows": [[40, 60, 0.9]]}',
    '{"qid": 8, "vid": "v", "extra": Infinity, "pred_relevant_windows": [[40, 60, 0.9]]}',
    '{"qid": 9, "vid": "u", "pred_relevant_windows": [[40, 60, 0.9]]}',
    '{"qid": 1, "vid": "v", "duration": 150, "pred_relevant_windows": [[40, 60, 0.9]]}',
    '{"qid": 10, "vid": "v", "duration": 150, "pred_relevant_windows": [[40, 60, 0.9]]}\t',
    '{"qid": 11, "vid": "v", "duration": 150, "start_std": 1.5, "end_std": 0, '
    '"pred_relevant_windows": [[40, 60, 0.9]]}',
    "not json",
    '{"qid": 12, "vid": "w", "duration": 150, "pred_relevant_windows": [[-5, 200, 0.9]]}',
]


@pytest.mark.parametrize("batch", [1, 2, 3, 7, 100])
@pytest.mark.parametrize(("groups", "compact"), [("all", False), ("all", True),
                                                 ("key", False)])
def test_edge_cases_bytes_equal_the_row_by_row_output(tmp_path, batch, groups, compact):
    src = tmp_path / "p.jsonl"
    src.write_text("\n".join(EDGE) + "\n\n", encoding="utf-8")
    videos = (np.array(["v", "w"]), np.array([150.0, 150.5]))
    fast, slow = _both(_cal(groups), src, tmp_path, videos=videos, batch_lines=batch,
                       compact=compact)
    assert fast == slow
    assert len(fast.splitlines()) == len(EDGE)


row = st.fixed_dictionaries({
    "qid": st.integers(0, 20),
    "vid": st.sampled_from(["v", "w", "v w"]),
    "duration": st.sampled_from([150.0, 150, 20.25, None]),
    "pred_relevant_windows": st.lists(st.tuples(st.floats(-10, 160), st.floats(0, 60),
                                                st.floats(0, 1)).map(
        lambda t: [t[0], t[0] + t[1], t[2]]), max_size=3),
    "pred_saliency_scores": st.lists(st.floats(-3, 3), max_size=4),
})


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(row, min_size=1, max_size=12), batch=st.integers(1, 6),
       score=st.sampled_from(["norm", "sls", "sec"]))
def test_random_files_bytes_equal_the_row_by_row_output(tmp_path, rows, batch, score):
    src = tmp_path / "p.jsonl"
    src.write_text("".join(json.dumps({k: v for k, v in r.items() if v is not None}) + "\n"
                           for r in rows))
    n = 60
    rng = np.random.default_rng(0)
    ts = rng.uniform(0, 100, n)
    cal_t = cover.GroundingTable.from_arrays(
        qid=np.arange(n), duration=150.0, pred_start=ts, pred_end=ts + 20,
        truth=(ts + rng.normal(0, 3, n), ts + 20 + rng.normal(0, 3, n)),
        relevance=Ragged(rng.normal(0, 1, n * 4), np.arange(n + 1) * 4))
    cal = cover.Calibrator(score=score, alpha=0.2).fit(cal_t)
    videos = (np.array(["v", "w", "v w"]), np.array([150.0, 150.0, 150.0]))
    fast, slow = _both(cal, src, tmp_path, videos=videos, batch_lines=batch)
    assert fast == slow
