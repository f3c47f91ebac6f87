"""The one way COVER writes a file: to a temporary file beside the target, then rename.

A run that fails or is interrupted leaves the previous target intact and no partial
file behind; a target that is the same file as one of the run's inputs (also through
a symlink or a hard link) is refused before anything is written. Every writer in
COVER (regions, calibrators, JSON, Markdown, figures, reports) goes through
:func:`atomic_open` or one of the helpers built on it; a results folder (several files
that belong together) goes through :func:`results_folder`, built the same way: beside
the target, renamed into place at the end (the rule: :mod:`cover.io.folders`). The
checks of a target file, before anything is written, are :mod:`cover.io.output_targets`.

What a target may be:

* a regular file, or a name that does not exist yet: replaced whole, atomically;
* a symlink to a regular file (or a dangling one): written *through*, as ``>`` in a
  shell is: the new file is renamed onto the file the link points to (its temporary
  file sits beside that file), so the link stays and the file it names changes;
* ``-`` (exactly; ``./-`` names a file): standard output. The data is spooled to an
  anonymous temporary file and copied to standard output only once the writer finished
  cleanly, so a failed or interrupted run writes nothing there: complete or nothing,
  as for a file. While :func:`data_to_stdout` is active (``cover`` turns it on when an
  output is ``-``) the data goes to the standard output of that moment and ``print``
  goes to standard error, so messages never mix into the data;
* a name ending in ``.gz`` (``certified.jsonl.gz``): the file is written gzip-compressed,
  as the name says (every reader of COVER reads gzip by its bytes);
* anything else (a device such as ``/dev/null``, a named pipe, a socket, also behind
  a symlink such as ``/dev/stdout``) is refused with an :class:`OutputError` naming what
  it is: renaming a new file onto it would replace the device or pipe for everyone.

>>> import tempfile, pathlib
>>> scratch = tempfile.TemporaryDirectory()
>>> d = pathlib.Path(scratch.name)
>>> write_text(d / "a.txt", "hello\\n")
>>> (d / "a.txt").read_text()
'hello\\n'
>>> write_text(d / "a.txt", "bye\\n", inputs=[d / "a.txt"]) # doctest: +ELLIPSIS
Traceback (most recent call last):
...
cover.errors.OutputError: ...a.txt: is also an input of this run (...); write the output ...else
>>> scratch.cleanup()
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np

from cover._json import to_json_number

# Output folders and the rule of a results folder (cover.io.folders) are re-exported, and
# results_folder below writes one: every writer of COVER is found in this one module.
from cover.io.folders import check_folder as check_folder
from cover.io.folders import check_results_folder as check_results_folder
from cover.io.folders import make_folder as make_folder

# Where an output file may go is checked by cover.io.output_targets (re-exported).
from cover.io.output_targets import STDOUT as STDOUT
from cover.io.output_targets import PathLike as PathLike
from cover.io.output_targets import check_outputs as check_outputs
from cover.io.output_targets import check_target as check_target
from cover.io.output_targets import is_stdout as is_stdout
from cover.io.threads import threaded_writes

#: Where ``-`` is written while :func:`data_to_stdout` is active (innermost last).
_DATA_STREAMS: list[IO[str]] = []


@contextlib.contextmanager
def data_to_stdout() -> Iterator[None]:
    """While active, outputs named ``-`` go to the standard output of this moment and
    ``print`` goes to standard error (messages must not mix into the data)."""
    _DATA_STREAMS.append(sys.stdout)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        _DATA_STREAMS.pop()


def _copy_to_stdout(spool: IO[bytes]) -> None:
    out = _DATA_STREAMS[-1] if _DATA_STREAMS else sys.stdout
    out.flush()
    spool.seek(0)
    buffer = getattr(out, "buffer", None)
    if buffer is not None:
        shutil.copyfileobj(spool, buffer)
        buffer.flush()
    else:  # a text-only stream (a StringIO in tests)
        out.write(io.TextIOWrapper(spool, encoding="utf-8").read())
    out.flush()


@contextlib.contextmanager
def _stdout_open(mode: Literal["w", "wb"]) -> Iterator[IO[Any]]:
    """Spool the data to an anonymous temporary file; copy it to standard output only
    when the writer finished cleanly (complete or nothing)."""
    with tempfile.TemporaryFile() as spool:
        if mode == "wb":
            yield spool
        else:
            text = io.TextIOWrapper(spool, encoding="utf-8", write_through=True)
            yield text
            text.detach()  # flushed; the TemporaryFile closes the spool itself
        spool.flush()
        _copy_to_stdout(spool)


@contextlib.contextmanager
def atomic_open(path: PathLike, mode: Literal["w", "wb"] = "w", *,
                inputs: Iterable[PathLike | None] = (), threaded: bool = False
                ) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` (beside the file it links to, for a
    symlink); on a clean exit flush, fsync and rename it onto that file (keeping an
    existing target's permission bits), otherwise delete it. Any exception,
    ``KeyboardInterrupt`` included, leaves ``path`` as it was. ``-`` writes to standard
    output, once the writer finished cleanly. ``threaded`` (binary mode): the file's
    ``write`` runs on a thread of its own (:mod:`cover.io.threads`), for a streamed
    writer of large batches."""
    if threaded:
        if mode != "wb":
            raise ValueError("threaded writes are binary (mode 'wb')")
        with (atomic_open(path, mode, inputs=inputs) as plain,
              threaded_writes(plain, name=str(path)) as writer):
            yield writer
        return
    if is_stdout(path):
        with _stdout_open(mode) as out:
            yield out
        return
    target = check_target(path, inputs)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp",
                               dir=target.parent if str(target.parent) else ".")
    try:
        if target.suffix.lower() == ".gz":  # x.jsonl.gz: written gzip-compressed, as named
            with os.fdopen(fd, "wb") as raw:
                # mtime 0: the same input gives the same bytes on every run
                gz = gzip.GzipFile(filename="", mode="wb", compresslevel=6, fileobj=raw,
                                   mtime=0)
                zipped: Any = io.TextIOWrapper(gz, encoding="utf-8") if mode == "w" else gz
                with zipped:
                    yield zipped
                raw.flush()  # closing the gzip stream wrote its trailer to raw
                os.fsync(raw.fileno())
        else:
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
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _name_write_error(exc, str(target))
        raise


#: Errors only a write gives (a full disk, a quota, a file too large): an OSError with no
#: file name is then the target's.
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _name_write_error(exc: BaseException, target: str) -> None:
    """Name ``target`` in a write error that names no file (``os.write`` and ``fsync`` do
    not), so the message says which output could not be written."""
    if isinstance(exc, OSError) and exc.filename is None and exc.errno in _WRITE_ERRNOS:
        exc.filename = target


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


@contextlib.contextmanager
def results_folder(path: PathLike, *, inputs: Iterable[PathLike | None] = ()
                   ) -> Iterator[Path]:
    """Yield a new temporary folder beside ``path`` to write a results folder into;
    on a clean exit it replaces ``path`` (the rule of the module docstring), on any
    exception it is deleted and ``path`` stays as it was. What the run prints meanwhile
    (its summary) is held and shown once the folder is in place: a reader that stops
    early (``cover validity ... | head``) cannot cost the folder; a failed run shows
    none of it, as it leaves no folder."""
    target = check_results_folder(path, inputs)
    make_folder(target.parent)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    held = io.StringIO()
    try:
        with contextlib.redirect_stdout(held):
            yield work
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(work, (target.stat().st_mode & 0o7777) if target.is_dir()
                 else 0o777 & ~umask)
        _swap(work, target)
    except BaseException as exc:
        shutil.rmtree(work, ignore_errors=True)
        if isinstance(exc, OSError) and exc.filename is not None:  # a file of the folder
            with contextlib.suppress(ValueError):
                exc.filename = str(target / Path(exc.filename).relative_to(work))
        raise
    sys.stdout.write(held.getvalue())


def _swap(new: Path, target: Path) -> None:
    """Put folder ``new`` at ``target``; an existing ``target`` is moved aside first
    (and back if the second rename fails), then deleted."""
    if not target.exists():
        os.replace(new, target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    os.replace(target, old / "previous")
    try:
        os.replace(new, target)
    except OSError:
        os.replace(old / "previous", target)
        raise
    shutil.rmtree(old, ignore_errors=True)
