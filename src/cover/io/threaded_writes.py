"""Writes on a thread of their own, for the streamed commands (``atomic_open(...,
threaded=True)``, :mod:`cover.io.output`).

A streamed certify computes a batch, then writes it; the write (and the compression of
a ``.gz`` output, and the sync to the disk) releases the interpreter lock, so handing it
to a thread lets the next batch be computed meanwhile. The bytes written, and their
order, are those of a plain write.
"""

from __future__ import annotations

import contextlib
import io
import os
import queue
import threading
from collections.abc import Iterator
from typing import IO, Any

#: A file written on a thread is synced each time this many bytes have been written.
_SYNC_BYTES = 1 << 23
_datasync = getattr(os, "fdatasync", os.fsync)  # macOS has no fdatasync


class _WriterThread:
    """``write(bytes)`` handed to a thread that writes (and compresses, for ``.gz``) and
    flushes each piece to the disk, so a streamed command computes its next batch while
    the last one is written: the writes and the sync release the interpreter lock. At
    most ``depth`` pieces wait (memory stays a few batches); an error of the thread is
    raised by the next ``write`` or by :meth:`close`."""

    def __init__(self, fh: IO[bytes], depth: int = 2) -> None:
        self._fh = fh
        self._todo: queue.Queue[bytes | list[bytes] | None] = queue.Queue(maxsize=depth)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="cover-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            fd = self._fh.fileno() if isinstance(self._fh, io.BufferedWriter) else None
            unsynced = 0
            while (data := self._todo.get()) is not None:
                if isinstance(data, list):  # joined here: the copy releases the lock too
                    data = b"".join(data)
                self._fh.write(data)
                unsynced += len(data)
                if fd is not None and unsynced >= _SYNC_BYTES:
                    # to the disk now, on this thread, so the closing fsync waits for little
                    self._fh.flush()
                    _datasync(fd)
                    unsynced = 0
        except BaseException as exc:  # raised in the caller's thread
            self._error = exc
            while self._todo.get() is not None:  # unblock a waiting write until close
                pass

    def write(self, data: bytes) -> int:
        self._put(data)
        return len(data)

    def writelines(self, parts: list[bytes]) -> None:
        """Write ``parts`` one after the other, as one write (joined on the thread)."""
        self._put(list(parts))

    def _put(self, data: bytes | list[bytes]) -> None:
        if self._error is None:
            self._todo.put(data)
        if self._error is not None:
            raise self._error

    def close(self) -> None:
        """Wait for every piece to be written; raise the thread's error, if any."""
        self._todo.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error


@contextlib.contextmanager
def threaded_writes(fh: IO[bytes]) -> Iterator[Any]:
    """``fh`` whose ``write`` runs on a thread (:class:`_WriterThread`); every piece is
    written when the block ends, and an error of the thread is raised there."""
    writer = _WriterThread(fh)
    try:
        yield writer
    except BaseException:
        with contextlib.suppress(BaseException):
            writer.close()
        raise
    writer.close()


