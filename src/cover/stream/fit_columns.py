"""What a streamed calibration keeps (:mod:`cover.stream.calibrate`): the per-row columns
grown a batch at a time (:class:`Parts`), the result (:class:`StreamedFit`: the scores,
the slim table they belong to, the problems tallied) and each vid's unit as a code
(:func:`unit_codes`, which ``cover evaluate``'s per-video sums read too)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.relevance import SALIENCY
from cover.data.table import GroundingTable, raw_ids
from cover.data.units import split_units
from cover.errors import InputError, ProblemTally
from cover.io.gt_compact import Column
from cover.io.narrow import narrow_int, sorted_unique
from cover.scores import FAMILY_INPUT, Scores, require_family_input
from cover.utf8 import as_bytes, as_text


@dataclass
class Parts:
    """Per-batch arrays appended to one growing column each (:class:`Column`): no list
    of small arrays pinning the allocator's blocks a batch at a time, and no
    concatenation at the end (each column is trimmed in place as it is taken)."""

    cols: dict[str, Column] = field(default_factory=dict)
    #: Rows expected (a Parquet file's count): each column is sized for them at once.
    rows: int = 0

    def add(self, **arrays: NDArray[np.generic] | None) -> None:
        for k, a in arrays.items():
            if a is not None:
                self.cols.setdefault(k, Column(self.rows)).append(a)

    def get(self, key: str, dtype: type) -> NDArray[Any]:
        col = self.cols.pop(key, None)
        return np.empty(0, dtype=dtype) if col is None else col.array(dtype)


@dataclass
class StreamedFit:
    """What a streamed calibration kept: the scores, the slim table they belong to
    (qid, vid, duration, predicted window) and the problems found on the way, tallied
    (:class:`~cover.errors.ProblemTally`: counts and the first few, bounded memory)."""

    scores: Scores | None
    table: GroundingTable
    problems: ProblemTally
    batches: int
    #: The score families some row has the input of (:mod:`cover.scores`).
    families: set[str] = field(default_factory=set)
    #: The whole joined table, when the rows were read as one batch and kept (the
    #: scores are then computed from it when needed).
    whole: GroundingTable | None = None
    #: Where the relevance signal of the rows came from (what the calibrator records).
    relevance: str = SALIENCY
    #: When given, the table's vids are codes into these (sorted, distinct, UTF-8): a
    #: stream keeps 1-4 bytes a row, not the text (:meth:`vid_text`, :meth:`row_units`).
    vids: NDArray[np.bytes_] | None = None

    def vid_text(self) -> NDArray[np.str_]:
        """The vid of each row of ``table`` as text."""
        if self.vids is None:
            return self.table.vid
        return as_text(self.vids[raw_ids(self.table, "vid")])

    def row_units(self) -> NDArray[Any]:
        """The unit of each row of ``table`` (:attr:`GroundingTable.units`): text, or, when
        the vids are codes, the rank of each unit's text (grouped and ordered alike, so
        every sum over units is the same)."""
        if self.vids is None:
            return self.table.units
        return unit_codes(self.vids)[raw_ids(self.table, "vid")]

    def require_family(self, family: str, source: str) -> None:
        """An :class:`InputError` naming ``source`` when no row carries ``family``'s
        input (:func:`cover.scores.require_family_input`, whose words a streamed fit
        repeats from the families its batches carried)."""
        if self.whole is not None:
            require_family_input(self.whole, family, source)
        elif family not in self.families:
            others = ", ".join(f for f in FAMILY_INPUT if f != family and f in self.families)
            hint = f"; choose another family ({others})" if others else ""
            raise InputError(f"{source}: score family {family} needs {FAMILY_INPUT[family]}, "
                             f"and none of the {len(self.table)} rows has one{hint}")


#: Vids made text (4 bytes a character) this many at a time.
_UNIT_SLICE = 1 << 16


def unit_codes(vids: NDArray[np.bytes_]) -> NDArray[np.integer]:
    """Per vid (UTF-8), its unit (:func:`cover.data.units.split_units`) as the rank of
    the unit among the units of ``vids``: grouped and ordered as the text would be (byte
    order is code-point order). Vids are made text a slice at a time."""
    units = [as_bytes(split_units(as_text(vids[a:a + _UNIT_SLICE])))
             for a in range(0, vids.size, _UNIT_SLICE)]
    width = max((u.dtype.itemsize for u in units), default=1)
    joined = np.zeros(vids.size, dtype=f"S{width}")
    at = 0
    while units:  # each slice let go once copied
        u = units.pop(0)
        joined[at:at + u.size] = u
        at += u.size
    return narrow_int(sorted_unique(joined)[1])  # np.unique's inverse at a lower peak


__all__ = ["Parts", "StreamedFit", "unit_codes"]
