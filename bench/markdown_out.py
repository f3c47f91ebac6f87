"""The last step of every bench script: print its Markdown and write it to ``--out``."""

from __future__ import annotations

from pathlib import Path

from cover.io.output import write_text


def publish(lines: list[str], out: Path | None) -> int:
    """Print ``lines`` as one Markdown text and write it to ``out`` when given (atomic,
    :func:`cover.io.output.write_text`); returns the exit code 0."""
    md = "\n".join(lines) + "\n"
    print(md)
    if out:
        write_text(out, md)
    return 0
