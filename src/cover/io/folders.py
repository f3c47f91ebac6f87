"""Output folders, and the rule for results folders written all or nothing.

A results folder (``cover validity``, ``cover study``, ``cover demo``, ``cover online``) is
several files
that only make sense together, so it is written the way :func:`cover.io.output.atomic_open`
writes one file: :func:`cover.io.output.results_folder` (with every other writer) gives
the run a new temporary folder beside the target (``.<name>.<random>.tmp``) and renames
it into place only when the run ends cleanly; a run that fails or is interrupted
(``KeyboardInterrupt`` included) deletes the temporary folder and leaves the target as
it was, or absent. The checks live here.

The rule for a target that already exists (what ``--out`` may name):

* it does not exist, or is an empty folder: the new folder takes its place;
* it is a previous COVER results folder (it holds one of :data:`RESULTS_MARKERS`): it is
  replaced *whole* when the run succeeds, so no file of the previous run (a figure of a
  family not studied this time) lingers beside the new ones; files added to it by hand
  go with it;
* anything else (a folder holding other files, a file, the current folder or one of its
  parents, a folder holding one of the run's inputs) is refused before any work, with a
  message naming it: replacing it would delete files COVER did not write.

The swap is two renames (the old folder aside, the new one in), so for an instant the
name is missing, but never half old, half new; the old folder is then deleted.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from cover.errors import OutputError

PathLike = str | os.PathLike[str]

#: A folder holding one of these files is taken for a COVER results folder, which a new
#: run may replace whole.
RESULTS_MARKERS = ("manifest.json", "report.html", "validity.json", "overview.json",
                   "online_summary.json")


def slug(text: str, empty: str = "x") -> str:
    """``text`` as a file or folder name: lower-case letters and digits, ``-`` between
    runs of them (``empty`` when none is left)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or empty


def check_folder(path: PathLike) -> Path:
    """Refuse an output folder that is something else (a file, a device, ...)."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise OutputError(f"{p}: is a file, not a folder; give a folder to write into")
    return p


def make_folder(path: PathLike) -> Path:
    """Create the output folder ``path`` (and its parents) if needed; a clear
    :class:`OutputError` when a file is in the way or it cannot be created."""
    p = check_folder(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{p}: cannot create the folder ({exc.strerror})") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise OutputError(f"{p}: the folder is not writable")
    return p


def check_results_folder(path: PathLike, inputs: Iterable[PathLike | None] = ()) -> Path:
    """The folder :func:`cover.io.output.results_folder` would replace (symlinks
    followed), after the checks of the module docstring; call it before any work to fail
    early."""
    p = check_folder(path)
    target = Path(os.path.realpath(p))
    if target == Path(target.anchor) or Path.cwd().resolve().is_relative_to(target):
        raise OutputError(f"{p}: is the current folder or one of its parents; give a "
                          "new folder for the results")
    for src in inputs:
        if src is not None and Path(os.path.realpath(src)).is_relative_to(target):
            raise OutputError(f"{p}: holds {src}, an input of this run, and is replaced "
                              "whole by the results; write them to another folder")
    if target.is_dir():
        entries = sorted(e.name for e in target.iterdir())
        if entries and not any(m in entries for m in RESULTS_MARKERS):
            raise OutputError(
                f"{p}: exists and is not a COVER results folder (it holds {entries[0]}"
                f"{' and more' if len(entries) > 1 else ''}); the results replace the whole "
                "folder, so give a new or empty folder")
    return target


__all__ = ["RESULTS_MARKERS", "check_folder", "check_results_folder", "make_folder"]
