"""``cover validity``: study 1 (coverage validity) for one or more grounders."""

from __future__ import annotations

import argparse
from pathlib import Path

from cover.cli._common import Subparsers
from cover.cli.formats import add_format_flags, format_kwargs
from cover.errors import InputError


def add_parser(sub: Subparsers) -> None:
    from cover.scores import FAMILIES, TARGETS
    from cover.studies.protocol import PAPER_ALPHAS

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
    p.add_argument("--on-error", choices=("raise", "reject"), default="raise",
                   help="bad rows (or truth without a prediction): stop, or set them aside")
    add_format_flags(p, gt=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.jobs.validity import run_validity

    names = args.name or []
    if names and len(names) != len(args.preds):
        raise InputError("give one --name per --preds")
    run_validity(
        preds=[Path(p) for p in args.preds], gt=Path(args.gt), out=Path(args.out),
        names=names or [Path(p).stem for p in args.preds], families=tuple(args.families),
        alphas=tuple(float(a) for a in args.alphas), n_resamples=args.resamples,
        seed=args.seed, cal_frac=args.cal_frac, min_scale=args.min_scale, target=args.target,
        read_options={"on_error": args.on_error, **format_kwargs(args)},
    )
    return 0
