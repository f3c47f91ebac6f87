"""Errors, warnings and the row-level problem log.

Every problem with an input row is recorded as a :class:`RowProblem` that names
the file, the 1-based line, the query id and what is wrong, so that a user can
open the file at that line and fix it. Nothing is dropped silently: a row is
either kept (possibly clipped, with a counted warning) or rejected with a reason.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

Action = Literal["rejected", "clipped", "floored", "noted"]


class CoverError(Exception):
    """Base class of every error COVER raises on purpose."""


class InputError(CoverError, ValueError):
    """Bad input data: the message names file, line and query id."""


class OutputError(CoverError, OSError):
    """An output that cannot be written safely (missing folder, a folder, or an input)."""


class CalibratorFileError(CoverError, ValueError):
    """A saved calibrator that is corrupt, tampered with, or of another schema version."""


class CoverWarning(UserWarning):
    """A counted, non-fatal condition (clipping, an infinite threshold, a fallback)."""


@dataclass(frozen=True)
class RowProblem:
    """One problem with one input row."""

    path: str
    line: int
    qid: str | None
    problem: str
    action: Action

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line > 0 else self.path
        who = f" (qid={self.qid})" if self.qid is not None else ""
        return f"{where}{who}: {self.problem}"

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "qid": self.qid,
            "problem": self.problem,
            "action": self.action,
        }


@dataclass
class ProblemLog:
    """Problems found while reading and validating, grouped by action."""

    problems: list[RowProblem] = field(default_factory=list)

    def add(self, problem: RowProblem) -> None:
        self.problems.append(problem)

    def extend(self, problems: list[RowProblem]) -> None:
        self.problems.extend(problems)

    def of(self, action: Action) -> list[RowProblem]:
        return [p for p in self.problems if p.action == action]

    def counts(self) -> dict[str, int]:
        """Counts per action, e.g. ``{"rejected": 2, "clipped": 5}``."""
        return dict(Counter(p.action for p in self.problems))

    def __len__(self) -> int:
        return len(self.problems)


def report_lines(problems: list[RowProblem], *, what: str, limit: int = 3) -> list[str]:
    """Human lines about clipped and rejected rows: a count per kind, then examples."""
    out: list[str] = []
    for action in ("clipped", "rejected"):
        these = [p for p in problems if p.action == action]
        if these:
            kinds = Counter(p.problem for p in these)
            out.append(f"cover: {len(these)} row(s) {action} in {what}: " +
                       "; ".join(f"{k} ({v})" for k, v in kinds.most_common(4)))
            out.append(summarize(these, limit=limit))
    return out


def say(msg: str) -> None:
    """A line for people on standard error (standard output may carry data), flushed at
    once so that a long job's progress shows as it goes."""
    print(msg, file=sys.stderr, flush=True)


def report_problems(problems: list[RowProblem], *, what: str, limit: int = 3) -> None:
    """Say the clipped and rejected rows of ``what`` (a file name): :func:`report_lines`."""
    for line in report_lines(problems, what=what, limit=limit):
        say(line)


def summarize(problems: list[RowProblem], *, limit: int = 5) -> str:
    """A readable multi-line summary: the first ``limit`` problems and how many more."""
    lines = [f"  {p}" for p in problems[:limit]]
    if len(problems) > limit:
        lines.append(f"  ... and {len(problems) - limit} more")
    return "\n".join(lines)


def no_rows_left(preds: object, gt: object, problems: list[RowProblem]) -> str:
    """The message when validation leaves no calibration row: which files, and why."""
    rejected = [p for p in problems if p.action == "rejected"]
    kinds = Counter(p.problem for p in rejected).most_common(3)
    why = ("; ".join(f"{k} ({v})" for k, v in kinds) if kinds
           else "the files share no query id")
    return (f"no calibration rows left after validation of {preds} joined with {gt}: "
            f"{len(rejected)} row(s) rejected ({why})")
