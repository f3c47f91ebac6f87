"""``cover online``: replay a labelled file as a stream through online ACI (and the fixed
split-conformal threshold), writing the per-step record and a rolling miss-rate figure."""

from __future__ import annotations

import argparse
from pathlib import Path

from cover.cli._common import (
    InputPath,
    OutputFolder,
    Subparsers,
    add_command,
    add_flags,
    job_of,
)
from cover.cli.arg_types import checked_text, fraction_in, positive_int
from cover.cli.formats import add_format_flags, add_selection_flags, read_kwargs


def add_parser(sub: Subparsers) -> None:
    from cover.calibrate.online import DEFAULT_GAMMA, as_gamma
    from cover.jobs.online import DEFAULT_WINDOW, ORDERS
    from cover.scores import FAMILIES

    p = add_command(sub, "online", help="replay a labelled file as a stream through online ACI",
                    description="Calibrate on a share of the source videos, then replay the "
                    "other rows one at a time through adaptive conformal inference (ACI), "
                    "writing the running miss rate, threshold and a figure.",
                    example="cover online --preds preds.jsonl --gt gt.jsonl --out-dir online "
                    "--order random")
    add_flags(p, "preds", "gt")
    add_format_flags(p, gt=True)
    add_selection_flags(p)
    p.add_argument("--out-dir", required=True, type=OutputFolder, help="output folder")
    add_flags(p, "score", "alpha", score={"choices": FAMILIES},
              alpha="target miss rate in (0, 1)")
    p.add_argument("--gamma", type=checked_text(as_gamma), default=DEFAULT_GAMMA,
                   help=f"ACI step size in (0, 1) (default {DEFAULT_GAMMA})")
    p.add_argument("--order", choices=ORDERS, default="file",
                   help="stream order of the non-calibration rows")
    add_flags(p, "seed", "cal_frac", seed="split and random-order seed")
    p.add_argument("--cal-qids", type=InputPath,
                   help="calibrate on these query ids instead of a split")
    p.add_argument("--switch-preds", type=InputPath,
                   help="another grounder's predictions: used for the stream from --switch-at on")
    p.add_argument("--name", help="display name of --preds (default: its file name)")
    p.add_argument("--switch-name", help="display name of --switch-preds")
    p.add_argument("--switch-at", type=fraction_in(one=True, zero=True), default=0.5,
                   help="fraction of the stream after which --switch-preds is used")
    p.add_argument("--window", type=positive_int, default=DEFAULT_WINDOW,
                   help=f"rolling miss-rate window, steps (default {DEFAULT_WINDOW})")
    add_flags(p, "min_scale", "target", "strict", "on_error", "clip")
    p.add_argument("--no-figure", action="store_true", help="skip the PNG figure")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.jobs.online import run_online

    res = job_of(run_online, args, preds=Path(args.preds), gt=Path(args.gt),
                 out=Path(args.out_dir), paths=("cal_qids", "switch_preds"),
                 figure=not args.no_figure, names=(args.name, args.switch_name),
                 read_options=read_kwargs(args))
    print("\n".join(res.lines(args.order)))
    print(f"wrote {args.out_dir}/online_steps.jsonl, online_summary.json"
          + ("" if args.no_figure else ", online_miss_rate.png"))
    return 0
