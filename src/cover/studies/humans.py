"""The human grounder (SPEC §8): each re-annotator of a pair treated as a grounder and
certified against the official ground truth with the same protocol, so a trained
grounder's certified cost can be read against the annotators' own disagreement.

Per dataset and annotator: the annotator's point-IoU with the official window, and the
realised coverage and mean region length (seconds, share of the video) of NORM and SEC
at the 0.9 target (mean over calibration resamples; see :mod:`cover.studies.efficiency`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cover.metrics import point_iou
from cover.studies.common import Missing
from cover.studies.context import Pair
from cover.studies.efficiency import efficiency
from cover.studies.protocol import Protocol
from cover.studies.result import StudyResult, Table

TARGET = 0.9


def humans(data_dir: str | Path, protocol: Protocol, *, min_scale: float = 1.0
           ) -> StudyResult:
    """Human annotators of Charades-STA, ActivityNet Captions and UAG-OOPS as grounders."""
    from cover.grounders.humans import human_grounders

    try:
        found = human_grounders(data_dir)
    except (OSError, ValueError) as exc:
        return StudyResult("humans", "Human grounders", str(data_dir), {}, [], [Missing(
            "Human-grounder table", f"the re-annotation files under {data_dir} ({exc})")])
    cells: list[dict[str, Any]] = []
    for dataset, hg in found.items():
        for name, tab in hg.annotators.items():
            pair = Pair(name, dataset, tab, protocol, min_scale)
            eff = efficiency(pair, (TARGET,))
            row: dict[str, Any] = {"dataset": dataset, "annotator": name, "rows": len(tab),
                                   "refused": int((~tab.has_interval).sum()),
                                   "point_iou": float(np.mean(point_iou(tab)))}
            for c in eff.data["cells"]:
                row[c["family"]] = {"coverage": c["coverage_mean"],
                                    "length": c["length_mean"],
                                    "share": c["length_frac_mean"]}
            cells.append(row)

    def show(c: dict[str, Any], fam: str) -> str:
        x = c.get(fam)
        return "--" if x is None else (f"{x['coverage']:.3f} / {x['length']:.1f} s "
                                       f"({x['share']:.0%})")

    table = Table("humans", f"Human grounders: each re-annotator certified against the "
                  f"official ground truth at target {TARGET:.2f} (coverage / mean region "
                  "length, share of the video). The length is the annotators' own "
                  "disagreement: no grounder trained on these labels can be certified "
                  "much tighter.",
                  ("Dataset", "Annotator", "Pairs", "Refused", "Point-IoU", "NORM cov. / len.",
                   "SEC cov. / len."),
                  tuple((c["dataset"], c["annotator"], str(c["rows"]), str(c["refused"]),
                         f"{c['point_iou']:.3f}", show(c, "norm"), show(c, "sec"))
                        for c in cells))
    return StudyResult("humans", "Human grounders", "re-annotators", {"target": TARGET,
                                                                      "cells": cells}, [table])
