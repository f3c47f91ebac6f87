"""Where an output file may go, checked before anything is written.

A target is a regular file, a name that does not exist yet, a symlink to a regular
file (written through: the file it names is replaced, the link stays) or ``-``
(standard output). A folder, a device, a named pipe or a socket (also behind a
symlink), a target whose folder is missing or not writable, and a target that is the
same file as an input or as another output of the run (also through a symlink or a
hard link) are each an :class:`~cover.errors.OutputError` naming the path (and the flag
that gave it, for :func:`check_outputs`). The writers are :mod:`cover.io.output`'s.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from cover.errors import OutputError

PathLike = str | os.PathLike[str]

#: The path that means standard output.
STDOUT = "-"

def is_stdout(path: PathLike) -> bool:
    """Whether ``path`` is ``-``, standard output."""
    return os.fspath(path) == STDOUT


def _same_file(a: PathLike, b: PathLike) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _kind(mode: int) -> str | None:
    """What a file that is not a regular file or a folder is, or None when it is one."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    for test, name in ((stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISFIFO, "named pipe"), (stat.S_ISSOCK, "socket")):
        if test(mode):
            return name
    return "special file"


def _resolved(p: Path) -> Path:
    """``p`` with symlinks followed (the file a write goes to); ``p`` itself when the
    link cannot be followed to a path (``/proc/self/fd/1`` of a pipe)."""
    if not p.is_symlink():
        return p
    real = Path(os.path.realpath(p))
    return real if real.exists() or real.parent.is_dir() else p


def check_target(path: PathLike, inputs: Iterable[PathLike | None] = ()) -> Path:
    """The file a write to ``path`` replaces, after checking it can be written: its
    folder exists and is writable, it is a regular file or does not exist yet (not a
    folder, device, pipe or socket, also behind a symlink), and it is none of
    ``inputs`` (compared with ``os.path.samefile``, so symlinks and hard links count).
    A symlink is followed: the file it points to is returned (written through).
    ``-`` (standard output) is returned as it is."""
    p = Path(path)
    if is_stdout(path):
        return p
    if p.is_dir():
        raise OutputError(f"{p}: is a folder; give a file name to write")
    try:
        kind = _kind(os.stat(p).st_mode)
    except OSError:
        kind = None  # does not exist (yet), or a dangling link: a new file
    if kind is not None:
        real = _resolved(p)
        via = f" (through the link to {real})" if real != p and real.exists() else ""
        raise OutputError(f"{p}: is a {kind}{via}, not a regular file; writing would replace "
                          "it: give a regular file (or -, where the option takes it, for "
                          "standard output)")
    target = _resolved(p)
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.exists():
        raise OutputError(f"{p}: the folder {parent} does not exist; create it first")
    if not parent.is_dir():
        raise OutputError(f"{p}: {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{p}: the folder {parent} is not writable")
    if p.exists():
        for src in inputs:
            if src is not None and _same_file(p, src):
                raise OutputError(
                    f"{p}: is also an input of this run ({src}); write the output somewhere else"
                )
    return target


def check_outputs(outputs: Sequence[tuple[str, PathLike]],
                  inputs: Sequence[tuple[str, PathLike]] = ()) -> None:
    """Refuse, before any work, an output that cannot be written (:func:`check_target`),
    that is the same file as an input, or that is the same file as another output (by
    path through symlinks, or ``os.path.samefile`` for hard links; two ``-`` are both
    standard output). Each path comes with the label naming it in messages (its CLI
    flag, e.g. ``--json``). The writers check again when they write."""
    seen: list[tuple[str, PathLike]] = []
    for label, out in outputs:
        try:
            check_target(out)
        except OutputError as exc:
            raise OutputError(f"{label} {exc}") from None
        if not is_stdout(out):
            for in_label, src in inputs:
                if _same_file(out, src):
                    raise OutputError(f"{label} {out}: is also an input of this run "
                                      f"({in_label} {src}); write the output somewhere else")
        for other_label, other in seen:
            if _same_output(out, other):
                raise OutputError(f"{label} {out}: is the same file as {other_label} {other}; "
                                  "give each output its own name")
        seen.append((label, out))


def _same_output(a: PathLike, b: PathLike) -> bool:
    if is_stdout(a) or is_stdout(b):
        return is_stdout(a) and is_stdout(b)
    return os.path.realpath(a) == os.path.realpath(b) or _same_file(a, b)
