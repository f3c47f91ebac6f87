"""Which rows a calibrator was fitted on: a count and a digest always, the qids when few.

Saved in the calibrator file as ``fitted_on``; ``cover certify`` marks those rows and
``cover evaluate`` warns when it scores them. A fingerprint of a set of qids, it
belongs to the data model: the calibrator that records it and the readers that check
it both stand above this layer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

#: Calibration qids are kept in the file up to this many rows (a digest always).
KEEP_QIDS_MAX = 5000
#: Sorted qids hashed this many at a time.
_HASH_SLICE = 1 << 16


def fitted_on(qids: NDArray[Any] | list[str]) -> dict[str, Any]:
    """``{"count", "sha256", "qids"}``: sha256 of the sorted, newline-joined qids; the
    qids themselves when there are at most :data:`KEEP_QIDS_MAX`. An integer array
    stands for the qids ``str(i)``."""
    if isinstance(qids, np.ndarray) and qids.dtype.kind in "iu":
        # ASCII bytes sort as the text does (shorter first, '-' before digits) at a byte a
        # digit: 1e7 qids as numpy text would take 4x that, twice (the sort's copy).
        a = qids.reshape(-1)
        width = max(len(str(int(a.min()))), len(str(int(a.max())))) if a.size else 1
        text = a.astype(f"S{width}")
        text.sort()  # in place: no second copy of every qid
        return _digest(text, lambda part: part)
    if isinstance(qids, np.ndarray) and qids.dtype.kind == "U":
        # numpy orders text by code point as Python does: the same list, sorted in C,
        # hashed a slice at a time (1e7 qids as Python strings would take ~600 MB).
        return _digest(np.sort(qids.reshape(-1)), lambda part: [q.encode() for q in part])
    ids = sorted(str(q) for q in qids)
    digest = hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()
    return {"count": len(ids), "sha256": digest,
            "qids": ids if len(ids) <= KEEP_QIDS_MAX else None}


def _digest(ordered: NDArray[Any], utf8: Callable[[list[Any]], list[bytes]]
            ) -> dict[str, Any]:
    """:func:`fitted_on` of qids already sorted, hashed a slice at a time (``utf8``: a
    slice's values, as from ``tolist()``, as UTF-8 bytes)."""
    h = hashlib.sha256()
    for a in range(0, ordered.size, _HASH_SLICE):
        h.update((b"\n" if a else b"") + b"\n".join(utf8(ordered[a:a + _HASH_SLICE].tolist())))
    keep = None
    if ordered.size <= KEEP_QIDS_MAX:
        keep = [q.decode() if isinstance(q, bytes) else q for q in ordered.tolist()]
    return {"count": int(ordered.size), "sha256": h.hexdigest(), "qids": keep}
