"""Reads ahead and writes behind on threads of their own, for the streamed commands.

A streamed command reads a few MB, computes a batch, then writes it. Reading (and
gunzipping a ``.gz`` input), writing (and compressing a ``.gz`` output), joining a
batch's output and syncing it to the disk release the interpreter lock, so on a thread
they overlap the computing of the batches: :func:`read_ahead` (the line cutter's reads,
:mod:`cover.io.lines`) and :func:`threaded_writes` (``atomic_open(..., threaded=True)``,
:mod:`cover.io.output`). The bytes, their order and every error are those of a plain
read or write; each queue holds a few pieces, so memory stays bounded.
"""

from __future__ import annotations

import contextlib
import io
import os
import queue
import threading
from collections.abc import Callable, Generator, Iterator
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

    def __init__(self, fh: IO[bytes], depth: int = 2, name: str | None = None) -> None:
        self._fh = fh
        self._name = name
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
            if isinstance(exc, OSError) and exc.filename is None and self._name:
                exc.filename = self._name  # a write's error: the output's (it names none)
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
def threaded_writes(fh: IO[bytes], name: str | None = None) -> Iterator[Any]:
    """``fh`` whose ``write`` runs on a thread (:class:`_WriterThread`); every piece is
    written when the block ends, and an error of the thread is raised there."""
    writer = _WriterThread(fh, name=name)
    try:
        yield writer
    except BaseException:
        with contextlib.suppress(BaseException):
            writer.close()
        raise
    writer.close()




#: Reads a :func:`read_ahead` thread may be ahead of its reader.
_AHEAD = 2


def read_ahead(read: Callable[[], bytes]) -> Generator[bytes, None, None]:
    """``read()`` called on a thread until it returns ``b""`` (yielded too), the results
    in order; an exception of ``read`` is raised here, where the plain call would raise
    it. Closing the generator early stops the thread before it returns, so the caller
    may close the file next."""
    todo: queue.Queue[bytes | BaseException] = queue.Queue(maxsize=_AHEAD)
    stop = threading.Event()

    def run() -> None:
        while not stop.is_set():
            try:
                data: bytes | BaseException = read()
            except BaseException as exc:  # raised in the reader's thread
                data = exc
            while not stop.is_set():  # a bounded wait: the reader may have gone
                try:
                    todo.put(data, timeout=0.05)
                    break
                except queue.Full:
                    continue
            if not isinstance(data, bytes) or not data:
                return

    thread = threading.Thread(target=run, name="cover-reader", daemon=True)
    thread.start()
    try:
        while True:
            got = todo.get()
            if isinstance(got, BaseException):
                raise got
            yield got
            if not got:
                return
    finally:
        stop.set()
        thread.join()
