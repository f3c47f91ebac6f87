"""The one way COVER writes a file: to a temporary file beside the target, then rename.

A run that fails or is interrupted leaves the previous target intact and no partial
file behind; a target that is the same file as one of the run's inputs (also through
a symlink or a hard link) is refused before anything is written. Every writer in
COVER (regions, calibrators, JSON, Markdown, figures, reports) goes through
:func:`atomic_open` or one of the helpers built on it.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> write_text(d / "a.txt", "hello\\n")
>>> (d / "a.txt").read_text()
'hello\\n'
>>> write_text(d / "a.txt", "bye\\n", inputs=[d / "a.txt"]) # doctest: +ELLIPSIS
Traceback (most recent call last):
...
cover.errors.OutputError: ...a.txt: is also an input of this run (...); write the output ...else
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np

from cover._json import to_json_number
from cover.errors import OutputError

PathLike = str | os.PathLike[str]


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_target(path: PathLike, inputs: Iterable[PathLike | None] = ()) -> Path:
    """The target as a :class:`Path`, after checking it can be written: its folder
    exists and is a folder, it is not itself a folder, and it is none of ``inputs``
    (compared with ``os.path.samefile``, so symlinks and hard links count)."""
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise OutputError(f"{p}: is a folder; give a file name to write")
    if not parent.exists():
        raise OutputError(f"{p}: the folder {parent} does not exist; create it first")
    if not parent.is_dir():
        raise OutputError(f"{p}: {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{p}: the folder {parent} is not writable")
    if p.exists():
        for src in inputs:
            if src is not None and _same_file(p, Path(src)):
                raise OutputError(
                    f"{p}: is also an input of this run ({src}); write the output somewhere else"
                )
    return p


@contextlib.contextmanager
def atomic_open(path: PathLike, mode: Literal["w", "wb"] = "w", *,
                inputs: Iterable[PathLike | None] = ()) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on a clean exit flush, fsync and rename it
    onto ``path`` (keeping an existing target's permission bits), otherwise delete it.
    Any exception, ``KeyboardInterrupt`` included, leaves ``path`` as it was."""
    target = check_target(path, inputs)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                               dir=target.parent if str(target.parent) else ".")
    try:
        fh: IO[Any] = (os.fdopen(fd, "w", encoding="utf-8") if mode == "w"
                       else os.fdopen(fd, "wb"))
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        if target.exists():
            os.chmod(tmp, target.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_text(path: PathLike, text: str, *, inputs: Iterable[PathLike | None] = ()) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_open(path, "w", inputs=inputs) as fh:
        fh.write(text)


def write_bytes(path: PathLike, data: bytes, *, inputs: Iterable[PathLike | None] = ()) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_open(path, "wb", inputs=inputs) as fh:
        fh.write(data)


def write_json(path: PathLike, doc: Any, *, inputs: Iterable[PathLike | None] = (),
               indent: int | None = 2) -> None:
    """Write ``doc`` as strict JSON (no bare NaN/Infinity: ``allow_nan=False``) atomically.
    Convert non-finite numbers first (:func:`strict_json`)."""
    write_text(path, json.dumps(doc, indent=indent, allow_nan=False) + "\n", inputs=inputs)


def strict_json(doc: Any) -> Any:
    """``doc`` with every non-finite float replaced by COVER's JSON convention
    (:func:`cover._json.to_json_number`: NaN -> null, +-inf -> "inf"/"-inf"), at any depth;
    numpy scalars become Python numbers."""
    if isinstance(doc, dict):
        return {k: strict_json(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [strict_json(v) for v in doc]
    if isinstance(doc, (float, np.floating)):
        return to_json_number(float(doc))
    if isinstance(doc, np.integer):
        return int(doc)
    if isinstance(doc, np.bool_):
        return bool(doc)
    return doc


def save_figure(fig: Any, path: PathLike, *, inputs: Iterable[PathLike | None] = ()) -> Path:
    """Save a matplotlib figure as PNG through :func:`atomic_open`."""
    with atomic_open(path, "wb", inputs=inputs) as fh:
        fig.savefig(fh, format="png")
    return Path(path)


def make_folder(path: PathLike) -> Path:
    """Create the output folder ``path`` (and its parents) if needed; a clear
    :class:`OutputError` when a file is in the way or it cannot be created."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise OutputError(f"{p}: is a file, not a folder; give a folder to write into")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{p}: cannot create the folder ({exc.strerror})") from None
    if not os.access(p, os.W_OK | os.X_OK):
        raise OutputError(f"{p}: the folder is not writable")
    return p
