"""``cover demo``: the main job on real QVHighlights predictions."""

from __future__ import annotations

import argparse
from pathlib import Path

from cover.cli._common import Subparsers


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser("demo", help="the main job on real QVHighlights predictions")
    p.add_argument("--out", default="cover-demo", help="output folder (default cover-demo)")
    p.add_argument("--data-dir", help="folder holding qvhighlights/... (default: ../shared/data)")
    p.add_argument("--resamples", type=int, default=50)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.jobs.demo import run_demo

    run_demo(out=Path(args.out), data_dir=args.data_dir, n_resamples=args.resamples)
    return 0
