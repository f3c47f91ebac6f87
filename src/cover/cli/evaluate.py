"""``cover evaluate``: coverage, length and IoU of certified regions against truth."""

from __future__ import annotations

import argparse

from cover.cli._common import (
    InputPath,
    OutputOrStdout,
    Subparsers,
    add_command,
    positive_int,
)
from cover.cli.formats import add_format_flags, add_relevance_flag


def add_parser(sub: Subparsers) -> None:
    from cover.scores import TARGETS

    p = add_command(
        sub, "evaluate", help="coverage, length, IoU of certified regions",
        description="Score the output of cover certify against ground truth: coverage, "
        "region length, IoU, components and refusals, with the 95% test band the "
        "coverage should fall in. The regions file (JSON lines, Parquet or CSV) is read a "
        "batch at a time; the ground truth is read whole. CSV regions carry no calibrator "
        "fields: give --calibrator (the file certify used) for the test band, "
        "else it is reported as not known.",
        example="cover evaluate --regions regions.jsonl --gt gt.jsonl --json metrics.json")
    p.add_argument("--regions", required=True, type=InputPath,
                   help="output of cover certify (JSON lines, Parquet, or CSV/TSV)")
    p.add_argument("--gt", required=True, type=InputPath,
                   help="ground truth (any format of `cover formats`)")
    p.add_argument("--json", type=OutputOrStdout,
                   help="write the metrics here as (strict) JSON (- for standard output)")
    p.add_argument("--target", choices=TARGETS, default="envelope",
                   help="cover the envelope of multi-window truth, or every window")
    p.add_argument("--refusal-policy", choices=("whole-video", "miss", "drop"),
                   default="whole-video", help="how refused rows count in the metrics")
    p.add_argument("--on-error", choices=("raise", "reject"), default="raise",
                   help="bad rows: stop with an error, or set them aside with reasons and go on")
    p.add_argument("--columns", metavar="MAP",
                   help="Parquet or CSV regions: the column mapping they were certified "
                   "with (qid=COL[,vid=..,windows=..|start=..,end=..,query=..]; default: "
                   "the columns named qid, vid, ...)")
    p.add_argument("--calibrator", metavar="FILE", type=InputPath,
                   help="CSV regions: the calibrator they were certified with (score, "
                   "alpha, k, n for the test band; without it the band is not known)")
    p.add_argument("--in-memory", action="store_true",
                   help="read the whole regions file instead of streaming it")
    p.add_argument("--batch-rows", type=positive_int, default=16_384,
                   help="rows per batch when streaming (memory is bounded by one batch)")
    p.add_argument("--diagnostics", metavar="NAMES",
                   help="conditional-coverage diagnostics over these covariates, comma-"
                   "separated (duration, pred_length, pred_center, query_words, "
                   "grounder_score): worst-slab coverage and coverage gap (keeps each "
                   "row's covered flag and covariates)")
    add_format_flags(p, gt=True, preds=False)
    add_relevance_flag(p, calibrated=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.calibrate.covariates import parse_covariates
    from cover.errors import InputError
    from cover.jobs.evaluate import EvaluateFiles, evaluate_files

    try:
        names = tuple(parse_covariates(args.diagnostics, "--diagnostics")) \
            if args.diagnostics is not None else ()
    except ValueError as exc:
        raise InputError(str(exc)) from None

    evaluate_files(EvaluateFiles(
        regions=args.regions, gt=args.gt, json=args.json, gt_format=args.gt_format,
        gt_columns=args.gt_columns, gt_durations=args.gt_durations, columns=args.columns,
        target=args.target, refusal_policy=args.refusal_policy, on_error=args.on_error,
        in_memory=args.in_memory, batch_rows=args.batch_rows, calibrator=args.calibrator,
        diagnostics=names, relevance_from=args.relevance_from))
    return 0
