"""Workloads: QVHighlights-shaped synthetic rows and the real QD-DETR split."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

import cover
from cover.ragged import Ragged

CLIP = 2.0
N_CLIPS = 75  # 150 s videos, 2 s clips (QVHighlights)
QD_DETR = "qd_detr/video_checkpoint_best_hl_val_preds.jsonl"
GT_VAL = "annotations/highlight_val_release.jsonl"

F = NDArray[np.float64]


def short(n: int) -> str:
    """1000 -> "1e3", 1500 -> "1500"."""
    e = int(math.log10(n)) if n > 0 else 0
    return f"1e{e}" if n == 10**e else str(n)


@dataclass
class Data:
    """One workload: a labelled table and the same data as plain arrays."""

    label: str
    table: cover.GroundingTable
    ps: F
    pe: F
    ts: F  # truth envelope
    te: F
    T: F
    dense: F | None = None  # relevance as an (m, clips) matrix, -inf padded
    notes: list[str] = field(default_factory=list)


def synthetic(n: int, rng: np.random.Generator, clips: int = 0) -> Data:
    """QVHighlights-like rows: 150 s videos (10 % shorter), one truth window of
    2-40 s, a top-1 prediction off by N(0, 4 s) at each end, and (if ``clips``) a
    per-clip relevance signal ``N(0, 1) + 2 * [clip centre inside the truth]``."""
    T = np.where(rng.random(n) < 0.1, np.round(rng.uniform(120, 150, n)), 150.0)
    tl = rng.uniform(2, 40, n)
    ts = rng.uniform(0, T - tl)
    te = ts + tl
    a = np.clip(ts + rng.normal(0, 4, n), 0, T)
    b = np.clip(te + rng.normal(0, 4, n), 0, T)
    ps, pe = np.minimum(a, b), np.maximum(a, b)
    rel = None
    dense = None
    if clips:
        centre = (np.arange(clips) + 0.5) * CLIP
        inside = (centre >= ts[:, None]) & (centre <= te[:, None])
        dense = rng.standard_normal((n, clips))
        np.add(dense, 2.0, out=dense, where=inside)  # no second (n, clips) float array
        del inside
        # A view: COVER reads the same values as the dense baseline (no second copy).
        rel = Ragged(dense.reshape(-1), np.arange(n + 1, dtype=np.int64) * clips)
    table = cover.GroundingTable.from_arrays(
        qid=np.arange(n), duration=T, pred_start=ps, pred_end=pe, relevance=rel,
        truth=(ts, te), clip=CLIP)
    return Data(short(n), table, ps, pe, ts, te, T, dense)


def densify(rel: Ragged) -> F:
    m = len(rel)
    width = int(rel.lengths.max()) if m else 0
    out = np.full((m, width), -np.inf)
    r = np.repeat(np.arange(m), rel.lengths)
    i = np.arange(rel.values.size) - rel.offsets[r]
    out[r, i] = rel.values
    return out


def from_table(label: str, table: cover.GroundingTable) -> Data:
    ts, te = table.truth_envelope()
    dense = densify(table.relevance) if table.has_relevance.all() else None
    return Data(label, table, table.pred_start, table.pred_end, ts, te, table.duration, dense)


def load_real(data_dir: Path) -> tuple[Data, Data] | None:
    """QD-DETR (video checkpoint) on QVHighlights val, split 40/60 by video, seed 42."""
    p, g = data_dir / QD_DETR, data_dir / GT_VAL
    if not (p.is_file() and g.is_file()):
        return None
    preds = cover.read_predictions(p)
    gt = cover.read_ground_truth(g)
    table, _problems = cover.attach_truth(preds.table, gt.table)
    split = cover.split_by_unit(table.units, cal_frac=0.4, seed=42)
    cal = table.take(split.calibration)
    test = table.take(split.test)
    return from_table(f"QVH n={len(cal)}", cal), from_table(f"QVH m={len(test)}", test)


