"""``cover evaluate``: coverage, length and IoU of certified regions against truth."""

from __future__ import annotations

import argparse
import warnings
from dataclasses import replace

from cover.cli._common import Subparsers, _report_problems, _say, add_command, check_outputs
from cover.cli.formats import add_format_flags
from cover.errors import CoverWarning, RowProblem


def add_parser(sub: Subparsers) -> None:
    from cover.scores import TARGETS

    p = add_command(
        sub, "evaluate", help="coverage, length, IoU of certified regions",
        description="Score the output of cover certify against ground truth: coverage, "
        "region length, IoU, components and refusals, with the reference band the "
        "coverage should fall in.",
        example="cover evaluate --regions regions.jsonl --gt gt.jsonl --json metrics.json")
    p.add_argument("--regions", required=True, help="output of cover certify")
    p.add_argument("--gt", required=True,
                   help="ground truth (any format of `cover formats`)")
    p.add_argument("--json", help="write the metrics here as (strict) JSON")
    p.add_argument("--target", choices=TARGETS, default="envelope",
                   help="cover the envelope of multi-window truth, or every window")
    p.add_argument("--refusal-policy", choices=("whole-video", "miss", "drop"),
                   default="whole-video", help="how refused rows count in the metrics")
    p.add_argument("--on-error", choices=("raise", "reject"), default="raise",
                   help="bad rows: stop with an error, or set them aside with reasons and go on")
    add_format_flags(p, gt=True, preds=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.data.join import attach_truth, index_of
    from cover.grounding_metrics import grounding_metrics
    from cover.io import formats
    from cover.io.content_join import align_truth, known_vids
    from cover.io.jsonl import raise_on_rejections
    from cover.io.output import strict_json, write_json
    from cover.io.regions_jsonl import calibration_overlap, read_regions
    from cover.metrics import evaluate
    from cover.report.tables import field_metrics_text

    inputs = [args.regions, args.gt, args.gt_durations]
    check_outputs([args.json], inputs)
    loaded = read_regions(args.regions, on_error=args.on_error)
    got = formats.read(args.gt, "ground_truth", format=args.gt_format, options=formats.Options(
        on_error=args.on_error, durations=args.gt_durations, columns=args.gt_columns))
    _say(f"{args.gt}: {got.format} ({len(got.loaded.table)} rows)")
    gt = got.loaded
    # Regions keep the prediction file's ids: video ids as the grounder wrote them
    # (TimeChat: "X.mp4") and, for formats that number queries by position, qids that
    # the truth does not share; both are matched as cover calibrate matches them.
    rtab = replace(loaded.table, vid=known_vids(loaded.table.vid, gt.table.vid))
    gtab, agree, matched = align_truth(rtab, gt.table)
    if gtab is not gt.table:
        _say(f"joined on (vid, query text): {matched} of {len(rtab)} regions matched "
             f"({agree} by qid)")
    joined, problems = attach_truth(rtab, gtab, strict=False)
    # Ground truth of queries that were not certified is expected (another split).
    def uncertified(p: RowProblem) -> bool:
        return p.path == gt.table.source and p.action == "rejected"

    unmatched_gt = [p for p in problems if uncertified(p)]
    problems = [p for p in problems if not uncertified(p)]
    raise_on_rejections(problems, args.on_error, f"{args.regions} joined with {args.gt}")
    _report_problems(loaded.problems + gt.problems + problems, what=args.regions)
    idx, _ = index_of(loaded.table.qid, joined.qid)
    marked, same = calibration_overlap(loaded, idx)
    if marked:
        warnings.warn(CoverWarning(
            f"{marked} of the {len(idx)} rows evaluated were calibration rows (cover."
            "in_calibration): coverage on them does not test the guarantee; evaluate "
            "held-out rows (certify with --qids, e.g. cover split's test_qids.txt)"),
            stacklevel=1)
    elif same:
        warnings.warn(CoverWarning(
            f"the {len(idx)} rows evaluated are exactly the rows the calibrator was fitted on "
            "(same qid digest): coverage on them does not test the guarantee; evaluate "
            "held-out rows"), stacklevel=1)
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
        "in_calibration": marked if marked else (len(idx) if same else 0),
    }
    out["score"], out["alpha"] = meta.get("score"), meta.get("alpha")
    # The field's metrics of the grounder behind the regions, from the predicted windows
    # the certified rows carry (rows without any are refusals; none at all: not known).
    has_windows = joined.pred_windows is not None and joined.pred_windows.values.size > 0
    field = grounding_metrics(joined) if has_windows else None
    out["field_metrics"] = None if field is None else field.to_dict()
    m, nr = ev.marginal, ev.non_refused
    print(f"{args.regions}: {m.n} rows evaluated ({meta.get('score')}, alpha={meta.get('alpha')})")
    print(f"coverage {m.coverage:.4f} (miss rate {m.miss_rate:.4f}); mean length "
          f"{m.mean_length_s:.1f} s ({m.mean_length_frac:.1%} of the video); IoU {m.mean_iou:.3f}; "
          f"components {m.mean_components:.2f}")
    print(f"refusal rate {ev.refusal_rate:.3f}; non-refused: coverage {nr.coverage:.4f}, length "
          f"{nr.mean_length_s:.1f} s; base grounder point-IoU {ev.point_iou:.3f}")
    if field is not None:
        print(f"base grounder, the field's metrics (Moment-DETR eval, percent): "
              f"{field_metrics_text(field.to_dict())}")
    if ev.reference is not None:
        r = ev.reference
        inside = r["band_lo"] <= m.coverage <= r["band_hi"]
        print(f"reference: k/(n+1) = {r['expected']:.4f}, 95% band [{r['band_lo']:.4f}, "
              f"{r['band_hi']:.4f}] (calibration n = {r['n_calibration']}: Beta sd "
              f"{r['beta_sd']:.4f}; this test sample's own sd {r['test_sd']:.4f}); coverage "
              f"is {'inside' if inside else 'OUTSIDE'} the band")
    c = out["counts"]
    print(f"rows: {c['rows']} evaluated, {c['rejected_at_certify']} rejected at certify, "
          f"{c['rejected_here']} rejected here; {c['ground_truth_not_certified']} ground-truth "
          "rows had no region (not evaluated)")
    if args.json:
        write_json(args.json, strict_json(out), inputs=inputs)
        print(f"wrote {args.json}")
    return 0
