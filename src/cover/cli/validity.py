"""``cover validity``: study 1 (coverage validity) for one or more grounders."""

from __future__ import annotations

import argparse
from pathlib import Path

from cover.cli._common import Subparsers, add_command, add_flags, job_of
from cover.cli.formats import add_format_flags, add_selection_flags, format_kwargs


def add_parser(sub: Subparsers) -> None:
    from cover.jobs.validity import WHAT_IT_CHECKS
    from cover.scores import FAMILIES

    p = add_command(
        sub, "validity", help="study 1: coverage validity over the alpha grid",
        description="Does the coverage guarantee hold for your grounder? "
        + WHAT_IT_CHECKS.removeprefix("What this checks: ")
        + " Writes JSON, Markdown, figures and report.html into --out (one sub-folder per "
        "grounder when there are several).",
        example="cover validity --preds qd_detr/best_hl_val_preds.jsonl --preds "
        "eatr/best_hl_val_preds.jsonl --gt gt.jsonl --out validity-out")
    add_flags(p, "preds", preds={"action": "append",
                                 "help": "prediction jsonl; repeat for more grounders"})
    p.add_argument("--name", action="append",
                   help="display name per --preds (default: as cover study names it: the "
                   "file's folder, with the file name when one folder holds several)")
    add_flags(p, "gt", "qids", "out",
              qids="study only these query ids (one per line)")
    p.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES),
                   help="score families (a family whose input a file lacks is skipped)")
    add_flags(p, "alphas", "resamples", "seed", "cal_frac", "min_scale", "target", "split_seeds",
              "strict", "on_error", "clip", alphas="miscoverage levels in (0, 1)",
              seed="random seed of split and resamples",
              split_seeds="split_seeds.json / .md")
    add_format_flags(p, gt=True)
    add_selection_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.jobs.validity import run_validity

    job_of(run_validity, args, preds=[Path(p) for p in args.preds], gt=Path(args.gt),
           out=Path(args.out), paths=("qids",), names=args.name,
           families=tuple(args.families), n_resamples=args.resamples,
           alphas=tuple(float(a) for a in args.alphas), read_options=format_kwargs(args))
    return 0
