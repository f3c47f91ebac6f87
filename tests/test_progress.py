"""Progress reporting: a redrawn line on a terminal, periodic plain lines elsewhere."""

from __future__ import annotations

import io

from cover import _progress
from cover._progress import NullProgress, Progress


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_plain_lines_every_two_seconds_and_a_closing_line(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(_progress.time, "monotonic", clock)
    out = io.StringIO()
    with Progress("calibrating", 10, stream=out, tty=False) as p:
        for _ in range(10):
            clock.t += 0.5
            p.advance()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("calibrating: 5/10 ( 50%)")
    assert lines[-1].startswith("calibrating: 10/10 (100%)") and lines[-1].endswith("done")
    assert len(lines) == 3


def test_terminal_redraws_one_line(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(_progress.time, "monotonic", clock)
    out = io.StringIO()
    with Progress("x", 3, stream=out, tty=True) as p:
        for _ in range(3):
            clock.t += 0.2
            p.advance()
    text = out.getvalue()
    assert text.count("\r") == 3 and text.endswith("\n") and "3/3 (100%)" in text


def test_quick_steps_and_null_progress_stay_silent():
    out = io.StringIO()
    with Progress("x", 3, stream=out, tty=False) as p:
        p.advance(3)
    assert out.getvalue() == ""
    with NullProgress() as p:
        p.advance()
