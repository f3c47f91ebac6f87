"""Helpers shared by the command modules: messages, argument types, common flags."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterable
from pathlib import Path

from cover.errors import RowProblem, report_lines

#: What ``add_subparsers()`` returns; each command module's ``add_parser`` takes it.
Subparsers = argparse._SubParsersAction


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter,
                    argparse.RawDescriptionHelpFormatter):
    """``--help`` shows every default and keeps the example's line breaks; an option
    without a default (None) or whose help already names it is left as written."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default is None or action.default is False or "default" in text:
            return action.help
        return super()._get_help_string(action)


def add_command(sub: Subparsers, name: str, *, help: str, description: str,
                example: str) -> argparse.ArgumentParser:
    """A sub-command parser whose ``--help`` shows defaults and one example."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help, description=description, epilog=f"example:\n  {example}",
        formatter_class=HelpFormatter)
    return p


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


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text}") from None
    if not (math.isfinite(x) and x > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return x


def nonnegative_float(text: str) -> float:
    """argparse type: a finite number >= 0."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text}") from None
    if not (math.isfinite(x) and x >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text}")
    return x


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    return _int_at_least(text, 1)


def nonnegative_int(text: str) -> int:
    """argparse type: a whole number >= 0."""
    return _int_at_least(text, 0)


def _int_at_least(text: str, low: int) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text}") from None
    if n < low:
        raise argparse.ArgumentTypeError(f"must be a whole number >= {low}, got {text}")
    return n


def check_outputs(outputs: Iterable[str | Path | None],
                  inputs: Iterable[str | Path | None]) -> None:
    """Refuse, before any work, an output that cannot be written or is one of the inputs
    (:func:`cover.io.output.check_target`; the writer checks again when it writes)."""
    from cover.io.output import check_target

    ins = list(inputs)
    for out in outputs:
        if out is not None:
            check_target(out, ins)


def _common_input(p: argparse.ArgumentParser) -> None:
    p.add_argument("--strict", action="store_true",
                   help="reject rows whose windows reach outside [0, T] instead of clipping")
    p.add_argument("--on-error", choices=("raise", "reject"), default="raise",
                   help="bad rows: stop with an error, or set them aside with reasons and go on")
    p.add_argument("--clip", type=positive_float, default=2.0,
                   help="relevance clip length in seconds (> 0)")
