"""The split unit: what must stay on one side of a calibration/test split.

Queries on the same source video are dependent, so splits are made over source
videos. QVHighlights ``vid`` is ``<youtube_id>_<start>_<end>`` (a 150 s window of
a YouTube video); its unit is the YouTube id, which may itself contain ``_``.
Any other ``vid`` is its own unit.
"""

from __future__ import annotations

import re

import numpy as np
from numpy.typing import ArrayLike, NDArray

_QVH_WINDOW = re.compile(r"^(?P<unit>.+)_\d+(?:\.\d+)?_\d+(?:\.\d+)?$")


def split_units(vid: ArrayLike) -> NDArray[np.str_]:
    """Unit per row: the YouTube id for ``<id>_<start>_<end>`` vids, else the vid itself."""
    v = np.asarray(vid).astype(str, copy=False)  # text already: no copy (68 MB at 1e6)
    if v.size == 0:
        return v.copy()  # callers may freeze the result: never the caller's own array
    uniq, inverse = np.unique(v, return_inverse=True)
    # Regex only over distinct vids (few per unit), then broadcast back.
    units = np.array(
        [m.group("unit") if (m := _QVH_WINDOW.match(u)) else u for u in uniq.tolist()],
        dtype=str,
    )
    return units[inverse]
