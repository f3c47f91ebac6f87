"""Helpers shared by the command modules: messages, argument types, common flags."""

from __future__ import annotations

import argparse
import sys

from cover.errors import RowProblem, report_lines

#: What ``add_subparsers()`` returns; each command module's ``add_parser`` takes it.
Subparsers = argparse._SubParsersAction


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


def _common_input(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strict", action="store_true",
                   help="reject rows whose windows reach outside [0, T] instead of clipping")
    p.add_argument("--on-error", choices=("raise", "reject"), default="raise",
                   help="bad rows: stop with an error (default) or set them aside with reasons")
    p.add_argument("--clip", type=float, default=2.0, help="relevance clip length, s (default 2)")
