"""Large blocks handed back to the system when freed (glibc).

glibc serves an allocation from its heap below a threshold that it raises, up to 32 MB,
each time a larger block is freed; a stream that grows columns and drops a batch's
arrays again and again then leaves freed blocks stranded between live ones, which stay
in its resident memory (~80 MB reading a ground truth of 1e7 rows). A fixed threshold
maps every block of :data:`MAP_BYTES` or more on its own, so freeing it returns it at
once; smaller blocks (a batch's columns of 16k rows, a batch's lines) stay on the heap.
Anything else than glibc: nothing is changed. The threshold is set only for a ground truth of
:data:`LARGE_INPUT` bytes or more (:func:`map_large_blocks_for`): it costs a page fault
per fresh block, which a small run pays for nothing, and it stays for the process's life
(a library caller's process too).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache
from pathlib import Path

#: Blocks of at least this size get their own mapping. A lower threshold holds less and
#: faults more pages in (each block below it is reused from the heap); a higher one holds
#: more: the streamed commands' peaks at 1e7 rows with this one are those of
#: bench/results-scaling-files.md.
MAP_BYTES = 8 << 20
#: Inputs this large (bytes) set the threshold (a 1e6-row ground truth is ~136 MB).
LARGE_INPUT = 256 << 20
#: Rows a stream reads between two trims: ``malloc_trim`` walks the whole heap (about
#: half a millisecond), which a batch of a few rows, freeing a few pages, does not repay.
TRIM_ROWS = 4096
#: ``M_MMAP_THRESHOLD`` of glibc's ``mallopt``.
_M_MMAP_THRESHOLD = -3


@cache
def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (it has ``mallopt`` and ``malloc_trim``), else None."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt  # noqa: B018  (glibc only)
        libc.malloc_trim  # noqa: B018
    except (OSError, AttributeError):
        return None
    return libc


@cache
def map_large_blocks() -> bool:
    """Fix glibc's mapping threshold at :data:`MAP_BYTES` (once per process); whether it
    was set (False off glibc)."""
    libc = _glibc()
    return libc is not None and bool(libc.mallopt(_M_MMAP_THRESHOLD, MAP_BYTES))


def map_large_blocks_for(path: str | Path) -> bool:
    """:func:`map_large_blocks` when ``path`` is a file of :data:`LARGE_INPUT` bytes or
    more; True when it is and the threshold is set (False for a smaller file, whatever
    an earlier call set)."""
    try:
        large = Path(path).stat().st_size >= LARGE_INPUT
    except (OSError, ValueError):  # the reader says what is wrong with the path
        return False
    return map_large_blocks() if large else False


def trim() -> None:
    """Hand the free pages of glibc's heap back to the system (``malloc_trim(0)``: the
    pages freed between live blocks, not only at the top); nothing off glibc. A stream
    calls it between batches: what one batch freed is not kept resident for the next."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


class RowTrim:
    """:func:`trim` between batches, once at least :data:`TRIM_ROWS` rows have been read
    since the last one (every batch of the default size; one in many of a few rows)."""

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows = 0

    def after(self, rows: int) -> None:
        """Count ``rows`` more read; trim when the count reaches :data:`TRIM_ROWS`."""
        self._rows += rows
        if self._rows >= TRIM_ROWS:
            self._rows = 0
            trim()
