"""Regenerates the table of docs/ensembles.md: ensemble grounders' own Gaussian regions at
nominal levels vs COVER (split conformal, NORM/SEC) on the same predictions.

Usage: python docs/ensembles.py [DATA_DIR]  (prints Markdown; about half a minute)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from cover.data.join import attach_truth
from cover.data.splits import split_by_unit
from cover.grounders.ensemble import ensemble, gaussian_region
from cover.intervals import Intervals
from cover.io import read_ground_truth, read_predictions
from cover.metrics import point_iou
from cover.studies.coverage_validity import coverage_validity
from cover.studies.protocol import Protocol

QVH = "qvhighlights/"
ENSEMBLES: dict[str, list[str]] = {
    "QD-DETR x3": [QVH + "qd_detr/video_checkpoint_best_hl_val_preds.jsonl",
                   QVH + "qd_detr/audio_checkpoint_best_hl_val_preds.jsonl",
                   QVH + "qd_detr/onlyclip_best_hl_val_preds.jsonl"],
    "Moment-DETR x2": [QVH + "moment_detr/sample_val_preds.jsonl",
                       QVH + "moment_detr/inference_hl_val_test_code_preds.jsonl"],
}
ENSEMBLES["all 5"] = ENSEMBLES["QD-DETR x3"] + ENSEMBLES["Moment-DETR x2"]
LEVELS = (0.8, 0.9, 0.95)


def main(data: Path) -> None:
    gt = read_ground_truth(data / QVH / "annotations/highlight_val_release.jsonl").table
    protocol = Protocol(alphas=tuple(round(1 - lv, 10) for lv in LEVELS))
    head = "| ensemble | method | " + " | ".join(f"cov. @{lv:g} | len. @{lv:g}"
                                              for lv in LEVELS) + " |"
    print(head)
    print("|" + "---|" * (2 + 2 * len(LEVELS)))
    for name, files in ENSEMBLES.items():
        ens = ensemble([read_predictions(data / f).table for f in files])
        table, _ = attach_truth(ens.table, gt)
        split = split_by_unit(table.units, cal_frac=protocol.cal_frac, seed=protocol.seed)
        test = table.take(split.test)
        ts, te = test.truth_envelope()
        assert test.start_std is not None and test.end_std is not None
        sd = float(np.mean((test.start_std + test.end_std) / 2))
        zero = float(np.mean((test.start_std == 0) & (test.end_std == 0)))
        cells = []
        for lv in LEVELS:
            reg = gaussian_region(test, 1 - lv)
            covered, _ = reg.relate(Intervals.single(ts, te))
            cov = float(covered.mean())
            cells.append(f"{cov:.3f}{' (!)' if cov < lv - 0.02 else ''} | "
                         f"{reg.length().mean():.1f} s")
        print(f"| {name} (mIoU {100 * point_iou(test).mean():.1f}, mean sd {sd:.1f} s, "
              f"sd = 0 on {100 * zero:.0f}%) | Gaussian, nominal | " + " | ".join(cells) + " |")
        res = coverage_validity(table, name=name, families=("norm", "sec", "sigma"),
                                protocol=protocol)
        for fam in ("norm", "sec", "sigma"):
            cells = []
            for lv in LEVELS:
                c = res.cell(fam, round(1 - lv, 10))
                cells.append(f"{c.coverage_mean:.3f} ± {c.coverage_sd:.3f}"
                             f"{'' if c.within_band else ' *'} | {c.length_mean:.1f} s")
            print(f"| | COVER {fam.upper()} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data"))
