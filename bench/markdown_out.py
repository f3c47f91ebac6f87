"""The first and last steps of every bench script: the lines that say how and where it
ran (:func:`command_line`, :func:`machine_line`), a table of runs over their floors
(:func:`ratio_table`), the verdict on each goal it measured (:func:`verdicts`), and its
Markdown printed and written to ``--out`` (:func:`publish`)."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import shlex
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from cover.io.output import write_text


def command_line(script: str, argv: Sequence[str] | None = None) -> str:
    """``Command: `.venv/bin/python bench/<script> <the arguments given>```, each quoted
    as a shell needs it."""
    args = list(sys.argv[1:] if argv is None else argv)
    return f"Command: `{shlex.join(['.venv/bin/python', f'bench/{script}', *args])}`"


def machine_line(load_start: float, packages: Sequence[str] = ("numpy",)) -> str:
    """The machine, the interpreter, the ``packages``' versions (those installed), the
    date and the 1-minute load average at the start (``load_start``) and now."""
    versions = []
    for name in packages:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return (f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
            f"{platform.python_version()}, {', '.join(versions)}; run on "
            f"{date.today().isoformat()}; 1-minute load average {load_start:.1f} at the "
            f"start, {os.getloadavg()[0]:.1f} at the end")


def publish(lines: list[str], out: Path | None) -> int:
    """Print ``lines`` as one Markdown text and write it to ``out`` when given (atomic,
    :func:`cover.io.output.write_text`); returns the exit code 0."""
    md = "\n".join(lines) + "\n"
    print(md)
    if out:
        write_text(out, md)
    return 0


def verdicts(rows: Sequence[tuple[bool, str]]) -> list[str]:
    """The goals of the performance issue a run measured, as ``(met, what and the figure)``
    rows: a count of the misses, then one bullet a goal, the misses first."""
    if not rows:
        return []
    ordered = sorted(rows, key=lambda r: r[0])  # stable: the misses first, else as given
    missed = sum(not ok for ok, _ in ordered)
    return ["", f"Goals of the performance issue this run measures: {missed} of {len(rows)} "
            "not met.", ""] + [f"* {'met' if ok else '**not met**'}: {text}"
                              for ok, text in ordered]


def ratio_table(res: dict[str, dict[str, float]], floors: list[str], size_mb: float
                ) -> list[str]:
    """Markdown rows: wall, rows/s, input MB/s (to set against the memory bandwidth),
    peak RSS, and each run's time over each floor's."""
    lines = ["| run | wall (s) | rows/s | input MB/s | peak RSS (MB) | "
             + " | ".join(f"/ {f}" for f in floors) + " |",
             "|---|---|---|---|---|" + "---|" * len(floors)]
    for mode, r in res.items():
        over = " | ".join(f"{r['wall_s'] / res[f]['wall_s']:.1f}x" for f in floors)
        lines.append(f"| {mode} | {r['wall_s']:.2f} | {r['rows'] / r['wall_s']:,.0f} | "
                     f"{size_mb / r['wall_s']:,.0f} | {r['peak_rss_mb']:.0f} | {over} |")
    return lines
