"""``cover report``: one self-contained HTML file from a ``cover study`` results folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from cover.cli._common import InputPath, Subparsers, add_command, add_flags, printed


def add_parser(sub: Subparsers) -> None:
    p = add_command(sub, "report", help="one self-contained HTML report of a study results folder",
                    description="Build one self-contained HTML report (figures inlined) from "
                    "the results folder `cover study` wrote.",
                    example="cover report study-results -o report.html")
    p.add_argument("results", type=InputPath, help="folder written by `cover study`")
    add_flags(p, "output", output="HTML file to write")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.report.build import build_report

    return printed([f"wrote {build_report(Path(args.results), Path(args.output))}"])
