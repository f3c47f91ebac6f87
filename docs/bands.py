"""Regenerates the tables of docs/bands.md: do the calibration band and the test band
attain their nominal 95% (a clustered simulation, and 100 video-level splits of real
grounders)?

Usage: python docs/bands.py [DATA_DIR]  (prints the blocks; about ten seconds)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cover.calibrate import Calibrator
from cover.data.splits import split_by_unit
from cover.io.labelled import load_labelled
from cover.metrics import evaluate
from cover.studies.band_simulation import Z95, Scenario, simulate

SCENARIOS = (Scenario(500, 1, 0.0), Scenario(60, 10, 0.0), Scenario(300, 5, 0.2),
             Scenario(60, 10, 0.3), Scenario(25, 40, 0.1), Scenario(25, 40, 0.3))
REPS = 1000
REAL = {
    "QD-DETR, QVHighlights val": ("qvhighlights/qd_detr/video_checkpoint_best_hl_val_preds.jsonl",
                                  "qvhighlights/annotations/highlight_val_release.jsonl"),
    "LA-DETR, Charades-STA test": ("charades_sta/la_detr/hl_test_submission.jsonl",
                                   "lighthouse/charades_test_release.jsonl"),
}
SEEDS = 100
ALPHAS = (0.1, 0.2)


def simulation_table() -> list[str]:
    out = ["| videos | queries per video | icc | Beta band holds Phi(q) | calibration band "
           "holds Phi(q) | unclustered test band holds test coverage | test band holds "
           "test coverage |", "|---|---|---|---|---|---|---|"]
    for sc in SCENARIOS:
        r = simulate(sc, reps=REPS, seed=0)
        out.append(f"| {sc.videos} | {sc.queries:g} | {sc.icc:g} | {r.calibration_beta:.3f} | "
                   f"{r.calibration_clustered:.3f} | {r.test_unclustered:.3f} | "
                   f"{r.test_clustered:.3f} |")
    return out


def real_table(data: Path) -> list[str]:
    out = ["| grounder | alpha | splits | outside the unclustered test band | outside the "
           "test band | mean test-band width |", "|---|---|---|---|---|---|"]
    for name, (preds, gt) in REAL.items():
        table, _ = load_labelled(data / preds, data / gt)
        for alpha in ALPHAS:
            old = new = 0
            width = []
            for seed in range(SEEDS):
                split = split_by_unit(table.units, cal_frac=0.4, seed=seed)
                cal_t, test = table.take(split.calibration), table.take(split.test)
                cal = Calibrator(score="norm", alpha=alpha).fit(cal_t)
                ev = evaluate(cal.certify(test), test, calibration=(cal.n_, cal.k_),
                              base_iou=False)
                ref = ev.reference
                assert ref is not None
                c = ev.marginal.coverage
                # The band before the clustering corrections (z, no CR1, no design effect).
                from cover.metrics import cluster_sd

                sd = cluster_sd(ev.covered.astype(np.float64), test.units)
                half = Z95 * float(np.hypot(ref["beta_sd"], sd))
                old += not (ref["expected"] - half <= c <= ref["expected"] + half)
                lo, hi = ref["test_band"]
                new += not (lo <= c <= hi)
                width.append(hi - lo)
            out.append(f"| {name} | {alpha:g} | {SEEDS} | {old} | {new} | "
                       f"{np.mean(width):.3f} |")
    return out


def blocks(data: Path) -> dict[str, str]:
    """The generated blocks of docs/bands.md."""
    return {"simulation": "\n".join(simulation_table()), "real": "\n".join(real_table(data))}


if __name__ == "__main__":
    import docgen

    docgen.print_blocks(blocks)
