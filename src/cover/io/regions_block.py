"""The ``cover`` block of a certified row read back (``cover evaluate``): the calibrator
fields every row of one regions file shares, the status and ``refused`` flag each row
must agree on, its threshold and the reason of an abstained row. Shared by the per-row
reader (:mod:`cover.io.regions_read`) and the bulk ones (:mod:`cover.io.regions_batch`,
:mod:`cover.io.regions_columns`), so each reads a block by the same rules."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover._json import from_json_number
from cover.errors import InputError
from cover.io.jsonl import RawRows, json_text
from cover.row_status import ABSTAINED, CERTIFIED, REFUSED, empty_region_block

#: The ``cover`` block keys every row of one regions file shares (one calibrator wrote them).
META_KEYS = ("score", "rule", "alpha", "k", "n_calibration", "calibration_sha256")
#: Shared keys written only when set: ``relevance`` ("proposals": the SLS signal was built
#: from the scored windows; absent: saliency).
META_OPTIONAL = ("relevance",)


def meta_of(block: dict[str, Any]) -> dict[str, Any]:
    """The calibrator fields of one ``cover`` block: every :data:`META_KEYS` (None when
    absent) and the :data:`META_OPTIONAL` ones it has."""
    return {**{k: block.get(k) for k in META_KEYS},
            **{k: block[k] for k in META_OPTIONAL if block.get(k) is not None}}


def common_meta(raw: RawRows, ref: tuple[dict[str, Any], int] | None = None
                 ) -> tuple[dict[str, Any], int | None]:
    """The calibrator fields shared by every row, and the line they were read from
    (``ref``: those of an earlier batch); a file that mixes calibrators would make one
    coverage number meaningless, so the first differing row is an error."""
    if ref is None:
        if not raw.records:
            return dict.fromkeys(META_KEYS), None
        ref = meta_of(block_of(raw.records[0])), int(raw.lines[0])
    first, first_line = ref
    for rec, line in zip(raw.records, raw.lines.tolist(), strict=True):
        this = meta_of(block_of(rec))
        if this != first:
            key = next(k for k in (*META_KEYS, *META_OPTIONAL) if this.get(k) != first.get(k))
            raise InputError(
                f"{raw.path}:{line} (qid={rec.get('qid')}): cover.{key} is "
                f"{json_text(this.get(key))} but {json_text(first.get(key))} on line "
                f"{first_line}; evaluate the output of one calibrator at a time"
            )
    return first, first_line


def block_of(rec: dict[str, Any]) -> dict[str, Any]:
    """The ``cover`` block of a row (``{}`` when it has none)."""
    block = rec.get("cover")
    return block if isinstance(block, dict) else {}


def threshold_value(x: Any) -> float:
    """``cover.threshold`` as a number (``"inf"`` text read, anything unreadable NaN)."""
    try:
        return from_json_number(x)
    except (ValueError, OverflowError):
        return math.nan


def status_problems(raw: RawRows) -> dict[int, str]:
    """Row -> why its ``cover.status`` / ``cover.refused`` cannot be read: the status is
    ``certified``, ``refused`` or ``abstained`` (the whole video, not answered), or
    ``rejected`` with an empty region, a miss (:mod:`cover.row_status`); ``cover.refused``,
    when given, is a boolean that says the same (``"yes"`` is not true, and a certified row
    is not refused)."""
    why: dict[int, str] = {}
    for i, rec in enumerate(raw.records):
        b = block_of(rec)
        status = b.get("status")
        refused = b.get("refused", status == "refused")
        if empty_region_block(b):  # rejected for its empty region: read as a miss
            if refused is not False:
                why[i] = (f"cover.status is \"rejected\" (empty region) but cover.refused "
                          f"is {json_text(refused)}")
            continue
        if status not in (CERTIFIED, REFUSED, ABSTAINED):
            why[i] = ("cover.status must be \"certified\", \"refused\" or \"abstained\", "
                      f"got {json_text(status)}")
        elif type(refused) is not bool:
            why[i] = f"cover.refused must be true or false, got {json_text(refused)}"
        elif refused is not (status == "refused"):
            why[i] = (f"cover.status is {json_text(status)} but cover.refused is "
                      f"{json_text(refused)}")
    return why


def abstain_reasons(records: list[dict[str, Any]]) -> NDArray[np.object_] | None:
    """Per row, the reason of a row written ``abstained`` (None for the others); None when
    no row abstained."""
    out = np.array([str(b.get("reason", "abstained")) if b.get("status") == "abstained"
                    else None for b in map(block_of, records)], dtype=object)
    return out if any(r is not None for r in out.tolist()) else None


def known_thresholds(got: NDArray[np.float64], want: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Whether each threshold is one of ``want``: a non-finite one exactly, the others to a
    relative 1e-9 (the decimal text certify writes)."""
    finite = want[np.isfinite(want)]
    return np.isin(got, want[~np.isfinite(want)]) | np.isclose(
        got[:, None], finite[None, :], rtol=1e-9, atol=0.0).any(axis=1)


__all__ = ["META_KEYS", "META_OPTIONAL", "abstain_reasons", "block_of", "common_meta",
           "known_thresholds", "meta_of", "status_problems", "threshold_value"]
