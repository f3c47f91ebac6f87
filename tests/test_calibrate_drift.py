"""The drift alarm: fires on an injected shift (the grounder switched mid-stream) and,
on exchangeable traffic, at most at its nominal false-alarm rate delta (Ville)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cover.calibrate.drift import DriftMonitor, tie_break

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "qvhighlights"


def _run(scores, delta=0.01, seed=0):
    rng = np.random.default_rng(seed)
    m = DriftMonitor(delta=delta)
    ps = [m.update(float(s), float(u)) for s, u in zip(scores, rng.random(len(scores)),
                                                          strict=True)]
    return m, np.array(ps)


def test_p_values_are_uniform_and_ties_are_smoothed():
    _, ps = _run(np.random.default_rng(1).normal(size=2000))
    assert abs(ps.mean() - 0.5) < 0.03 and 0 < ps.min() and ps.max() <= 1
    _, tied = _run(np.zeros(500))  # all tied: p = u, still uniform
    assert abs(tied.mean() - 0.5) < 0.06


def test_alarm_on_a_synthetic_shift_and_not_before_it():
    rng = np.random.default_rng(2)
    scores = np.concatenate([rng.normal(size=300), rng.normal(1.5, 1, size=300)])
    m, _ = _run(scores)
    assert m.alarm and 300 < m.alarm_at < 450


def test_false_alarm_rate_on_exchangeable_traffic_is_at_most_delta():
    delta, runs = 0.1, 300
    rng = np.random.default_rng(3)
    alarms = sum(_run(rng.normal(size=200), delta=delta, seed=i)[0].alarm
                 for i in range(runs))
    # Ville: P(alarm) <= delta; allow three binomial standard errors of noise.
    assert alarms / runs <= delta + 3 * np.sqrt(delta * (1 - delta) / runs)


def _top1_iou_miss(path: Path, gt: dict[str, list[list[float]]]) -> list[float]:
    """A score per row: 1 - IoU of the top-1 window with the truth's envelope."""
    out = []
    for line in path.read_text().splitlines():
        r = json.loads(line)
        q = str(r["qid"])
        if q not in gt:
            continue
        s, e = r["pred_relevant_windows"][0][:2]
        ts, te = min(w[0] for w in gt[q]), max(w[1] for w in gt[q])
        inter = max(0.0, min(e, te) - max(s, ts))
        out.append(1 - inter / (max(e, te) - min(s, ts)))
    return out


def test_alarm_when_the_grounder_is_switched_on_real_qvhighlights():
    """QD-DETR's validation predictions, then a uniform-random-window "grounder" on the
    same queries: the switch is detected (the real predictions alone raise nothing)."""
    qd = DATA / "qd_detr" / "video_checkpoint_best_hl_val_preds.jsonl"
    gt_file = DATA / "annotations" / "highlight_val_release.jsonl"
    if not (qd.is_file() and gt_file.is_file()):
        pytest.skip("QVHighlights files not in ../shared/data")
    gt = {str(r["qid"]): r["relevant_windows"] for r in map(json.loads,
                                                             gt_file.read_text().splitlines())}
    rng = np.random.default_rng(4)
    real = list(rng.permutation(_top1_iou_miss(qd, gt))[:400])  # traffic in random order
    starts = rng.uniform(0, 140, size=300)
    worse = []
    for q, s in zip(list(gt)[:300], starts, strict=True):
        ts, te = min(w[0] for w in gt[q]), max(w[1] for w in gt[q])
        e = s + 10
        worse.append(1 - max(0.0, min(e, te) - max(s, ts)) / (max(e, te) - min(s, ts)))
    alone, _ = _run(np.array(real))
    assert not alone.alarm
    switched, _ = _run(np.array(real + worse))
    assert switched.alarm and switched.alarm_at > len(real)


def test_tie_break_is_fixed_by_the_key():
    assert tie_break("q1") == tie_break("q1") != tie_break("q2")
    assert 0 <= tie_break("x") < 1
