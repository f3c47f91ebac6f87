"""Large blocks handed back to the system when freed (glibc).

glibc serves an allocation from its heap below a threshold that it raises, up to 32 MB,
each time a larger block is freed; a stream that grows columns and drops a batch's
arrays again and again then leaves freed blocks stranded between live ones, which stay
in its resident memory (~80 MB reading a ground truth of 1e7 rows). A fixed threshold
maps every block of :data:`MAP_BYTES` or more on its own, so freeing it returns it at
once; smaller blocks (a batch's columns of 16k rows) stay on the heap. Anything else
than glibc: nothing is changed.
"""

from __future__ import annotations

import ctypes
import ctypes.util

#: Blocks of at least this size get their own mapping.
MAP_BYTES = 1 << 20
#: ``M_MMAP_THRESHOLD`` of glibc's ``mallopt``.
_M_MMAP_THRESHOLD = -3
_done = False


def map_large_blocks() -> bool:
    """Fix glibc's mapping threshold at :data:`MAP_BYTES` (once per process); whether it
    was set (False off glibc)."""
    global _done
    if _done:
        return True
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _done = bool(libc.mallopt(_M_MMAP_THRESHOLD, MAP_BYTES))
    except (OSError, AttributeError):  # not glibc: its own allocator stays as it is
        return False
    return _done


def trim() -> None:
    """Hand the free pages of glibc's heap back to the system (``malloc_trim(0)``: the
    pages freed between live blocks, not only at the top); nothing off glibc. A stream
    calls it between batches: what one batch freed is not kept resident for the next."""
    global _libc
    if _libc is None:
        try:
            _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _libc.malloc_trim  # noqa: B018  (glibc only)
        except (OSError, AttributeError):
            _libc = False
    if isinstance(_libc, ctypes.CDLL):
        _libc.malloc_trim(0)


_libc: ctypes.CDLL | bool | None = None
