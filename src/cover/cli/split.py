"""``cover split``: a unit-level calibration/test split of a query set."""

from __future__ import annotations

import argparse
from pathlib import Path

from cover.cli._common import Subparsers, _report_problems, _say
from cover.cli.formats import add_format_flags


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser("split", help="unit-level calibration/test split of a query set")
    p.add_argument("--gt", required=True)
    p.add_argument("--cal-frac", type=float, default=0.4)
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--out-dir", default=".", help="where to write the two qid lists")
    p.add_argument("--on-error", choices=("raise", "reject"), default="raise")
    add_format_flags(p, gt=True, preds=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.data.splits import split_by_unit
    from cover.io import formats
    from cover.io.qids import write_qids

    got = formats.read(args.gt, "ground_truth", format=args.gt_format, options=formats.Options(
        on_error=args.on_error, durations=args.gt_durations, columns=args.gt_columns))
    _say(f"{args.gt}: {got.format} ({len(got.loaded.table)} rows)")
    gt = got.loaded
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
