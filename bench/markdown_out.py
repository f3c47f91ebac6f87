"""The first and last steps of every bench script: the lines that say how and where it
ran (:func:`command_line`, :func:`machine_line`), and its Markdown printed and written to
``--out`` (:func:`publish`)."""

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
