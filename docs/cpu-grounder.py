"""Regenerates the tables of docs/cpu-grounder.md: the text-only grounder and the
length prior on QVHighlights val, Charades-STA test, TACoS test and ActivityNet
Captions val, with COVER's coverage at 1 - alpha = 0.9 on their predictions.

Usage: python docs/cpu-grounder.py [DATA_DIR]  (prints Markdown; about a minute)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from cover.data.join import attach_truth
from cover.grounders.blind import BlindGrounder
from cover.grounders.queries import read_queries
from cover.metrics import point_iou
from cover.studies.coverage_validity import coverage_validity
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


def main(data: Path) -> None:
    metrics = ["| dataset | grounder | train rows | fit (s) | R1@0.3 | R1@0.5 | R1@0.7 | mIoU |",
               "|---|---|---|---|---|---|---|---|"]
    cover = ["| dataset | grounder | " + " | ".join(
        f"{f.upper()} cov. | {f.upper()} len. (s)" for f in FAMILIES) + " | mean T (s) |",
        "|---|---|" + "---|---|" * len(FAMILIES) + "---|"]
    protocol = Protocol(alphas=(0.1,))
    for name, (train_f, test_f) in DATASETS.items():
        train = read_queries(data / train_f, on_error="reject").table
        test = read_queries(data / test_f).table
        for kind, model in (("blind (TF-IDF ridge)", BlindGrounder()),
                            ("length prior", BlindGrounder(prior_only=True))):
            t0 = time.perf_counter()
            model.fit(train)
            fit_s = time.perf_counter() - t0
            pred = model.predict(test)
            iou = point_iou(pred)
            r1 = " | ".join(f"{100 * np.mean(iou >= k):.2f}" for k in (0.3, 0.5, 0.7))
            metrics.append(f"| {name} | {kind} | {len(train)} | {fit_s:.1f} | {r1} | "
                           f"{100 * iou.mean():.2f} |")
            table, _ = attach_truth(pred, test)
            res = coverage_validity(table, name=kind, families=FAMILIES, protocol=protocol)
            cells = " | ".join(
                f"{res.cell(f, 0.1).coverage_mean:.3f} ± {res.cell(f, 0.1).coverage_sd:.3f}"
                f"{'' if res.cell(f, 0.1).within_band else ' *'} | "
                f"{res.cell(f, 0.1).length_mean:.1f}" for f in FAMILIES)
            cover.append(f"| {name} | {kind} | {cells} | {test.duration.mean():.1f} |")
    print("\n".join(metrics))
    print()
    print("\n".join(cover))


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data"))
