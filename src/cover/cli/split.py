"""``cover split``: a unit-level calibration/test split of a query set."""

from __future__ import annotations

import argparse

from cover.cli._common import OutputFolder, Subparsers, add_command, add_flags, job_of, printed
from cover.cli.formats import add_format_flags


def add_parser(sub: Subparsers) -> None:
    p = add_command(
        sub, "split", help="unit-level calibration/test split of a query set",
        description="Split the queries of a ground-truth file into calibration and test "
        "sets by source video (never the same video on both sides); writes "
        "calibration_qids.txt and test_qids.txt. With --preds, each query is named as the "
        "predictions name it (joined as cover calibrate joins them), so the same lists "
        "serve calibrate, certify and evaluate when the grounder numbers its queries "
        "otherwise than the ground truth.",
        example="cover split --gt gt.jsonl --cal-frac 0.4 --seed 42 --out-dir splits")
    add_flags(p, "gt", "cal_frac", "seed", seed="random seed")
    p.add_argument("--out-dir", default=".", type=OutputFolder,
                   help="where to write the two qid lists")
    add_flags(p, "on_error")
    add_format_flags(p, gt=True, preds=False)
    add_flags(p, "preds", preds={
        "required": False, "help": "write the qids as these predictions name the queries "
        "(e.g. TGN's <vid>-<k> for Charades-STA's line numbers); default: the ground "
        "truth's"})
    add_format_flags(p, gt=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.jobs.split import split_queries

    return printed(job_of(split_queries, args))
