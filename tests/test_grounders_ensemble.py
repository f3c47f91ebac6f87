"""Ensembles of prediction files: mean/sd of top-1 boundaries, the incomplete-row rule,
the naive Gaussian region, and the command on the real QD-DETR checkpoints."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.cli import main
from cover.data.table import GroundingTable
from cover.errors import InputError
from cover.grounders.ensemble import ensemble, gaussian_region, gaussian_z
from cover.io import read_predictions, write_jsonl
from cover.ragged import Ragged

QD = ("video_checkpoint_best_hl_val_preds.jsonl", "audio_checkpoint_best_hl_val_preds.jsonl",
      "onlyclip_best_hl_val_preds.jsonl")


@st.composite
def members(draw: st.DrawFn) -> list[GroundingTable]:
    """2-4 tables over subsets of 8 qids (in shuffled order), some rows refused, some
    with relevance of varying length."""
    m = draw(st.integers(2, 4))
    out = []
    for _ in range(m):
        qids = draw(st.lists(st.integers(0, 7), min_size=0, max_size=8, unique=True))
        n = len(qids)
        s = np.array(draw(st.lists(st.floats(0, 50), min_size=n, max_size=n)))
        d = np.array(draw(st.lists(st.floats(0, 50), min_size=n, max_size=n)))
        refused = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
        s[refused] = np.nan
        rel = [draw(st.lists(st.floats(-5, 5), max_size=4)) for _ in range(n)]
        t = GroundingTable.from_arrays(qid=np.array(qids, dtype=np.int64).astype(str),
                                       duration=np.full(n, 120.0), pred_start=s,
                                       pred_end=s + d, vid=[f"v{q}" for q in qids],
                                       relevance=Ragged.from_lists(rel))
        out.append(t)
    return out


@settings(max_examples=150, deadline=None, derandomize=True)
@given(members(), st.data())
def test_mean_sd_and_rule_match_a_per_row_oracle(tables, data):
    k = data.draw(st.integers(2, len(tables)))
    e = ensemble(tables, min_members=k)
    t = e.table
    assert sorted(t.qid.tolist()) == sorted({q for m in tables for q in m.qid.tolist()})
    assert t.start_std is not None and t.end_std is not None
    for i, q in enumerate(t.qid.tolist()):
        rows = [(m, int(np.flatnonzero(m.qid == q)[0])) for m in tables if q in m.qid]
        given_ = [(m.pred_start[j], m.pred_end[j]) for m, j in rows
                  if np.isfinite(m.pred_start[j])]
        assert e.n_members[i] == len(given_)
        assert t.vid[i] == f"v{q}"
        if len(given_) < k:
            assert math.isnan(t.pred_start[i]) and math.isnan(t.start_std[i])
            continue
        s, en = np.array(given_).T
        np.testing.assert_allclose(t.pred_start[i], s.mean(), atol=1e-9)
        np.testing.assert_allclose(t.pred_end[i], en.mean(), atol=1e-9)
        np.testing.assert_allclose(t.start_std[i], s.std(ddof=1), atol=1e-6)
        np.testing.assert_allclose(t.end_std[i], en.std(ddof=1), atol=1e-6)
    for i, q in enumerate(t.qid.tolist()):
        sigs = [m.relevance.row(int(np.flatnonzero(m.qid == q)[0])) if q in m.qid else None
                for m in tables]
        if any(x is None or x.size == 0 for x in sigs):
            assert t.relevance.lengths[i] == 0
            continue
        n = min(x.size for x in sigs if x is not None)
        want = np.mean([x[:n] for x in sigs if x is not None], axis=0)
        np.testing.assert_allclose(t.relevance.row(i), want, atol=1e-9)
    c = e.counts
    assert c["rows"] == len(t)
    assert c["refused"] == int((e.n_members < k).sum())
    for j, m in enumerate(tables):
        assert c[f"missing_in[{e.names[j]}]"] == len(t) - len(m)


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.floats(0, 100), st.floats(0, 50), st.floats(0, 20), st.floats(0, 20),
       st.sampled_from([0.05, 0.1, 0.2, 0.5]))
def test_gaussian_region_is_mean_plus_minus_z_sd_clipped(s, d, ss, se, alpha):
    t = GroundingTable.from_arrays(qid=[0, 1], duration=120.0, pred_start=[s, np.nan],
                                   pred_end=[min(s + d, 120.0), np.nan])  # inside T
    t = replace(t, start_std=np.array([ss, np.nan]), end_std=np.array([se, np.nan]))
    r = gaussian_region(t, alpha)
    z = gaussian_z(alpha)
    assert r.row(0) == [[max(0.0, s - z * ss), min(120.0, max(max(0.0, s - z * ss),
                                                               s + d + z * se))]]
    assert r.row(1) == [[0.0, 120.0]]  # no interval: the whole video


def test_gaussian_region_reaches_nominal_coverage_when_the_model_is_right():
    rng = np.random.default_rng(0)
    n = 20000
    sd = rng.uniform(1, 5, n)
    s = rng.uniform(50, 60, n)
    t = GroundingTable.from_arrays(qid=np.arange(n), duration=1000.0, pred_start=s,
                                   pred_end=s + 10)
    t = replace(t, start_std=sd, end_std=sd)
    ts, te = s + rng.normal(0, sd), s + 10 + rng.normal(0, sd)
    r = gaussian_region(t, 0.1)
    covered = (r.starts <= ts) & (te <= r.ends)
    # each side holds with prob 1 - alpha/2, independently: joint 0.95^2 = 0.9025
    assert abs(covered.mean() - 0.95**2) < 0.01


def test_records_read_back_as_the_same_grounder(tmp_path):
    a = GroundingTable.from_arrays(qid=[1, 2, 3], duration=60.0, pred_start=[10, 0, 5],
                                   pred_end=[20, 5, 9], relevance=[[1, 2], [3], []])
    b = GroundingTable.from_arrays(qid=[1, 2], duration=60.0, pred_start=[14, np.nan],
                                   pred_end=[22, np.nan], relevance=[[3, 4, 5], [1]])
    e = ensemble([a, b], names=["a", "b"])
    assert e.counts["refused"] == 2 and e.counts["missing_in[b]"] == 1
    assert e.counts["refused_by[b]"] == 1
    path = tmp_path / "e.jsonl"
    write_jsonl(path, e.records())
    back = read_predictions(path).table
    np.testing.assert_array_equal(back.qid, ["1", "2", "3"])
    np.testing.assert_allclose(back.pred_start, [12.0, np.nan, np.nan])
    assert back.start_std is not None
    np.testing.assert_allclose(back.start_std[0], math.sqrt(8))
    np.testing.assert_allclose(back.relevance.row(0), [2.0, 3.0])
    np.testing.assert_allclose(back.relevance.row(1), [2.0])
    assert back.relevance.lengths[2] == 0


def test_conflicting_vid_is_an_error_naming_the_qid():
    a = GroundingTable.from_arrays(qid=[1], duration=60.0, pred_start=[1], pred_end=[2],
                                   vid=["x"])
    b = GroundingTable.from_arrays(qid=[1], duration=60.0, pred_start=[1], pred_end=[2],
                                   vid=["y"])
    with pytest.raises(InputError, match="qid 1: vid differs"):
        ensemble([a, b], names=["a", "b"])
    with pytest.raises(ValueError, match="at least 2"):
        ensemble([a])
    with pytest.raises(ValueError, match="min_members"):
        ensemble([a, b], min_members=3)


def test_command_on_the_three_real_qd_detr_checkpoints(tmp_path, data_dir: Path, capsys):
    files = [data_dir / "qvhighlights" / "qd_detr" / name for name in QD]
    out = tmp_path / "ens.jsonl"
    assert main(["ensemble", *map(str, files), "-o", str(out)]) == 0
    assert "1550 queries, 1550 with an interval from every member" in capsys.readouterr().out
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    raw = [{r["qid"]: r for r in map(json.loads, f.read_text().splitlines())} for f in files]
    assert len(rows) == 1550
    for row in rows[:50]:
        tops = [max(m[row["qid"]]["pred_relevant_windows"], key=lambda w: w[2]) for m in raw]
        s = np.array([w[0] for w in tops])
        np.testing.assert_allclose(row["pred_relevant_windows"][0][:2],
                                   [s.mean(), np.mean([w[1] for w in tops])])
        np.testing.assert_allclose(row["start_std"], s.std(ddof=1), atol=1e-9)
        assert row["vid"] == raw[0][row["qid"]]["vid"]
    table = read_predictions(out).table
    assert table.start_std is not None and np.isfinite(table.start_std).all()
    assert main(["ensemble", str(files[0]), "-o", str(tmp_path / "x.jsonl")]) == 2
    assert main(["ensemble", str(files[0]), str(files[1]), "-o", str(files[0])]) == 2
