"""Video durations as an index: sorted UTF-8 vid bytes beside float64 durations, looked
up a batch of vids at a time (the ``--videos`` of certify, the service and the streams;
built by :mod:`cover.io.durations`). A byte an ASCII character where numpy text takes
four; byte order is code-point order, so the vids sort as their text does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.io.narrow import sorted_find
from cover.utf8 import as_bytes, as_text

__all__ = ["VideoIndex", "utf8_ids"]


@dataclass(frozen=True)
class VideoIndex:
    """Video durations as sorted UTF-8 ``vid`` bytes (byte order is code-point order, so
    they sort as the text does) and each one's duration ``t``; equal vids keep the order
    they were given in, so a lookup finds the first, as a stable sort of the text would."""

    vid: NDArray[np.bytes_]
    t: NDArray[np.float64]
    #: What the keys ``vid`` are: videos, or queries (``"qid"``: durations of a ground
    #: truth's queries, which a row looks up by its qid; :func:`cover.data.join.fill_durations`).
    by: str = "vid"

    @classmethod
    def of(cls, vid: NDArray[Any], t: NDArray[Any], by: str = "vid") -> VideoIndex:
        """The index of ``(vid, t)`` in any order, vids (or qids: ``by``) as text or UTF-8
        bytes."""
        v = np.asarray(vid).reshape(-1)
        v = v if v.dtype.kind == "S" else utf8_ids(v)
        d = np.asarray(t, dtype=np.float64).reshape(-1)
        if v.size > 1 and not (v[1:] >= v[:-1]).all():
            order = np.argsort(v, kind="stable")
            v, d = v[order], d[order]
        return cls(v, d, by)

    def texts(self) -> tuple[NDArray[np.str_], NDArray[np.float64]]:
        """``(vid as text, t)``, sorted by vid."""
        try:
            return as_text(self.vid), self.t
        except UnicodeDecodeError:  # a lone surrogate (:func:`utf8_ids`)
            return np.char.decode(self.vid, "utf-8", "surrogatepass"), self.t

    def known(self, vid: NDArray[Any]) -> tuple[NDArray[np.str_], NDArray[np.float64]]:
        """The distinct ``vid`` (text) that have a duration here, sorted, and their
        durations: what a batch needs of the index (a binary search of its own vids,
        no sort or copy of the index)."""
        v = np.asarray(vid, dtype=str).reshape(-1)
        if v.size > 1:  # a video's rows mostly come together: drop runs before the sort
            run = np.ones(v.size, dtype=bool)
            np.not_equal(v[1:], v[:-1], out=run[1:])
            v = v[run]
        uniq = np.unique(v)
        pos, hit = sorted_find(self.vid, utf8_ids(uniq))
        return uniq[hit], self.t[pos[hit]]


def utf8_ids(text: NDArray[Any]) -> NDArray[np.bytes_]:
    """Text as UTF-8 bytes (:func:`cover.utf8.as_bytes`); a lone surrogate (which a JSON
    document may hold) is kept as its three bytes, still in code-point order."""
    try:
        return as_bytes(text)
    except UnicodeEncodeError:
        raw = np.char.encode(np.asarray(text, dtype=str), "utf-8", "surrogatepass")
        return raw.astype(f"S{max(int(np.char.str_len(raw).max(initial=1)), 1)}")
