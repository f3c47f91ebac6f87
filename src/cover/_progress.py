"""A minimal progress report on stderr for steps that take more than a moment.

On a terminal it redraws one line (at most 10 times a second); elsewhere (logs,
CI) it prints a plain line at most every 2 seconds and a closing line if the step
took longer than a second, so a long job is never silent.
"""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TextIO


class Progress:
    """``with Progress("calibrating", total) as p: p.advance()``."""

    def __init__(self, label: str, total: int, *, stream: TextIO | None = None,
                 enabled: bool = True, tty: bool | None = None) -> None:
        self.label = label
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = self.stream.isatty() if tty is None else tty
        self._t0 = time.monotonic()
        self._last = self._t0
        self._printed = False

    def _line(self, now: float) -> str:
        pct = 100.0 * self.done / self.total
        return f"{self.label}: {self.done}/{self.total} ({pct:3.0f}%) {now - self._t0:5.1f}s"

    def advance(self, k: int = 1) -> None:
        self.done += k
        if not self.enabled:
            return
        now = time.monotonic()
        if self.tty and (now - self._last > 0.1 or self.done >= self.total):
            self.stream.write("\r" + self._line(now))
        elif not self.tty and now - self._last > 2.0:
            self.stream.write(self._line(now) + "\n")
        else:
            return
        self._last = now
        self._printed = True
        self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if self.tty and self._printed:
            self.stream.write("\n")
        elif not self.tty and now - self._t0 > 1.0:
            self.stream.write(self._line(now) + " done\n")
        self.stream.flush()


class NullProgress(Progress):
    def __init__(self) -> None:
        super().__init__("", 1, enabled=False)
