"""Generates docs/metrics.md's numbers: the field's metrics (Moment-DETR's evaluator) of
every real prediction file next to COVER's clipped point-IoU, the rows where the two
differ, and the values checked against the authors' metrics files.

Usage: python docs/metrics.py [DATA_DIR]  (prints the blocks; a few seconds)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from docgen import wrap

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
TIMES = {1: "once", 2: "twice"}


def _num(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".")


def blocks(data: Path) -> dict[str, str]:
    """The table, the clipping sentence and the checked values of docs/metrics.md."""
    rows = ["| grounder | dataset | rows | R1@0.3 | R1@0.5 | R1@0.7 | mIoU | mAP | mAP@0.5 | "
            "mAP@0.75 | mAP short / middle / long | COVER point-IoU |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    clipped, metrics = [], {}
    for name, rel, gt, dataset in FILES:
        table, _ = load_labelled(data / rel, data / gt)
        m = grounding_metrics(table)
        metrics[(name, dataset)] = m
        f = m.full
        pi = point_iou(table)
        buckets = " / ".join(f"{m.buckets[b].map:.2f}" if m.buckets[b].n else "–"
                             for b in ("short", "middle", "long"))
        rows.append(f"| {name} | {dataset} | {f.n} | {f.r1[0.3]:.2f} | {f.r1[0.5]:.2f} | "
                    f"{f.r1[0.7]:.2f} | {f.miou:.2f} | {f.map:.2f} | {f.map_at[0.5]:.2f} | "
                    f"{f.map_at[0.75]:.2f} | {buckets} | {100 * pi.mean():.2f} |")
        differ = np.flatnonzero(np.abs(m.iou - pi) > 1e-12)
        if differ.size:
            i = differ[0]
            assert table.pred_windows is not None
            w = table.pred_windows.values[table.pred_windows.offsets[i]]
            who = f"{name} on {dataset.split()[0]}" if dataset != "QVHighlights val" else name
            times = (TIMES.get(differ.size) or f"on {differ.size} of {len(table)} rows")
            qids = (f"qid{'s' if differ.size > 1 else ''} "
                    + " and ".join(table.qid[differ].tolist()) + ": "
                    if differ.size <= 2 else "e.g. ")
            clipped.append(f"{who} {times} ({qids}`[{_num(w[0])}, {_num(w[1])}]` on a "
                           f"{_num(table.duration[i])} s video; {100 * pi.mean():.2f} vs "
                           f"{f.miou:.2f})")
    clip = wrap("The numbers therefore\nagree except where a grounder predicts past the end of "
            "the video: " + ", ".join(clipped) + ". The test\n"
            "`test_golden_field_miou_differs_from_point_iou_only_by_clipping` pins this down.")

    cs = metrics[("LA-DETR", "Charades-STA test")].full
    qv = metrics[("LA-DETR", "QVHighlights val")]
    checked = "\n".join([
        "* LA-DETR, Charades-STA test (vs `lighthouse/charades_test_release.jsonl`):\n"
        f"  R1@0.3 {cs.r1[0.3]:.2f}, R1@0.5 {cs.r1[0.5]:.2f}, R1@0.7 {cs.r1[0.7]:.2f}, "
        f"mIoU {cs.miou:.2f}, mAP {cs.map:.2f}.",
        "* LA-DETR, QVHighlights val (`results/ours/best_hl_val_preds_metrics.json`): "
        f"R1@0.5\n  {qv.full.r1[0.5]:.2f}, R1@0.7 {qv.full.r1[0.7]:.2f}, mAP {qv.full.map:.2f}, "
        f"mAP@0.5 {qv.full.map_at[0.5]:.2f}, mAP@0.75 {qv.full.map_at[0.75]:.2f}, short / "
        "middle /\n  long mAP " + " / ".join(f"{qv.buckets[b].map:.2f}"
                                            for b in ("short", "middle", "long")) + ".",
    ])
    return {"table": "\n".join(rows), "clipping": clip, "checked": checked}


if __name__ == "__main__":
    import docgen

    docgen.print_blocks(blocks)
