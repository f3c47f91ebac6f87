"""argparse value types of the command modules: numbers checked as they are parsed
(finite, in range, whole), alpha kept as the user's decimal text; a bad value is a usage
error naming the flag, before any file is read."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import TypeVar

from cover.calibrate.quantile import as_fraction

N = TypeVar("N", int, float)


def checked_text(check: Callable[[str], object]) -> Callable[[str], str]:
    """argparse type: the number as the user wrote it (exact arithmetic later), once
    ``check`` reads it; the ValueError it raises is the usage error."""
    def parse(text: str) -> str:
        try:
            check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return text

    return parse


#: argparse type: alpha as the user's decimal text.
alpha_text = checked_text(as_fraction)


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0."""
    return _finite(text, zero_ok=False)


def nonnegative_float(text: str) -> float:
    """argparse type: a finite number >= 0."""
    return _finite(text, zero_ok=True)


def _read(text: str, kind: Callable[[str], N], what: str) -> N:
    """``kind(text)``; a text it cannot read is the usage error "expected <what>"."""
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text}") from None


def _finite(text: str, *, zero_ok: bool) -> float:
    x = _read(text, float, "a number")
    if not (math.isfinite(x) and (x > 0 or (zero_ok and x == 0))):
        raise argparse.ArgumentTypeError(
            f"must be a finite number {'>=' if zero_ok else '>'} 0, got {text}")
    return x


def fraction_in(*, one: bool, zero: bool = False) -> Callable[[str], float]:
    """argparse type: a number in (0, 1), with 1 when ``one`` and 0 when ``zero`` is
    allowed."""
    span = f"{'[' if zero else '('}0, 1{']' if one else ')'}"

    def parse(text: str) -> float:
        x = _read(text, float, "a number")
        if not (0 < x < 1 or (one and x == 1) or (zero and x == 0)):
            raise argparse.ArgumentTypeError(f"must be a number in {span}, got {text}")
        return x

    return parse


def positive_int(text: str) -> int:
    """argparse type: a whole number >= 1."""
    return _int_at_least(text, 1)


def spread_count(what: str) -> Callable[[str], int]:
    """argparse type: a whole number >= 2 of ``what`` (a mean +/- sd over one has no sd)."""
    def parse(text: str) -> int:
        n = _read(text, int, "a whole number")
        if n < 2:
            raise argparse.ArgumentTypeError(f"must be a whole number >= 2 (the spread over "
                                             f"{what} needs two), got {text}")
        return n
    return parse


resample_count = spread_count("resamples")
split_seed_count = spread_count("split seeds")


class Distinct(argparse.Action):
    """For a flag of several values: each value at most once (a repeated alpha would be
    a repeated row of every table)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        got = list(values) if isinstance(values, list) else [values]
        twice = next((v for i, v in enumerate(got) if v in got[:i]), None)
        if twice is not None:
            raise argparse.ArgumentError(self, f"{twice} given twice")
        setattr(namespace, self.dest, got)


def port_number(text: str) -> int:
    """argparse type: a TCP port, 0 (any free one) to 65535."""
    n = _int_at_least(text, 0)
    if n > 65535:
        raise argparse.ArgumentTypeError(f"must be a port number <= 65535, got {text}")
    return n


def nonnegative_int(text: str) -> int:
    """argparse type: a whole number >= 0."""
    return _int_at_least(text, 0)


def _int_at_least(text: str, low: int) -> int:
    n = _read(text, int, "a whole number")
    if n < low:
        raise argparse.ArgumentTypeError(f"must be a whole number >= {low}, got {text}")
    return n


__all__ = ["Distinct", "alpha_text", "checked_text", "fraction_in", "nonnegative_float",
           "nonnegative_int", "port_number", "positive_float", "positive_int", "resample_count",
           "split_seed_count", "spread_count"]
