"""The ``cover`` command line: calibrate, certify, evaluate, split, validity, demo.

Every command reads real files, says what happened to every input row (kept,
clipped, refused or rejected, with counts), and exits non-zero with a message that
names file, line and qid when the input is bad.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from cover._version import __version__
from cover.errors import CoverError, CoverWarning, InputError, RowProblem, report_lines

EXIT_USAGE = 2


def _say(msg: str) -> None:
    print(msg, file=sys.stderr)


def _report_problems(problems: list[RowProblem], *, what: str) -> None:
    for line in report_lines(problems, what=what):
        _say(line)


def _alpha(text: str) -> str:
    """argparse type: keep alpha as the user's decimal text (exact arithmetic later)."""
    from cover.calibrate.quantile import as_fraction

    try:
        as_fraction(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


# ---- calibrate -----------------------------------------------------------------------
def cmd_calibrate(args: argparse.Namespace) -> int:
    from cover.calibrate import Calibrator
    from cover.io.labelled import load_labelled
    from cover.metrics import coverage_reference

    table, problems = load_labelled(args.preds, args.gt, qids=args.qids, clip=args.clip,
                                    strict=args.strict, on_error=args.on_error)
    _report_problems(problems, what="calibration input")
    if len(table) == 0:
        raise InputError("no calibration rows left after validation")
    cal = Calibrator(score=args.score, alpha=args.alpha, min_scale=args.min_scale,
                     target=args.target).fit(table)
    if args.strict and not np.isfinite(cal.threshold_ or 0.0):
        raise InputError(f"{len(table)} calibration rows are too few for alpha={args.alpha}")
    cal.save(args.output)
    ref = coverage_reference(cal.n_ or 0, cal.k_ or 0)
    c = cal.counts_
    print(f"calibrated {args.score.upper()} at alpha={args.alpha} on {cal.n_} rows: "
          f"threshold {cal.threshold_:.6g} (k={cal.k_}-th smallest score)")
    print(f"expected coverage k/(n+1) = {ref['expected']:.4f}; 95% band of realised coverage "
          f"[{ref['band_lo']:.4f}, {ref['band_hi']:.4f}]")
    print(f"refused rows {c.get('refused', 0)}, NORM scale floored {c.get('min_scale_floored', 0)}"
          f", truth beyond signal {c.get('beyond_signal', 0)}")
    print(f"wrote {args.output}")
    return 0


# ---- certify -------------------------------------------------------------------------
def cmd_certify(args: argparse.Namespace) -> int:
    from cover.calibrate import Calibrator
    from cover.data.join import fill_durations
    from cover.io import read_durations, read_predictions
    from cover.io.jsonl import raise_on_rejections
    from cover.io.qids import read_qid_lines, unknown_qids
    from cover.io.regions_jsonl import certified_rows, write_certified

    cal = Calibrator.load(args.calibrator)
    preds = read_predictions(args.preds, clip=args.clip, on_error=args.on_error)
    table = preds.table
    problems: list[RowProblem] = []
    if args.qids:
        wanted, lines = read_qid_lines(args.qids)
        problems += unknown_qids(args.qids, wanted, lines, table.qid, args.preds)
        table = table.select_qids(wanted)
    vids, durs = read_durations(args.videos) if args.videos else (None, None)
    table, filled = fill_durations(table, vids, durs, strict=args.strict,
                                   source=args.videos or "--videos (not given)")
    problems += filled
    no_duration = [p for p in problems if p.problem.startswith("no duration known")]
    if no_duration and not args.videos and args.on_error == "raise":
        raise InputError(
            f"{len(no_duration)} prediction row(s) carry no duration, e.g. {no_duration[0]}.\n"
            "Pass --videos FILE: any jsonl with 'vid' and 'duration' fields (QVHighlights' "
            "highlight_*_release.jsonl files qualify; no ground truth is needed)."
        )
    raise_on_rejections(problems, args.on_error, args.preds)
    regions = cal.certify(table)
    rejected = dict(preds.rejected)
    lines = preds.table.line if preds.table.line is not None else np.zeros(0, dtype=np.int64)
    records: list[Any] = [] if preds.table.records is None else list(preds.table.records)
    by_line = {int(ln): rec for ln, rec in zip(lines.tolist(), records, strict=True)}
    for p in problems:
        if p.action == "rejected" and p.path == preds.table.source and p.line in by_line:
            rejected[p.line] = by_line[p.line]
    meta = {"score": cal.score, "rule": cal.rule, "alpha": float(cal.alpha_fraction),
            "k": cal.k_, "n_calibration": cal.n_}
    rows = certified_rows(table, regions, meta, rejected, preds.problems + problems)
    write_certified(args.output, rows)
    _report_problems(preds.problems + problems, what=args.preds)
    n_ref = int(regions.refused.sum())
    print(f"certified {len(table) - n_ref}, refused (whole video) {n_ref}, rejected "
          f"{len(rejected)} of {len(rows)} input rows; mean region length "
          f"{regions.length.mean() if len(regions) else float('nan'):.1f} s")
    print(f"wrote {args.output}")
    return 0


# ---- evaluate ------------------------------------------------------------------------
def cmd_evaluate(args: argparse.Namespace) -> int:
    from cover.data.join import attach_truth, index_of
    from cover.io import read_ground_truth
    from cover.io.jsonl import raise_on_rejections
    from cover.io.regions_jsonl import read_regions
    from cover.metrics import evaluate

    loaded = read_regions(args.regions, on_error=args.on_error)
    gt = read_ground_truth(args.gt, on_error=args.on_error)
    joined, problems = attach_truth(loaded.table, gt.table, strict=False)
    # Ground truth of queries that were not certified is expected (another split).
    unmatched_gt = [p for p in problems if p.path == gt.table.source]
    problems = [p for p in problems if p.path != gt.table.source]
    raise_on_rejections(problems, args.on_error, f"{args.regions} joined with {args.gt}")
    idx, _ = index_of(loaded.table.qid, joined.qid)
    regions = loaded.regions.take(idx)
    regions = replace(regions, duration=joined.duration)  # T from the ground truth
    meta = loaded.meta
    calib = None
    if meta.get("k") is not None and meta.get("n_calibration") is not None:
        calib = (int(meta["n_calibration"]), int(meta["k"]))
    ev = evaluate(regions, joined, target=args.target, refusal_policy=args.refusal_policy,
                  calibration=calib)
    out = ev.to_dict()
    out["counts"] |= {
        "rejected_at_certify": loaded.rejected_at_certify,
        "rejected_here": sum(p.action == "rejected" for p in loaded.problems + problems),
        "ground_truth_not_certified": len(unmatched_gt),
    }
    out["score"], out["alpha"] = meta.get("score"), meta.get("alpha")
    m, nr = ev.marginal, ev.non_refused
    print(f"{args.regions}: {m.n} rows evaluated ({meta.get('score')}, alpha={meta.get('alpha')})")
    print(f"coverage {m.coverage:.4f} (miss rate {m.miss_rate:.4f}); mean length "
          f"{m.mean_length_s:.1f} s ({m.mean_length_frac:.1%} of the video); IoU {m.mean_iou:.3f}; "
          f"components {m.mean_components:.2f}")
    print(f"refusal rate {ev.refusal_rate:.3f}; non-refused: coverage {nr.coverage:.4f}, length "
          f"{nr.mean_length_s:.1f} s; base grounder point-IoU {ev.point_iou:.3f}")
    if ev.reference is not None:
        r = ev.reference
        print(f"reference: k/(n+1) = {r['expected']:.4f}, 95% Beta band "
              f"[{r['band_lo']:.4f}, {r['band_hi']:.4f}] (calibration n = {r['n_calibration']})")
    c = out["counts"]
    print(f"rows: {c['rows']} evaluated, {c['rejected_at_certify']} rejected at certify, "
          f"{c['rejected_here']} rejected here; {c['ground_truth_not_certified']} ground-truth "
          "rows had no region (not evaluated)")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2, allow_nan=True) + "\n")
        print(f"wrote {args.json}")
    return 0


# ---- split ---------------------------------------------------------------------------
def cmd_split(args: argparse.Namespace) -> int:
    from cover.data.splits import split_by_unit
    from cover.io import read_ground_truth
    from cover.io.qids import write_qids

    gt = read_ground_truth(args.gt, on_error=args.on_error)
    _report_problems(gt.problems, what=args.gt)
    t = gt.table
    sp = split_by_unit(t.units, cal_frac=args.cal_frac, seed=args.seed)
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_qids(out / "calibration_qids.txt", t.qid[sp.calibration])
    write_qids(out / "test_qids.txt", t.qid[sp.test])
    print(f"split {len(t)} queries by source video (seed {args.seed}): calibration "
          f"{int(sp.calibration.sum())} queries / {sp.n_units_calibration} videos, test "
          f"{int(sp.test.sum())} queries / {sp.n_units_test} videos")
    print(f"wrote {out / 'calibration_qids.txt'} and {out / 'test_qids.txt'}")
    return 0


# ---- validity / demo -----------------------------------------------------------------
def cmd_validity(args: argparse.Namespace) -> int:
    from cover.demo import run_validity

    names = args.name or []
    if names and len(names) != len(args.preds):
        raise InputError("give one --name per --preds")
    run_validity(
        preds=[Path(p) for p in args.preds], gt=Path(args.gt), out=Path(args.out),
        names=names or [Path(p).stem for p in args.preds], families=tuple(args.families),
        alphas=tuple(float(a) for a in args.alphas), n_resamples=args.resamples,
        seed=args.seed, cal_frac=args.cal_frac, min_scale=args.min_scale, target=args.target,
    )
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from cover.demo import run_demo

    run_demo(out=Path(args.out), data_dir=args.data_dir, n_resamples=args.resamples)
    return 0


# ---- parser --------------------------------------------------------------------------
def _common_input(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strict", action="store_true",
                   help="reject rows whose windows reach outside [0, T] instead of clipping")
    p.add_argument("--on-error", choices=("raise", "reject"), default="raise",
                   help="bad rows: stop with an error (default) or set them aside with reasons")
    p.add_argument("--clip", type=float, default=2.0, help="relevance clip length, s (default 2)")


def build_parser() -> argparse.ArgumentParser:
    from cover.scores import FAMILIES, TARGETS
    from cover.studies.protocol import PAPER_ALPHAS

    ap = argparse.ArgumentParser(
        prog="cover",
        description="Conformal coverage guarantees for video temporal grounders.",
    )
    ap.add_argument("--version", action="version", version=f"cover {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("calibrate", help="fit a calibrator on labelled predictions")
    p.add_argument("--preds", required=True, help="prediction jsonl (Moment-DETR format)")
    p.add_argument("--gt", required=True, help="ground-truth jsonl (QVHighlights format)")
    p.add_argument("--score", choices=FAMILIES, default="norm")
    p.add_argument("--alpha", type=_alpha, default="0.1", help="miscoverage level in (0, 1)")
    p.add_argument("--qids", help="calibrate only on these query ids (e.g. from cover split)")
    p.add_argument("--min-scale", type=float, default=1.0, help="NORM scale floor, s")
    p.add_argument("--target", choices=TARGETS, default="envelope")
    p.add_argument("-o", "--output", required=True, help="calibrator JSON to write")
    _common_input(p)
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("certify", help="certified regions for new predictions")
    p.add_argument("--calibrator", required=True)
    p.add_argument("--preds", required=True)
    p.add_argument("--videos", help="any jsonl with vid and duration (when preds lack duration)")
    p.add_argument("--qids", help="certify only these query ids")
    p.add_argument("-o", "--output", required=True, help="regions jsonl to write")
    _common_input(p)
    p.set_defaults(func=cmd_certify)

    p = sub.add_parser("evaluate", help="coverage, length, IoU of certified regions")
    p.add_argument("--regions", required=True, help="output of cover certify")
    p.add_argument("--gt", required=True)
    p.add_argument("--json", help="write the metrics here as JSON")
    p.add_argument("--target", choices=TARGETS, default="envelope")
    p.add_argument("--refusal-policy", choices=("whole-video", "miss", "drop"),
                   default="whole-video", help="how refused rows count in the metrics")
    p.add_argument("--on-error", choices=("raise", "reject"), default="raise")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("split", help="unit-level calibration/test split of a query set")
    p.add_argument("--gt", required=True)
    p.add_argument("--cal-frac", type=float, default=0.4)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out-dir", default=".", help="where to write the two qid lists")
    p.add_argument("--on-error", choices=("raise", "reject"), default="raise")
    p.set_defaults(func=cmd_split)

    p = sub.add_parser("validity", help="study 1: coverage validity over the alpha grid")
    p.add_argument("--preds", required=True, action="append", help="repeat for more grounders")
    p.add_argument("--name", action="append", help="display name per --preds")
    p.add_argument("--gt", required=True)
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--families", nargs="+", choices=FAMILIES, default=list(FAMILIES))
    p.add_argument("--alphas", nargs="+", type=float, default=list(PAPER_ALPHAS))
    p.add_argument("--resamples", type=int, default=50)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--cal-frac", type=float, default=0.4)
    p.add_argument("--min-scale", type=float, default=1.0)
    p.add_argument("--target", choices=TARGETS, default="envelope")
    p.set_defaults(func=cmd_validity)

    p = sub.add_parser("demo", help="the main job on real QVHighlights predictions")
    p.add_argument("--out", default="cover-demo", help="output folder (default cover-demo)")
    p.add_argument("--data-dir", help="folder holding qvhighlights/... (default: ../shared/data)")
    p.add_argument("--resamples", type=int, default=50)
    p.set_defaults(func=cmd_demo)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def show(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
        _say(f"cover: warning: {message}")

    warnings.showwarning = show
    warnings.simplefilter("always", CoverWarning)
    try:
        return int(args.func(args))
    except CoverError as exc:
        _say(f"cover: error: {exc}")
        return EXIT_USAGE
    except ValueError as exc:
        _say(f"cover: error: {exc}")
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
