"""``cover calibrate``: fit a calibrator on labelled predictions and save it as JSON."""

from __future__ import annotations

import argparse
from typing import Any

from cover.cli._common import (
    InputPath,
    OutputOrStdout,
    Subparsers,
    add_command,
    add_input_flags,
    alpha_text,
    positive_float,
    positive_int,
)
from cover.cli._groups import add_group_flags, group_settings
from cover.cli.formats import add_format_flags, add_relevance_flag, format_kwargs
from cover.errors import InputError


def add_parser(sub: Subparsers) -> None:
    from cover.calibrate.registry import RULES
    from cover.scores import ALL_FAMILIES, TARGETS

    p = add_command(
        sub, "calibrate", help="fit a calibrator on labelled predictions",
        description="Fit a calibrator on labelled predictions (a prediction file joined "
        "with its ground truth by qid) and save it as a small versioned JSON file.",
        example="cover calibrate --preds preds.jsonl --gt gt.jsonl --qids "
        "splits/calibration_qids.txt --score norm --alpha 0.1 -o calibrator.json")
    p.add_argument("--preds", required=True, type=InputPath,
                   help="predictions (any format of `cover formats`)")
    p.add_argument("--gt", required=True, type=InputPath,
                   help="ground truth (any format of `cover formats`)")
    p.add_argument("--score", choices=ALL_FAMILIES, default="norm", help="score family")
    p.add_argument("--rule", choices=sorted(RULES), default="split",
                   help="calibration rule; each runs with its defaults")
    p.add_argument("--delta", type=float, help="rcps, ltt: 1 - confidence, in (0, 1) (default "
                   "0.1)")
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
    p.add_argument("--max-share", type=float, help="ltt: abstain when the region would "
                   "cover more than this share of the video, in (0, 1] (default 0.5)")
    p.add_argument("--max-abstain", type=float, help="ltt: abstention rate budget, in (0, 1) "
                   "(default 0.2)")
    p.add_argument("--score-cutoffs", metavar="C1,C2,..", help="ltt: grounder-score cutoffs "
                   "to try (abstain below the chosen one), fixed before calibration; "
                   "default none")
    p.add_argument("--keep-scores", action="store_true",
                   help="keep the calibration scores in the calibrator (a sketch beyond 5000 "
                   "rows), so that certify writes each row's conformal p-value")
    p.add_argument("--alpha", type=alpha_text, default="0.1", help="miscoverage level in (0, 1) "
                   "(ltt: the miss rate among answered queries)")
    p.add_argument("--qids", type=InputPath,
                   help="calibrate only on these query ids (e.g. from cover split)")
    p.add_argument("--min-scale", type=positive_float, default=1.0,
                   help="NORM scale floor, s")
    p.add_argument("--target", choices=TARGETS, default="envelope",
                   help="cover the envelope of multi-window truth, or every window")
    p.add_argument("-o", "--output", required=True, type=OutputOrStdout,
                   help="calibrator JSON to write (- for standard output)")
    p.add_argument("--in-memory", action="store_true",
                   help="read the whole prediction file even when it could be streamed")
    p.add_argument("--batch-rows", type=positive_int, default=16_384,
                   help="prediction lines per batch when streaming")
    p.add_argument("--no-band", action="store_true",
                   help="skip the Beta band of realised coverage (its quantiles need scipy, "
                   "about 0.15 s to import)")
    add_input_flags(p)
    add_format_flags(p, gt=True)
    add_relevance_flag(p)
    add_group_flags(p)
    p.set_defaults(func=run)


def _rule_params(args: argparse.Namespace) -> dict[str, Any]:
    """The rule options given on the command line (a flag of another rule is an error)."""
    given = {"delta": args.delta, "bound": args.bound, "weights": args.side_weights,
             "covariates": args.covariates,
             "max_share": args.max_share, "max_abstain": args.max_abstain,
             "score_cutoffs": args.score_cutoffs}
    wants = {"rcps": {"delta", "bound"}, "asymmetric": {"weights"},
             "conditional": {"covariates"},
             "ltt": {"delta", "bound", "max_share", "max_abstain", "score_cutoffs"}
             }.get(args.rule, set())
    stray = sorted(k for k, v in given.items() if v is not None and k not in wants)
    if stray:
        flags = {k: "--" + k.replace("_", "-") for k in given} | {"weights": "--side-weights"}
        raise InputError(f"{', '.join(flags[k] for k in stray)} does not apply to --rule "
                         f"{args.rule}")
    params: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    if "weights" in params:
        try:
            ws, we = (float(x) for x in params["weights"].split(","))
        except ValueError:
            raise InputError(f"--side-weights must be two numbers WS,WE, got "
                             f"{params['weights']!r}") from None
        params["weights"] = {"start": ws, "end": we}
    if "covariates" in params:
        from cover.calibrate.covariates import parse_covariates

        try:
            params["covariates"] = parse_covariates(params["covariates"])
        except ValueError as exc:
            raise InputError(str(exc)) from None
    if "score_cutoffs" in params:
        try:
            params["score_cutoffs"] = [float(x) for x in params["score_cutoffs"].split(",")]
        except ValueError:
            raise InputError(f"--score-cutoffs must be numbers C1,C2,.., got "
                             f"{params['score_cutoffs']!r}") from None
    return params


def run(args: argparse.Namespace) -> int:
    from cover.cli._groups import DEFAULT_GROUPS
    from cover.jobs.calibrate import CalibrateJob, calibrate

    job = CalibrateJob(
        preds=args.preds, gt=args.gt, output=args.output, score=args.score, alpha=args.alpha,
        min_scale=args.min_scale, target=args.target, rule=args.rule,
        params=_rule_params(args), bound=args.bound, qids=args.qids, clip=args.clip,
        strict=args.strict, on_error=args.on_error, keep_scores=args.keep_scores,
        in_memory=args.in_memory, batch_rows=args.batch_rows, no_band=args.no_band,
        groups=args.groups or DEFAULT_GROUPS.get(args.rule, "all"),
        formats=format_kwargs(args), shift_to=args.shift_to)
    for line in calibrate(job, lambda table: group_settings(args, table)):
        print(line)
    return 0
