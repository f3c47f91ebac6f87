"""``cover split``: a unit-level calibration/test split of a query set."""

from __future__ import annotations

import argparse
from pathlib import Path

from cover.cli._common import OutputFolder, Subparsers, add_command, add_flags
from cover.cli.formats import add_format_flags
from cover.errors import InputError, counted, report_problems, say


def add_parser(sub: Subparsers) -> None:
    p = add_command(
        sub, "split", help="unit-level calibration/test split of a query set",
        description="Split the queries of a ground-truth file into calibration and test "
        "sets by source video (never the same video on both sides); writes "
        "calibration_qids.txt and test_qids.txt.",
        example="cover split --gt gt.jsonl --cal-frac 0.4 --seed 42 --out-dir splits")
    add_flags(p, "gt", "cal_frac", "seed", seed="random seed")
    p.add_argument("--out-dir", default=".", type=OutputFolder,
                   help="where to write the two qid lists")
    add_flags(p, "on_error")
    add_format_flags(p, gt=True, preds=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.data.splits import split_by_unit
    from cover.io import formats
    from cover.io.output import check_outputs, make_folder
    from cover.io.qids import write_qids

    out = Path(args.out_dir)
    targets = [out / "calibration_qids.txt", out / "test_qids.txt"]
    inputs = [args.gt, args.gt_durations]
    if out.is_dir():
        check_outputs([("--out-dir", t) for t in targets],
                      [(flag, p) for flag, p in (("--gt", args.gt),
                                                 ("--gt-durations", args.gt_durations)) if p])
    got = formats.read(args.gt, "ground_truth", format=args.gt_format, options=formats.Options(
        on_error=args.on_error, durations=args.gt_durations, columns=args.gt_columns))
    say(f"{args.gt}: {got.format} ({len(got.loaded.table)} rows)")
    gt = got.loaded
    report_problems(gt.problems, what=args.gt)
    t = gt.table
    sp = split_by_unit(t.units, cal_frac=args.cal_frac, seed=args.seed)
    if not (sp.n_units_calibration and sp.n_units_test):  # one video: all on one side
        videos = sp.n_units_calibration + sp.n_units_test
        raise InputError(f"{args.gt}: cannot split {counted(len(t), 'query', 'queries')} "
                         f"from {counted(videos, 'source video')} into calibration and "
                         "test: a split by source video needs at least 2 videos (never the "
                         "same video on both sides)")
    make_folder(out)
    write_qids(targets[0], t.qid[sp.calibration], inputs=inputs)
    write_qids(targets[1], t.qid[sp.test], inputs=inputs)
    print(f"split {counted(len(t), 'query', 'queries')} by source video (seed {args.seed}): "
          f"calibration {counted(int(sp.calibration.sum()), 'query', 'queries')} / "
          f"{counted(sp.n_units_calibration, 'video')}, test "
          f"{counted(int(sp.test.sum()), 'query', 'queries')} / "
          f"{counted(sp.n_units_test, 'video')}")
    print(f"wrote {out / 'calibration_qids.txt'} and {out / 'test_qids.txt'}")
    return 0
