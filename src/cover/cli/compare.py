"""``cover compare``: two grounders (or two rules / score families) on the same queries,
paired differences with video-clustered intervals."""

from __future__ import annotations

import argparse
from pathlib import Path

from cover.cli._common import (
    InputPath,
    OutputOrStdout,
    OutputPath,
    Subparsers,
    add_command,
    add_input_flags,
    alpha_text,
    positive_float,
)
from cover.cli.formats import add_format_flags, format_kwargs
from cover.errors import InputError

#: Rules ``compare`` can run with their defaults (``weighted`` needs a shift target).
COMPARABLE_RULES = ("asymmetric", "bonferroni", "buckets", "crc", "mondrian", "rcps", "split")


def add_parser(sub: Subparsers) -> None:
    from cover.scores import ALL_FAMILIES, TARGETS

    p = add_command(
        sub, "compare", help="paired differences of two grounders or two rules",
        description="Calibrate two prediction files (or one file with two --score / --rule "
        "choices) on the same calibration queries and certify the same test queries; print "
        "A, B and the paired difference A - B of coverage, certified length, R1@0.3/0.5/0.7 "
        "and mIoU, with a 95%% interval clustered by source video. Only queries both files "
        "predict are compared; the others are counted and named.",
        example="cover compare qd_detr/preds.jsonl moment_detr/preds.jsonl --gt gt.jsonl "
        "--json compare.json --html compare.html")
    p.add_argument("a", metavar="A", type=InputPath, help="predictions of grounder A")
    p.add_argument("b", metavar="B", nargs="?", type=InputPath,
                   help="predictions of grounder B (default: A again, with --score-b/--rule-b)")
    p.add_argument("--gt", required=True, type=InputPath,
                   help="ground truth (any format of `cover formats`)")
    p.add_argument("--name-a", help="display name of A (default: its file's folder)")
    p.add_argument("--name-b", help="display name of B (default: its file's folder)")
    p.add_argument("--score", choices=ALL_FAMILIES, default="norm", help="score family of A")
    p.add_argument("--score-b", choices=ALL_FAMILIES, help="score family of B (default: --score)")
    p.add_argument("--rule", choices=COMPARABLE_RULES, default="split",
                   help="calibration rule of A (with its default grouping)")
    p.add_argument("--rule-b", choices=COMPARABLE_RULES, help="rule of B (default: --rule)")
    p.add_argument("--alpha", type=alpha_text, default="0.1", help="miscoverage level in (0, 1)")
    p.add_argument("--seed", type=int, default=42, help="seed of the unit-level split")
    p.add_argument("--cal-frac", type=float, default=0.4,
                   help="share of source videos that calibrate, in (0, 1)")
    p.add_argument("--min-scale", type=positive_float, default=1.0, help="NORM scale floor, s")
    p.add_argument("--target", choices=TARGETS, default="envelope",
                   help="cover the envelope of multi-window truth, or every window")
    p.add_argument("--json", type=OutputOrStdout,
                   help="write the comparison here as (strict) JSON (- for standard output)")
    p.add_argument("--html", type=OutputPath, help="write a self-contained HTML report here")
    add_input_flags(p)
    add_format_flags(p, gt=True)
    p.set_defaults(func=run)


def _name(path: str, given: str | None) -> str:
    return given or Path(path).parent.name or Path(path).stem


def run(args: argparse.Namespace) -> int:
    from cover.cli._groups import DEFAULT_GROUPS
    from cover.jobs.compare import CompareSpec, Side, run_compare

    b = args.b or args.a
    score_b, rule_b = args.score_b or args.score, args.rule_b or args.rule
    if args.b is None and (score_b, rule_b) == (args.score, args.rule):
        raise InputError("nothing to compare: give a second prediction file B, or "
                         "--score-b / --rule-b for a second choice on A")
    name_a, name_b = _name(args.a, args.name_a), _name(b, args.name_b)
    if name_a == name_b and args.name_b is None:
        # One file (or two files in one folder): say what differs.
        name_a = f"{name_a} {args.score.upper()}/{args.rule}"
        name_b = f"{name_b} {score_b.upper()}/{rule_b}"
    run_compare(CompareSpec(
        a=Side(Path(args.a), name_a, args.score, args.rule, DEFAULT_GROUPS.get(args.rule, "all")),
        b=Side(Path(b), name_b, score_b, rule_b, DEFAULT_GROUPS.get(rule_b, "all")),
        gt=Path(args.gt), alpha=args.alpha, seed=args.seed, cal_frac=args.cal_frac,
        min_scale=args.min_scale, target=args.target, clip=args.clip, strict=args.strict,
        on_error=args.on_error, read_options={k: v for k, v in format_kwargs(args).items()
                                              if v is not None},
        json=Path(args.json) if args.json else None,
        html=Path(args.html) if args.html else None))
    return 0
