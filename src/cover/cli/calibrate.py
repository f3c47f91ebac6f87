"""``cover calibrate``: fit a calibrator on labelled predictions and save it as JSON."""

from __future__ import annotations

import argparse

from cover.cli._common import (
    InputPath,
    OutputOrStdout,
    Subparsers,
    add_command,
    add_flags,
    job_of,
    printed,
)
from cover.cli.arg_types import fraction_in, nonnegative_int
from cover.cli.formats import add_format_flags, add_relevance_flag, format_kwargs
from cover.jobs.calibrate_job import DEFAULT_GROUPS


def add_parser(sub: Subparsers) -> None:
    from cover.calibrate.registry import RULES

    p = add_command(
        sub, "calibrate", help="fit a calibrator on labelled predictions",
        description="Fit a calibrator on labelled predictions (a prediction file joined "
        "with its ground truth by qid) and save it as a small versioned JSON file.",
        example="cover calibrate --preds preds.jsonl --gt gt.jsonl --qids "
        "splits/calibration_qids.txt --score norm --alpha 0.1 -o calibrator.json")
    add_flags(p, "preds", "gt", "score")
    p.add_argument("--rule", choices=sorted(RULES), default="split",
                   help="calibration rule; each runs with its defaults")
    p.add_argument("--delta", type=fraction_in(one=False),
                   help="rcps, ltt: 1 - confidence, in (0, 1) (default 0.1)")
    p.add_argument("--bound", choices=("binomial", "hoeffding_bentkus", "hoeffding"),
                   help="rcps: upper confidence bound on the miss rate (default binomial, the "
                        "tightest valid one for a miss/hit loss). The paper and the main "
                        "table of `cover study rcps` use hoeffding, which is looser (a larger "
                        "threshold): pass --bound hoeffding to reproduce them")
    p.add_argument("--side-weights", metavar="WS,WE", help="asymmetric: start,end side weights "
                   "fixed in advance (default: estimated on a 25%% fold of the calibration rows)")
    p.add_argument("--covariates", metavar="NAMES", help="conditional: covariates the "
                   "coverage guarantee holds over, comma-separated (duration, pred_length, "
                   "pred_center, query_words, grounder_score; default duration,pred_length)")
    p.add_argument("--max-share", type=fraction_in(one=True),
                   help="ltt: abstain when the region would cover more than this share of "
                   "the video, in (0, 1] (default 0.5)")
    p.add_argument("--max-abstain", type=fraction_in(one=False),
                   help="ltt: abstention rate budget, in (0, 1) (default 0.2)")
    p.add_argument("--score-cutoffs", metavar="C1,C2,..", help="ltt: grounder-score cutoffs "
                   "to try (abstain below the chosen one), fixed before calibration; "
                   "default none")
    p.add_argument("--keep-scores", action="store_true",
                   help="keep the calibration scores in the calibrator (a sketch beyond 5000 "
                   "rows), so that certify writes each row's conformal p-value")
    add_flags(p, "alpha", "qids", "min_scale", "target", "output", "in_memory", "batch_rows",
              alpha="miscoverage level in (0, 1) (ltt: the miss rate among answered queries)",
              qids="calibrate only on these query ids (e.g. from cover split)",
              output={"type": OutputOrStdout,
                      "help": "calibrator JSON to write (- for standard output)"},
              in_memory="read the whole prediction file even when it could be streamed",
              batch_rows="prediction lines per batch when streaming")
    p.add_argument("--no-band", action="store_true",
                   help="skip the Beta band of realised coverage (its quantiles need scipy, "
                   "about 0.15 s to import)")
    add_flags(p, "strict", "on_error", "clip")
    add_format_flags(p, gt=True)
    add_relevance_flag(p)
    add_group_flags(p)
    p.set_defaults(func=run)


def _edges(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"edges must be numbers separated by commas, "
                                         f"got {text!r}") from None


def add_group_flags(p: argparse.ArgumentParser) -> None:
    """The flags of the group-conditional and shift-aware rules (mondrian, buckets,
    weighted), in their own help section."""
    g = p.add_argument_group("groups and covariate shift (rules mondrian, buckets, weighted)")
    g.add_argument("--groups", help="grouping: all, pred_length (terciles), duration "
                   "(buckets), key (--group-key), covariate_cells; default per rule: "
                   + ", ".join(f"{r} -> {k}" for r, k in DEFAULT_GROUPS.items()))
    g.add_argument("--group-key", help="field or column to group by (--groups key)")
    g.add_argument("--edges", type=_edges, help="duration bucket edges in seconds, e.g. 60,120 "
                   "(default: 2 equal-count buckets of the calibration durations)")
    g.add_argument("--fallback", choices=("pool", "inf"), default=None,
                   help="mondrian: a group too small for its own threshold uses the pooled "
                   "threshold (default) or +inf")
    g.add_argument("--min-group-rows", type=nonnegative_int, default=None,
                   help="mondrian/buckets: groups with fewer calibration rows fall back too")
    g.add_argument("--shift-to", type=InputPath,
                   help="weighted: unlabelled target rows to reweight toward "
                   "(video durations, in any shape --videos takes, or predictions for "
                   "--covariate pred_length)")
    g.add_argument("--covariate", choices=("duration", "pred_length"), default="duration",
                   help="weighted: the covariate of the likelihood ratio (default duration)")


def run(args: argparse.Namespace) -> int:
    from cover.jobs.calibrate import calibrate
    from cover.jobs.calibrate_job import CalibrateJob

    return printed(calibrate(job_of(CalibrateJob, args, formats=format_kwargs(args),
                                    groups=args.groups or DEFAULT_GROUPS.get(args.rule, "all"))))
