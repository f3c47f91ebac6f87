"""Regenerates the table of docs/human-grounders.md: each human annotator of the
Charades-STA and ActivityNet re-annotations (Otani et al. 2020) and of UAG-OOPS (Oops!
workers and the held-out annotator) as a grounder against the official ground truth:
point metrics, and COVER's coverage and region length (split conformal, NORM/SEC).

Usage: python docs/human-grounders.py [DATA_DIR]  (prints Markdown; under a minute)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from cover.grounders.humans import human_grounders
from cover.metrics import point_iou
from cover.studies.coverage_validity import coverage_validity
from cover.studies.protocol import Protocol

ALPHAS = (0.1, 0.2)


def main(data: Path) -> None:
    protocol = Protocol(alphas=ALPHAS)
    print("| dataset | annotator | pairs | refused | mIoU | R1@0.5 | family | target | "
          "coverage (mean ± sd) | 95% band | region length |")
    print("|---|---|---:|---:|---:|---:|---|---:|---:|---|---:|")
    for dataset, h in human_grounders(data).items():
        for name, table in h.annotators.items():
            iou = point_iou(table)
            refused = float(np.mean(~table.has_interval))
            res = coverage_validity(table, name=name, families=("norm", "sec"),
                                    protocol=protocol)
            for c in res.cells:
                print(f"| {dataset} | {name} | {len(table)} | {refused:.1%} | "
                      f"{float(np.mean(iou)):.3f} | {float(np.mean(iou >= 0.5)):.3f} | "
                      f"{c.family} | {c.target:.2f} | {c.coverage_mean:.3f} ± "
                      f"{c.coverage_sd:.3f} | [{c.band_lo:.3f}, {c.band_hi:.3f}]"
                      f"{'' if c.within_band else ' *'} | {c.length_mean:.2f} s "
                      f"({c.length_frac_mean:.0%}) |")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("../shared/data"))
