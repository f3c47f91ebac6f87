"""``cover calibrate``: fit a calibrator on labelled predictions and save it as JSON."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from cover.cli._common import (
    InputPath,
    OutputOrStdout,
    Subparsers,
    add_command,
    add_input_flags,
    alpha_text,
    positive_float,
    positive_int,
    report_problems,
    say,
)
from cover.cli._groups import add_group_flags, group_settings
from cover.cli.formats import add_format_flags, format_kwargs
from cover.errors import InputError, no_rows_left


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


def rcps_bound_line(given: str | None) -> str:
    """Which bound RCPS used, and how it relates to the paper's (Hoeffding)."""
    from cover.calibrate.rcps import DEFAULTS

    bound = given or str(DEFAULTS["bound"])
    how = "given by --bound" if given else "the default"
    if bound == "hoeffding":
        return f"RCPS bound: hoeffding ({how}; the paper's, as in `cover study rcps`)"
    return (f"RCPS bound: {bound} ({how}); the paper and the main table of `cover study rcps` "
            "use hoeffding, a looser bound: --bound hoeffding reproduces them")


def _streamed(args: argparse.Namespace) -> Any:
    """The scores streamed from a large prediction file (:mod:`cover.jobs.calibrate_stream`),
    or None when the files are read whole."""
    from cover.cli._groups import DEFAULT_GROUPS
    from cover.jobs.calibrate_stream import can_stream, score_streaming

    groups = args.groups or DEFAULT_GROUPS.get(args.rule, "all")
    if args.in_memory or not can_stream(args.preds, pred_format=args.pred_format,
                                        columns=args.columns, rule=args.rule, groups=groups):
        return None
    kw = format_kwargs(args)
    return score_streaming(score=args.score, min_scale=args.min_scale, target=args.target,
                           preds=args.preds, gt=args.gt, gt_format=kw.get("gt_format"),
                           gt_durations=kw.get("gt_durations"), gt_columns=kw.get("gt_columns"),
                           qids=args.qids, clip=args.clip, strict=args.strict,
                           on_error=args.on_error, batch_rows=args.batch_rows,
                           pred_format=args.pred_format, columns=args.columns)


def run(args: argparse.Namespace) -> int:
    from cover.calibrate import Calibrator
    from cover.io.labelled import load_labelled
    from cover.scores import compute_scores, require_family_input
    from cover.ties import Ties

    inputs = [args.preds, args.gt, args.qids, args.gt_durations, args.shift_to]
    cal = Calibrator(score=args.score, alpha=args.alpha, min_scale=args.min_scale,
                     target=args.target, rule=args.rule, params=_rule_params(args))
    streamed = _streamed(args)
    if streamed is None:
        table, problems = load_labelled(args.preds, args.gt, qids=args.qids, clip=args.clip,
                                        strict=args.strict, on_error=args.on_error, log=say,
                                        **format_kwargs(args))
    else:
        table, problems = streamed.table, streamed.problems
    report_problems(problems, what="calibration input")
    if len(table) == 0:
        raise InputError(no_rows_left(args.preds, args.gt, problems))
    if streamed is None:
        require_family_input(table, args.score, args.preds)
    settings, fit_kw, notes = group_settings(args, table)
    params = {**_rule_params(args), **(settings.pop("params") or {})}
    cal = Calibrator(score=args.score, alpha=args.alpha, min_scale=args.min_scale,
                     target=args.target, rule=args.rule, params=params,
                     keep_scores=args.keep_scores, **settings)
    if streamed is None:
        cal.fit(table, **fit_kw)
    else:
        cal.fit_scores(streamed.scores, table)
    for line in notes:
        print(line)
    if args.strict and not all(np.isfinite(s.value) for r in cal.thresholds_.values()
                               for s in r.sides.values()):
        raise InputError(f"{len(table)} calibration rows are too few for alpha={args.alpha}")
    cal.save(args.output, inputs=inputs)

    def scores() -> Any:
        if streamed is not None:
            return streamed.scores.values
        return compute_scores(table, args.score, min_scale=args.min_scale,
                              target=args.target).values

    if args.rule != "split" or cal.threshold_ is None:
        print(f"calibrated {args.score.upper()} by rule {args.rule} at alpha={args.alpha} on "
              f"{len(table)} rows:")
        for line in cal.describe():
            print(f"  {line}")
        if args.rule == "rcps":
            print(f"  {rcps_bound_line(args.bound)}")
        if cal.threshold_ is not None:
            print(f"  {Ties.of(scores(), cal.threshold_).describe(split=False)}")
        print(f"wrote {args.output}")
        return 0
    c = cal.counts_
    print(f"calibrated {args.score.upper()} at alpha={args.alpha} on {cal.n_} rows: "
          f"threshold {cal.threshold_:.6g} (k={cal.k_}-th smallest score)")
    if args.no_band:
        print(f"expected coverage k/(n+1) = {cal.expected_coverage:.4f}")
    else:
        from cover.bands import CoverageBands, unit_design_effect

        deff, g = unit_design_effect(scores() <= cal.threshold_, table.units)
        bands = CoverageBands.of(cal.n_ or 0, cal.k_ or 0, calibration_deff=deff,
                                 calibration_units=g)
        print(f"expected coverage k/(n+1) = {bands.expected:.4f}; {bands.describe()}")
    print(Ties.of(scores(), cal.threshold_).describe(float(args.alpha)))
    print(f"refused rows {c.get('refused', 0)}, NORM scale floored {c.get('min_scale_floored', 0)}"
          f", truth beyond signal {c.get('beyond_signal', 0)}")
    print(f"wrote {args.output}")
    return 0
