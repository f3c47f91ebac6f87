"""``cover demo``: the main job on real QVHighlights predictions."""

from __future__ import annotations

import argparse
from pathlib import Path

from cover.cli._common import InputPath, Subparsers, add_command, add_flags


def add_parser(sub: Subparsers) -> None:
    p = add_command(
        sub, "demo", help="the main job on real QVHighlights predictions",
        description="Real QD-DETR predictions on QVHighlights val in; calibrators, "
        "certified regions, the coverage-validity table, JSON, Markdown, figures and an "
        "HTML report out.",
        example="cover demo --out cover-demo --data-dir ../shared/data")
    add_flags(p, "out", out={"required": False, "default": "cover-demo"})
    p.add_argument("--data-dir", type=InputPath,
                   help="folder holding qvhighlights/... (default: $COVER_DATA_DIR, then "
                   "../shared/data)")
    add_flags(p, "resamples")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.jobs.demo import run_demo

    run_demo(out=Path(args.out), data_dir=args.data_dir, n_resamples=args.resamples)
    return 0
