"""``cover report``: one self-contained HTML file from a ``cover study`` results folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from cover.cli._common import Subparsers


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser("report", help="one self-contained HTML report of a study results folder")
    p.add_argument("results", type=Path, help="folder written by `cover study`")
    p.add_argument("-o", "--output", type=Path, required=True, help="HTML file to write")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.report.build import build_report

    out = build_report(args.results, args.output)
    print(f"wrote {out}")
    return 0
