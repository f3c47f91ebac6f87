"""The rules of a ``cover certify`` row that ``cover evaluate`` reads, beyond its numbers
(:func:`cover.io.regions_jsonl.regions_from_rows` applies them on every path): a status
evaluate knows and a ``refused`` flag that agrees with it, and, for CSV regions whose
calibrator is given apart from them, thresholds that calibrator can give."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover._json import from_json_number
from cover.io import fields
from cover.io.jsonl import RawRows, json_text
from cover.row_status import empty_region_block


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


#: The ``cover.status`` of a row evaluate reads (``rejected`` rows are only counted;
#: ``abstained`` rows are the whole video, not answered: :mod:`cover.row_status`).
STATUSES = ("certified", "refused", "abstained")


def status_problems(raw: RawRows) -> dict[int, str]:
    """Row -> why its ``cover.status`` / ``cover.refused`` cannot be read: the status is
    one of :data:`STATUSES` (or ``rejected`` with an empty region, a miss:
    :mod:`cover.row_status`); ``cover.refused``, when given, is a boolean that says the
    same (``"yes"`` is not true, and a certified row is not refused)."""
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
        if status not in STATUSES:
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
    no row abstained. ``records`` are rows or their ``cover`` blocks."""
    blocks = [block_of(r) if "cover" in r else r for r in records]
    out = np.array([str(b.get("reason", "abstained")) if b.get("status") == "abstained"
                    else None for b in blocks], dtype=object)
    return out if any(r is not None for r in out.tolist()) else None


@dataclass(frozen=True)
class Thresholds:
    """The start-side thresholds a calibrator gives (one per group) and how to name it."""

    values: NDArray[np.float64]
    source: str


def calibrator_thresholds(cal: Any, source: str) -> Thresholds:
    """:class:`Thresholds` of a fitted :class:`cover.calibrate.calibrator.Calibrator`
    (``cover.threshold`` of a row is the start side's, as certify writes it)."""
    vals = [lam_start for lam_start, _ in cal.group_lams().values()]
    return Thresholds(np.unique(np.array(vals, dtype=np.float64)), source)


def check_thresholds(raw: RawRows, want: Thresholds) -> None:
    """Reject the rows whose ``cover.threshold`` is none of ``want``'s: they were
    certified by another calibrator (another alpha), whose band would be wrong."""
    got = np.array([threshold_value(block_of(r).get("threshold")) for r in raw.records], np.float64)
    v = want.values
    ok = np.isin(got, v[~np.isfinite(v)]) | np.isclose(
        got[:, None], v[np.isfinite(v)][None, :], rtol=1e-9, atol=0.0).any(axis=1)
    shown = ", ".join(f"{x:.6g}" for x in v[:5]) + (", ..." if v.size > 5 else "")
    fields.reject_rows(raw, {
        int(i): f"cover.threshold {got[i]:.6g} is not a threshold of the calibrator "
                f"{want.source} ({shown}): were these regions certified with another one?"
        for i in np.flatnonzero(~ok).tolist()})


