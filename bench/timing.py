"""Interleaved timing: the contenders of one cell run in turn, round after round.

Machines drift (frequency scaling, other processes); timing contender A for a while
and then contender B puts the drift into the ratio. Here every round times each
contender once, in the same order, so a slow stretch of the machine hits all of them.
Each contender's call is looped so one timing lasts at least ``min_time``; the cell
reports min, median and max seconds per call over the rounds, and ratios are taken
round by round (``t_A / t_ref`` in the same round) before the median.

A contender may live in another process (a peer with its own environment, see
``peer_client.py``): it then carries a :class:`Timed` whose calls run and are timed
there, and it takes its turn in every round like the others.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Timing:
    """Seconds per call over the rounds."""

    min: float
    median: float
    max: float
    rounds: tuple[float, ...]


class Timed(Protocol):
    """A contender timed elsewhere (another process): its own clock, its own loop."""

    def warm(self) -> tuple[Any, float]:
        """One call: (its result, its seconds)."""
        ...

    def time(self, number: int) -> float:
        """Seconds per call over ``number`` calls."""
        ...


@dataclass
class Contender:
    """One implementation in a cell: ``fn()`` is timed (or ``remote`` times itself);
    ``result`` is its warm-up output."""

    name: str
    fn: Callable[[], Any] | None = None
    result: Any = None
    number: int = 1
    remote: Timed | None = None

    def warm(self) -> float:
        if self.remote is not None:
            self.result, first = self.remote.warm()
            return first
        assert self.fn is not None
        t0 = time.perf_counter()
        self.result = self.fn()
        return time.perf_counter() - t0

    def time(self) -> float:
        if self.remote is not None:
            return self.remote.time(self.number)
        assert self.fn is not None
        return _once(self.fn, self.number)


def _once(fn: Callable[[], Any], number: int) -> float:
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def interleaved(contenders: list[Contender], rounds: int,
                min_time: float = 0.02) -> dict[str, Timing]:
    """Warm up each contender (keeping its result), size its loop, then time all of them
    once per round for ``rounds`` rounds."""
    for c in contenders:
        first = c.warm()
        c.number = max(1, min(10_000, int(min_time / max(first, 1e-9))))
    seen: dict[str, list[float]] = {c.name: [] for c in contenders}
    for _ in range(rounds):
        for c in contenders:
            seen[c.name].append(c.time())
    return {name: Timing(min(ts), statistics.median(ts), max(ts), tuple(ts))
            for name, ts in seen.items()}


def ratio(a: Timing, ref: Timing) -> tuple[float, float, float]:
    """min, median and max of the round-by-round ratio ``a / ref``."""
    rs = [x / y for x, y in zip(a.rounds, ref.rounds, strict=True) if y > 0]
    return min(rs), statistics.median(rs), max(rs)


def fmt_time(t: float) -> str:
    if t < 1e-3:
        return f"{t * 1e6:.1f} µs"
    if t < 1.0:
        return f"{t * 1e3:.2f} ms"
    return f"{t:.2f} s"


def child_report(mode: str, rows: int, wall: float) -> None:
    """The last line a measured child process prints (read by :func:`child_rounds`): its
    mode, rows, wall seconds and its own peak RSS (``VmHWM``) in MB."""
    import json
    from pathlib import Path

    rss_mb = next(int(x.split()[1]) / 1024 for x in Path("/proc/self/status").read_text()
                  .splitlines() if x.startswith("VmHWM:"))
    print(json.dumps({"mode": mode, "rows": rows, "wall_s": wall, "peak_rss_mb": rss_mb}))


def child_rounds(script: str, modes: tuple[str, ...], repeats: int, args: list[str]
                 ) -> dict[str, dict[str, float]]:
    """Each mode run as ``python script *args --child MODE`` (a fresh process), modes in
    turn, ``repeats`` rounds: per mode its rows, median wall seconds and the largest peak
    RSS of its runs (from :func:`child_report`)."""
    import json
    import subprocess
    import sys

    runs: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
    for _ in range(repeats):
        for mode in modes:
            out = subprocess.run([sys.executable, script, *args, "--child", mode],
                                 capture_output=True, text=True, check=True)
            runs[mode].append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {m: {"rows": rs[0]["rows"], "wall_s": statistics.median(r["wall_s"] for r in rs),
                "peak_rss_mb": max(r["peak_rss_mb"] for r in rs)} for m, rs in runs.items()}


def child_rounds_note(repeats: int) -> str:
    """What :func:`child_rounds`' figures are, for a results file's machine line."""
    return (f"{repeats} interleaved rounds, medians; wall times are the call alone (imports "
            "excluded); peak RSS is each run's own `VmHWM` (the largest of the rounds)")


def evaluated_rows(job: Any) -> int:
    """``cover evaluate`` of ``job`` (an :class:`cover.jobs.evaluate.EvaluateFiles`), its
    printed summary dropped: the rows it evaluated."""
    import contextlib
    import io

    from cover.jobs.evaluate import evaluate_files

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return int(evaluate_files(job)["counts"]["rows"])


def add_child_flags(ap: Any) -> None:
    """The flags of a script measured by :func:`child_rounds` (an argparse parser):
    ``--repeats``, ``--out`` and the hidden ``--child MODE`` of its measured runs."""
    import argparse
    from pathlib import Path

    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None, help="also write the Markdown here")
    ap.add_argument("--child", nargs=1, metavar="MODE", help=argparse.SUPPRESS)
