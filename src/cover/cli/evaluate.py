"""``cover evaluate``: coverage, length and IoU of certified regions against truth."""

from __future__ import annotations

import argparse

from cover.cli._common import InputPath, Subparsers, add_command, add_flags, job_of
from cover.cli.formats import add_format_flags, add_relevance_flag
from cover.io.layouts import LAYOUTS

#: The named layouts whose certified rows ``--format`` reads (their predictions').
LAYOUT_NAMES = tuple(x.name for x in LAYOUTS if x.role == "predictions")


def add_parser(sub: Subparsers) -> None:
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
    add_flags(p, "gt", "json", "target",
              json="write the metrics here as (strict) JSON (- for standard output)")
    p.add_argument("--refusal-policy", choices=("whole-video", "miss", "drop"),
                   default="whole-video", help="how refused rows count in the metrics")
    add_flags(p, "on_error")
    p.add_argument("--columns", metavar="MAP",
                   help="Parquet or CSV regions: the column mapping they were certified "
                   "with (qid=COL[,vid=..,windows=..|start=..,end=..,query=..]; default: "
                   "the columns named qid, vid, ...); JSON-lines regions: where each row's "
                   "base prediction is, if not pred_relevant_windows or start and end "
                   "(windows=SOURCE[,scores=SOURCE], or start=SOURCE,end=SOURCE, and "
                   "qid=SOURCE when its qid field is the grounder's own text, in the "
                   "mapping language of `cover formats`; e.g. start=timestamp.0,"
                   "end=timestamp.1)")
    p.add_argument("--format", dest="pred_format", metavar="NAME", choices=LAYOUT_NAMES,
                   help="JSON-lines regions certified from a named layout's predictions ("
                   f"{', '.join(LAYOUT_NAMES)}): read each row's base prediction as that "
                   "layout reads it (what --columns would name; default: the layout "
                   "detected from the first row, named on standard error)")
    p.add_argument("--calibrator", metavar="FILE", type=InputPath,
                   help="CSV regions: the calibrator they were certified with (score, "
                   "alpha, k, n for the test band; without it the band is not known)")
    add_flags(p, "in_memory", "batch_rows",
              in_memory="read the whole regions file instead of streaming it")
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

    evaluate_files(job_of(EvaluateFiles, args, diagnostics=names))
    return 0
