"""Regenerates the tables of docs/cpu-grounder.md: the text-only grounder and the
length prior on QVHighlights val, Charades-STA test, TACoS test and ActivityNet
Captions val, with COVER's coverage at 1 - alpha = 0.9 on their predictions.

Usage: python docs/cpu-grounder.py [DATA_DIR]  (prints the blocks; about ten seconds)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from docgen import bullets, wrap

from cover.calibrate import Calibrator
from cover.data.join import attach_truth
from cover.data.splits import split_by_unit
from cover.data.table import GroundingTable
from cover.grounders.blind import BlindGrounder
from cover.grounders.queries import read_queries
from cover.metrics import point_iou
from cover.studies.coverage_validity import ValidityResult, coverage_validity
from cover.studies.protocol import Protocol

DATASETS = {
    "QVHighlights val": ("qvhighlights/annotations/highlight_train_release.jsonl",
                         "qvhighlights/annotations/highlight_val_release.jsonl"),
    "Charades-STA test": ("lighthouse/charades_train_release.jsonl",
                          "lighthouse/charades_test_release.jsonl"),
    "TACoS test": ("lighthouse/tacos_train_release.jsonl", "lighthouse/tacos_test_release.jsonl"),
    "ActivityNet Captions val": ("activitynet_captions/annotations/train.json",
                                 "lighthouse/activitynet_val_release.jsonl"),
}
FAMILIES = ("norm", "sec", "sls")


def blocks(data: Path) -> dict[str, str]:
    """Both tables of docs/cpu-grounder.md and the sentences quoting their numbers."""
    metrics = ["| dataset | grounder | train rows | R1@0.3 | R1@0.5 | R1@0.7 | mIoU |",
               "|---|---|---|---|---|---|---|"]
    cover = ["| dataset | grounder | " + " | ".join(
        f"{f.upper()} cov. | {f.upper()} len. (s)" for f in FAMILIES) + " | mean T (s) |",
        "|---|---|" + "---|---|" * len(FAMILIES) + "---|"]
    protocol = Protocol(alphas=(0.1,))
    acc: dict[tuple[str, str], dict[str, float]] = {}
    res: dict[tuple[str, str], ValidityResult] = {}
    mean_t: dict[str, float] = {}
    whole: dict[str, float] = {}
    for name, (train_f, test_f) in DATASETS.items():
        train = read_queries(data / train_f, on_error="reject").table
        test = read_queries(data / test_f).table
        mean_t[name] = float(test.duration.mean())
        for kind, model in ((BLIND, BlindGrounder()), (PRIOR, BlindGrounder(prior_only=True))):
            model.fit(train)
            pred = model.predict(test)
            iou = point_iou(pred)
            a = acc[name, kind] = {f"R1@{k}": 100 * float(np.mean(iou >= k))
                                   for k in (0.3, 0.5, 0.7)} | {"mIoU": 100 * float(iou.mean())}
            metrics.append(f"| {name} | {kind} | {len(train)} | "
                           + " | ".join(f"{v:.2f}" for v in a.values()) + " |")
            table, _ = attach_truth(pred, test)
            r = res[name, kind] = coverage_validity(table, name=kind, families=FAMILIES,
                                                    protocol=protocol)
            cells = " | ".join(
                f"{r.cell(f, 0.1).coverage_mean:.3f} ± {r.cell(f, 0.1).coverage_sd:.3f}"
                f"{'' if r.cell(f, 0.1).within_band else ' *'} | "
                f"{r.cell(f, 0.1).length_mean:.1f}" for f in FAMILIES)
            cover.append(f"| {name} | {kind} | {cells} | {mean_t[name]:.1f} |")
            if name == ANET and kind == BLIND:
                whole = whole_video_share(table, protocol)
    return {"accuracy": "\n".join(metrics), "cover": "\n".join(cover),
            "accuracy-text": accuracy_text(acc), "cover-text": cover_text(res, mean_t, whole)}


BLIND, PRIOR = "blind (TF-IDF ridge)", "length prior"
QVH_NAME, CS_NAME, TACOS, ANET = DATASETS


def whole_video_share(table: GroundingTable, protocol: Protocol) -> dict[str, float]:
    """Share of test regions that are the whole video when the whole pool calibrates."""
    split = split_by_unit(table.units, cal_frac=protocol.cal_frac, seed=protocol.seed)
    pool, test = table.take(split.calibration), table.take(split.test)
    out = {}
    for fam in ("norm", "sls"):
        reg = Calibrator(score=fam, alpha=0.1).fit(pool).certify(test)
        out[fam] = float(np.mean(reg.length >= test.duration - 1e-9))
    return out


def accuracy_text(acc: dict[tuple[str, str], dict[str, float]]) -> str:
    def gain(ds: str, k: str = "R1@0.5") -> float:
        return acc[ds, BLIND][k] - acc[ds, PRIOR][k]

    beats = all(gain(ds, k) > 0 for ds in DATASETS for k in ("R1@0.5", "R1@0.7", "mIoU"))
    prior_r1_03 = [ds for ds in DATASETS if gain(ds, "R1@0.3") < 0]
    return wrap(
        "The words carry real position information: the blind model "
        + ("beats the length prior at R1@0.5, R1@0.7 and mIoU on every dataset"
           if beats else "does not beat the length prior everywhere")
        + f" (R1@0.5 {gain(CS_NAME):+.1f} points on Charades-STA, {gain(ANET):+.1f} on "
        "ActivityNet), which is Otani et al.'s point: part of each benchmark is solvable "
        "without the video. TACoS, with long cooking videos and short moments, is nearly "
        f"unsolvable blind ({gain(TACOS):+.1f}); on QVHighlights, where every video is a "
        "150 s clip and moments are long, "
        + ("the prior's wide mean window even wins R1@0.3 and " if QVH_NAME in prior_r1_03
           else "")
        + f"the words add little ({gain(QVH_NAME):+.1f} at R1@0.5).")


def cover_text(res: dict[tuple[str, str], ValidityResult], mean_t: dict[str, float],
               whole: dict[str, float]) -> str:
    def cell(ds: str, kind: str, fam: str):
        return res[ds, kind].cell(fam, 0.1)

    def outside(kind: str) -> list[str]:
        return [f"{ds.split()[0]} {f.upper()} {cell(ds, kind, f).coverage_mean:.3f} ("
                + ("above" if cell(ds, kind, f).coverage_mean > cell(ds, kind, f).band_hi
                   else "below") + ")"
                for ds in DATASETS for f in FAMILIES if not cell(ds, kind, f).within_band]

    def lengths(ds: str) -> str:
        ls = [cell(ds, BLIND, f).length_mean for f in FAMILIES]
        lo, hi = f"{min(ls):.0f}", f"{max(ls):.0f}"
        return f"{ds.split()[0]} {lo if lo == hi else lo + '–' + hi} of {mean_t[ds]:.0f} s"

    blind_out = outside(BLIND)
    a = cell(ANET, BLIND, "sls")
    return bullets([
        "Blind-grounder cells outside their reference band: "
        + (", ".join(blind_out) if blind_out else "none")
        + " (TACoS's test split holds few videos, so its band is wide). The regions say "
        "honestly how little a blind grounder knows: they span most of the video ("
        + ", ".join(lengths(ds) for ds in DATASETS) + ").",
        "The length prior gives every query the same window in units of its video's length, "
        "so NORM and SLS widen every video at the same relative place, and SEC, whose "
        "widening in seconds is relatively smaller on long videos, less so. Length-prior "
        "cells outside their band: " + (", ".join(outside(PRIOR)) or "none") + ".",
        f"ActivityNet blind SLS: {a.coverage_mean:.3f} against the band "
        f"[{a.band_lo:.3f}, {a.band_hi:.3f}]; with the whole calibration pool, "
        f"{100 * whole['sls']:.0f}% of its test regions ({100 * whole['norm']:.0f}% for "
        "NORM) are already the whole video.",
    ])


if __name__ == "__main__":
    import docgen

    docgen.print_blocks(blocks)
