"""Regenerates the table of docs/metrics.md: the field's metrics (Moment-DETR's evaluator)
of every real prediction file, next to COVER's clipped point-IoU.

Usage: python docs/metrics.py [DATA_DIR]  (prints Markdown; a few seconds)
"""

from __future__ import annotations

import sys
from pathlib import Path

from cover.grounding_metrics import grounding_metrics
from cover.io import load_labelled
from cover.io.datasets import QVH_VAL_GT, QVH_VAL_PREDICTIONS
from cover.metrics import point_iou

FILES = [(name, rel, QVH_VAL_GT, "QVHighlights val") for name, rel in QVH_VAL_PREDICTIONS.items()]
FILES += [
    ("LA-DETR", "qvhighlights/la_detr/best_hl_val_preds.jsonl", QVH_VAL_GT, "QVHighlights val"),
    ("LA-DETR", "charades_sta/la_detr/hl_test_submission.jsonl",
     "lighthouse/charades_test_release.jsonl", "Charades-STA test"),
]


def main(data: Path) -> None:
    print("| grounder | dataset | rows | R1@0.3 | R1@0.5 | R1@0.7 | mIoU | mAP | mAP@0.5 | "
          "mAP@0.75 | mAP short / middle / long | COVER point-IoU |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, rel, gt, dataset in FILES:
        table, _ = load_labelled(data / rel, data / gt)
        m = grounding_metrics(table)
        f = m.full
        buckets = " / ".join(f"{m.buckets[b].map:.2f}" if m.buckets[b].n else "–"
                             for b in ("short", "middle", "long"))
        print(f"| {name} | {dataset} | {f.n} | {f.r1[0.3]:.2f} | {f.r1[0.5]:.2f} | "
              f"{f.r1[0.7]:.2f} | {f.miou:.2f} | {f.map:.2f} | {f.map_at[0.5]:.2f} | "
              f"{f.map_at[0.75]:.2f} | {buckets} | {100 * point_iou(table).mean():.2f} |")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("../shared/data"))
