"""Errors, warnings and row problems (each one, or a bounded tally of them).

Every problem with an input row is recorded as a :class:`RowProblem` that names
the file, the 1-based line, the query id and what is wrong, so that a user can
open the file at that line and fix it. Nothing is dropped silently: a row is
either kept (possibly clipped, with a counted warning) or rejected with a reason.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import attrgetter
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

    @property
    def key(self) -> tuple[int, str | None]:
        """``(line, qid)``: the row this problem is about, where the rows of a document
        may share a line (what a reader's set-aside records are keyed by)."""
        return self.line, self.qid

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


_ACTION_FILE_KIND = attrgetter("action", "path", "problem")

#: Problems of each action a bounded :class:`ProblemTally` keeps as examples: as many as
#: any message shows (:func:`summarize`'s default, ``StreamCounts.examples``).
KEEP = 5
#: Distinct problem texts a :class:`ProblemTally` counts apart, per action. A text may
#: name a row (a repeated qid and its first line), so past this many the others are
#: counted together under :data:`OTHER_KINDS`: memory stays bounded whatever the file.
MAX_KINDS = 1000
OTHER_KINDS = "other problems (more kinds than are counted apart)"
OTHER_FILES = "other files (more than are counted apart)"


@dataclass
class ProblemTally:
    """Problems counted, not kept: per action its count, a count per kind (problem
    text, in the order first found) and per file (``files``: the rows' own paths), and
    the first ``keep`` problems of each action in the order found (``kept``; every
    problem when ``keep`` is None): what a streamed command holds instead of a list. Its
    memory is bounded: at most :data:`MAX_KINDS` problem texts (and paths) are counted
    apart per action (a text naming a vid, a line or the numbers involved, such as a
    repeated qid's, is one text per video or row), the rest together."""

    keep: int | None = KEEP
    kept: list[RowProblem] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    kinds: dict[str, Counter[str]] = field(default_factory=dict)
    files: dict[str, Counter[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, problems: Iterable[RowProblem], keep: int | None = KEEP) -> ProblemTally:
        out = cls(keep)
        out.add(problems)
        return out

    def add(self, problems: Iterable[RowProblem]) -> None:
        """Count ``problems`` after those already added; keep the first of each action."""
        problems = problems if isinstance(problems, list) else list(problems)
        if not problems:
            return
        # One pass in C over (action, file, kind): per action, kinds in first-found order.
        here: set[str] = set()
        for (action, path, kind), n in Counter(map(_ACTION_FILE_KIND, problems)).items():
            self.counts[action] = self.counts.get(action, 0) + n
            _count_kind(self.kinds.setdefault(action, Counter()), kind, n)
            _count_kind(self.files.setdefault(action, Counter()), path, n, OTHER_FILES)
            here.add(action)
        if self.keep is None:
            self.kept += problems
            return
        stored = self._stored()
        need = {a: self.keep - stored.get(a, 0) for a in here
                if stored.get(a, 0) < self.keep}
        if not need:  # the usual case once every action has its examples: no pass
            return
        for p in problems:  # stops once every action still short has its examples
            if need.get(p.action, 0) > 0:
                self.kept.append(p)
                need[p.action] -= 1
                if not any(need.values()):
                    break

    def _stored(self) -> dict[str, int]:
        return dict(Counter(p.action for p in self.kept))

    def __add__(self, other: ProblemTally) -> ProblemTally:
        """``self``'s problems then ``other``'s, as if added in that order (``keep``:
        ``self``'s; ``other`` must keep at least as many, or its others are gone). Counts
        per action are exact; past :data:`MAX_KINDS` texts in either tally, a text that
        one of them counted with :data:`OTHER_KINDS` stays counted there."""
        if other.keep is not None and (self.keep is None or other.keep < self.keep):
            raise ValueError(f"a tally keeping {other.keep} example(s) cannot be added to "
                             f"one keeping {self.keep}")
        out = ProblemTally(self.keep, list(self.kept), dict(self.counts),
                           {a: Counter(c) for a, c in self.kinds.items()},
                           {a: Counter(c) for a, c in self.files.items()})
        for action, n in other.counts.items():
            out.counts[action] = out.counts.get(action, 0) + n
            for mine, theirs, label in ((out.kinds, other.kinds, OTHER_KINDS),
                                        (out.files, other.files, OTHER_FILES)):
                counter = mine.setdefault(action, Counter())
                for kind, k in theirs[action].items():
                    _count_kind(counter, kind, k, label)
        if out.keep is None:
            out.kept += other.kept
            return out
        have = out._stored()
        for p in other.kept:
            if have.get(p.action, 0) < out.keep:
                out.kept.append(p)
                have[p.action] = have.get(p.action, 0) + 1
        return out

    def count(self, action: Action) -> int:
        """How many problems of ``action`` were added."""
        return self.counts.get(action, 0)

    def examples(self, action: Action, limit: int | None = None) -> list[RowProblem]:
        """The first ``limit`` (default: all kept) problems of ``action``, in the order
        found; asking for more than are kept is an error (they are gone)."""
        if limit is not None and self.keep is not None and limit > self.keep:
            raise ValueError(f"{limit} examples asked of a tally that keeps {self.keep}")
        these = [p for p in self.kept if p.action == action]
        return these if limit is None else these[:limit]

    def __len__(self) -> int:
        return sum(self.counts.values())


def as_tally(problems: list[RowProblem] | ProblemTally, keep: int) -> ProblemTally:
    """``problems`` as a tally keeping at least ``keep`` examples of each action (a list is
    tallied; a tally keeping fewer is an error: its other problems are gone)."""
    if isinstance(problems, ProblemTally):
        if problems.keep is not None and problems.keep < keep:
            raise ValueError(f"{keep} examples asked of a tally that keeps {problems.keep}")
        return problems
    return ProblemTally.of(problems, keep)


def _count_kind(kinds: Counter[str], kind: str, n: int, other: str = OTHER_KINDS) -> None:
    """``kinds[kind] += n``, or ``kinds[other] += n`` for a new text once
    :data:`MAX_KINDS` texts are counted."""
    kinds[kind if kind in kinds or len(kinds) < MAX_KINDS else other] += n


def report_lines(problems: list[RowProblem] | ProblemTally, *, what: str, limit: int = 3
                 ) -> list[str]:
    """Human lines about clipped and rejected rows: per action, its count, where they are
    (:func:`_where`) and its four most common kinds (ties in the order first found),
    then its first ``limit`` rows. A list is tallied first (:class:`ProblemTally`): one
    rule for both."""
    tally = as_tally(problems, limit)
    out: list[str] = []
    for action in ("clipped", "rejected"):
        n = tally.count(action)
        if n:
            out.append(f"cover: {n} row(s) {action} in {_where(tally.files[action], what)}: " +
                       "; ".join(f"{k} ({v})" for k, v in tally.kinds[action].most_common(4)))
            out.append(summarize(tally.examples(action, limit), limit=limit, total=n))
    return out


def _where(files: Counter[str], what: str) -> str:
    """The file the rows are in, else ``what`` (the run's inputs) with the count in each
    file: the ground truth's clipped rows are said to be in the ground truth, not in
    the predictions the run is named by."""
    if len(files) == 1:
        return next(iter(files))
    return f"{what} (" + ", ".join(f"{n} in {f}" for f, n in files.items()) + ")"


def check_on_error(on_error: object) -> None:
    """A ValueError unless ``on_error`` is "raise" or "reject" (any other word would
    read as "reject" where a reader tests for "raise")."""
    if on_error not in ("raise", "reject"):
        raise ValueError(f"on_error must be 'raise' or 'reject', got {on_error!r}")


def counted(n: int, one: str, many: str | None = None) -> str:
    """``n`` and its noun for a message: ``one`` for 1, else ``many`` (default ``one``
    and an s), so a count of one never reads "1 videos"."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def say(msg: str) -> None:
    """A line for people on standard error (standard output may carry data), flushed at
    once so that a long job's progress shows as it goes."""
    print(msg, file=sys.stderr, flush=True)


def report_problems(problems: list[RowProblem] | ProblemTally, *, what: str, limit: int = 3
                    ) -> None:
    """Say the clipped and rejected rows of ``what`` (a file name): :func:`report_lines`."""
    for line in report_lines(problems, what=what, limit=limit):
        say(line)


def summarize(problems: list[RowProblem], *, limit: int = 5, total: int | None = None) -> str:
    """A readable multi-line summary: the first ``limit`` problems and how many more of
    ``total`` (by default ``len(problems)``: ``problems`` may be only the first few)."""
    total = len(problems) if total is None else total
    lines = [f"  {p}" for p in problems[:limit]]
    if total > limit:
        lines.append(f"  ... and {total - limit} more")
    return "\n".join(lines)


def rejection_kinds(problems: list[RowProblem] | ProblemTally) -> str:
    """The three most common kinds of rejection among ``problems``, with their counts
    (``"reason (n); ..."``), or "" when none was rejected."""
    kinds = as_tally(problems, 0).kinds.get("rejected", Counter()).most_common(3)
    return "; ".join(f"{k} ({v})" for k, v in kinds)


def no_rows_left(preds: object, gt: object, problems: list[RowProblem] | ProblemTally
                 ) -> str:
    """The message when validation leaves no calibration row: which files, and why (the
    three most common kinds of rejection)."""
    why = rejection_kinds(problems) or "the files share no query id"
    return (f"no calibration rows left after validation of {preds} joined with {gt}: "
            f"{as_tally(problems, 0).count('rejected')} row(s) rejected ({why})")
