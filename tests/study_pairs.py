"""Small study pairs shared by the study tests: a synthetic one (clustered, tied) and
QD-DETR on QVHighlights val (real data, skipped without it)."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

import cover
from cover.io.labelled import load_labelled
from cover.studies.context import Pair
from cover.studies.protocol import Protocol


def synthetic_pair(n_videos: int = 60, per_video: int = 4, seed: int = 0,
                   n_resamples: int = 10) -> Pair:
    """Clustered rows (one shared shift per video) with boundaries on a 2 s grid, so
    SEC scores tie; some truths have two windows; relevance for SLS."""
    rng = np.random.default_rng(seed)
    n = n_videos * per_video
    vid = np.repeat(np.arange(n_videos), per_video).astype(str)
    shift = np.repeat(rng.normal(0, 4, n_videos), per_video)
    ts = np.round(rng.uniform(0, 100, n) / 2) * 2
    te = ts + np.round(rng.uniform(4, 40, n) / 2) * 2
    ps = np.clip(np.round((ts + shift + rng.normal(0, 3, n)) / 2) * 2, 0, 148)
    pe = np.clip(np.maximum(ps + 2, np.round((te + shift + rng.normal(0, 3, n)) / 2) * 2),
                 0, 150)
    windows = [[[a, b]] if i % 5 else [[a, a + (b - a) / 3], [b - (b - a) / 3, b]]
               for i, (a, b) in enumerate(zip(ts.tolist(), te.tolist(), strict=True))]
    rel = [list(rng.normal(size=75)) for _ in range(n)]
    table = cover.GroundingTable.from_arrays(
        qid=np.arange(n), vid=vid, duration=150.0, pred_start=ps, pred_end=pe,
        relevance=rel, truth=cover.Intervals.from_lists(windows))
    return Pair("synthetic", "Synthetic", table, Protocol(n_resamples=n_resamples))


@functools.lru_cache(maxsize=4)
def real_pair(data_dir: Path, which: str = "qd_detr") -> Pair:
    """QD-DETR or LA-DETR on QVHighlights val, or LA-DETR on Charades-STA, with the
    paper's protocol (seed 42, 50 resamples)."""
    q = data_dir / "qvhighlights"
    gt = q / "annotations" / "highlight_val_release.jsonl"
    files = {"qd_detr": (q / "qd_detr" / "video_checkpoint_best_hl_val_preds.jsonl", gt,
                         "QD-DETR", "QVHighlights"),
             "la_detr": (q / "la_detr" / "best_hl_val_preds.jsonl", gt, "LA-DETR",
                         "QVHighlights"),
             "la_detr_charades": (data_dir / "charades_sta" / "la_detr" /
                                  "hl_test_submission.jsonl",
                                  data_dir / "lighthouse" / "charades_test_release.jsonl",
                                  "LA-DETR", "Charades-STA")}
    preds, truth, name, dataset = files[which]
    table, _ = load_labelled(preds, truth)
    return Pair(name, dataset, table, Protocol())
