"""``cover compare``: two grounders (or two rules / score families) on the same queries,
paired differences with video-clustered intervals."""

from __future__ import annotations

import argparse
from pathlib import Path

from cover.cli._common import InputPath, OutputPath, Subparsers, add_command, add_flags, job_of
from cover.cli.formats import add_format_flags, add_selection_flags, format_kwargs

#: Rules ``compare`` can run with their defaults (``weighted`` needs a shift target).
COMPARABLE_RULES = ("asymmetric", "bonferroni", "buckets", "crc", "mondrian", "rcps", "split")


def add_parser(sub: Subparsers) -> None:
    from cover.scores import ALL_FAMILIES

    p = add_command(
        sub, "compare", help="paired differences of two grounders or two rules",
        description="Calibrate two prediction files (or one file with two --score / --rule "
        "choices) on the same calibration queries and certify the same test queries; print "
        "A, B and the paired difference A - B of coverage, certified length, R1@0.3/0.5/0.7 "
        "and mIoU, with a 95% interval clustered by source video. Only queries both files "
        "predict are compared; the others are counted and named.",
        example="cover compare qd_detr/preds.jsonl moment_detr/preds.jsonl --gt gt.jsonl "
        "--json compare.json --html compare.html")
    p.add_argument("a", metavar="A", type=InputPath, help="predictions of grounder A")
    p.add_argument("b", metavar="B", nargs="?", type=InputPath,
                   help="predictions of grounder B (default: A again, with --score-b/--rule-b)")
    add_flags(p, "gt")
    p.add_argument("--name-a", help="display name of A (default: its file's folder, with "
                   "the file name when A and B share a folder)")
    p.add_argument("--name-b", help="display name of B (default: its file's folder, with "
                   "the file name when A and B share a folder)")
    add_flags(p, "score", score="score family of A")
    p.add_argument("--score-b", choices=ALL_FAMILIES, help="score family of B (default: --score)")
    p.add_argument("--rule", choices=COMPARABLE_RULES, default="split",
                   help="calibration rule of A (with its default grouping)")
    p.add_argument("--rule-b", choices=COMPARABLE_RULES, help="rule of B (default: --rule)")
    add_flags(p, "alpha", "seed", "cal_frac", "min_scale", "target", "json",
              seed="seed of the unit-level split",
              json="write the comparison here as (strict) JSON (- for standard output)")
    p.add_argument("--html", type=OutputPath, help="write a self-contained HTML report here")
    add_flags(p, "strict", "on_error", "clip")
    add_format_flags(p, gt=True)
    add_selection_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.jobs.compare import CompareSpec, run_compare, sides

    a, b = job_of(sides, args)
    run_compare(job_of(CompareSpec, args, gt=Path(args.gt), paths=("json", "html"), a=a, b=b,
                       read_options=format_kwargs(args)))
    return 0
