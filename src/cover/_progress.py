"""A minimal progress line on stderr for steps that take more than a moment."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TextIO


class Progress:
    """``with Progress("calibrating", total) as p: p.advance()`` -- redraws at most
    10 times a second, and only on a terminal unless ``force``."""

    def __init__(self, label: str, total: int, *, stream: TextIO | None = None,
                 enabled: bool | None = None) -> None:
        self.label = label
        self.total = max(total, 1)
        self.done = 0
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._t0 = time.monotonic()
        self._last = 0.0

    def advance(self, k: int = 1) -> None:
        self.done += k
        now = time.monotonic()
        if self.enabled and (now - self._last > 0.1 or self.done >= self.total):
            self._last = now
            pct = 100.0 * self.done / self.total
            self.stream.write(f"\r{self.label}: {self.done}/{self.total} ({pct:3.0f}%) "
                              f"{now - self._t0:5.1f}s")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


class NullProgress(Progress):
    def __init__(self) -> None:
        super().__init__("", 1, enabled=False)
