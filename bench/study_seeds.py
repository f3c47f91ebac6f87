"""Every per-pair study over N unit-level split seeds, in one process: seconds per study.

Run from the repository root::

    .venv/bin/python bench/study_seeds.py --seeds 100 --out bench/results-studies.md

The split-seed robustness of the studies reruns each study with the unit-level split
of seeds ``0 .. N - 1`` (``cover study --split-seeds N`` does it for the coverage,
efficiency and conditional cells). This script times every per-pair study of
``cover study all`` (all but transfer, which needs two datasets) on one grounder for N
seeds, the data read once, and prints seconds per study (total over the seeds and per
seed) with the machine's load; the pairs of all seeds share the table's seed-independent
values (:class:`cover.studies.context.TableFacts`). Whole-command timings of ``cover
study`` are in the same results file, measured from outside the process.
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace
from pathlib import Path

from markdown_out import machine_line, publish

from cover.io.datasets import find_data_dir
from cover.io.labelled import load_labelled
from cover.jobs.study import per_pair_runners
from cover.studies import coverage
from cover.studies.context import Pair, TableFacts
from cover.studies.protocol import Protocol

PREDS = "qvhighlights/qd_detr/video_checkpoint_best_hl_val_preds.jsonl"
GT = "qvhighlights/annotations/highlight_val_release.jsonl"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--out", type=Path, help="also write the Markdown here")
    args = ap.parse_args()
    data = find_data_dir(args.data_dir)
    table, _ = load_labelled(data / PREDS, data / GT)
    # Every per-pair study of `cover study all`, in its order (transfer needs two datasets).
    runners = {"coverage": lambda p: coverage.coverage(p)[0], **per_pair_runners()}
    studies = list(runners)
    seconds = dict.fromkeys(studies, 0.0)
    load0 = os.getloadavg()[0]
    t_all = time.perf_counter()
    # Values of the table that no split changes (the field metrics' per-row values) are
    # worked out once and shared by every seed's pair, as a split-seed run would.
    facts = TableFacts(table)
    for seed in range(args.seeds):
        pair = Pair("qd_detr", "QVHighlights", table, replace(Protocol(), seed=seed),
                    facts=facts)
        for study in studies:
            t0 = time.perf_counter()
            runners[study](pair)
            seconds[study] += time.perf_counter() - t0
    total = time.perf_counter() - t_all
    lines = [f"Command: `.venv/bin/python bench/study_seeds.py --seeds {args.seeds}`", "",
             machine_line(load0) + ". QD-DETR on QVHighlights val "
             f"({len(table)} rows), the default protocol (50 resamples), seeds "
             f"0..{args.seeds - 1}.",
             "", "| study | seconds, all seeds | seconds per seed |", "|---|---|---|"]
    for study in studies:
        lines.append(f"| {study} | {seconds[study]:.1f} | {seconds[study] / args.seeds:.3f} |")
    lines.append(f"| **every study** | **{total:.1f}** | **{total / args.seeds:.3f}** |")
    return publish(lines, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
