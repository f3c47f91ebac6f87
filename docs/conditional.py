"""Regenerates the table of docs/calibration-rules.md, section "Conditional calibration":
marginal (split) vs Mondrian vs conditional on the QVHighlights val grounders, NORM at
alpha 0.1, split by video (half calibration) at three seeds; mean and spread over seeds.

Usage: PYTHONPATH=src python docs/conditional.py [DATA_DIR]  (prints the Markdown table)
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

from cover.data.splits import split_by_unit
from cover.io.labelled import load_labelled
from cover.studies.rule_diagnostics import COVARIATES, compare_rules

GROUNDERS = (
    ("Moment-DETR", "moment_detr/inference_hl_val_test_code_preds.jsonl"),
    ("QD-DETR (video)", "qd_detr/video_checkpoint_best_hl_val_preds.jsonl"),
    ("EaTR", "eatr/best_hl_val_preds.jsonl"),
    ("UniVTG", "univtg/univtg_val_preds.jsonl"),
)
SEEDS = (0, 1, 2)


def _cell(values: list[float], digits: int = 3) -> str:
    v = np.asarray([np.nan if x is None else x for x in values], dtype=np.float64)
    return f"{np.nanmean(v):.{digits}f} ± {np.nanstd(v):.{digits}f}"


def main(data: Path) -> str:
    warnings.simplefilter("ignore")
    q = data / "qvhighlights"
    lines = [
        "| Grounder | Rule | Coverage | Worst stratum | Worst slab | Gap (max) | Length (s) |",
        "|---|---|---:|---:|---:|---:|---:|"]
    for name, rel in GROUNDERS:
        if not (q / rel).exists():
            continue
        table, _ = load_labelled(q / rel, q / "annotations/highlight_val_release.jsonl")
        runs = []
        for seed in SEEDS:
            split = split_by_unit(table.units, cal_frac=0.5, seed=seed)
            runs.append(compare_rules(table.take(split.calibration), table.take(split.test),
                                      0.1, seed=seed))
        for i, rec in enumerate(runs[0]):
            col = [run[i] for run in runs]
            lines.append(
                f"| {name} | {rec['rule']} | {_cell([r['coverage'] for r in col])} | "
                f"{_cell([r['worst_stratum_coverage'] for r in col])} | "
                f"{_cell([r['worst_slab'] for r in col])} | "
                f"{_cell([r['gap_max'] for r in col])} | "
                f"{_cell([r['length'] for r in col], 1)} |")
    lines += ["", f"Covariates of rule conditional and of the diagnostics: "
              f"{', '.join(COVARIATES)}. Mean ± sd over split seeds {SEEDS}."]
    return "\n".join(lines)


if __name__ == "__main__":
    root = Path(__file__).resolve().parent.parent
    print(main(Path(sys.argv[1]) if len(sys.argv) > 1 else root.parent / "shared" / "data"))
