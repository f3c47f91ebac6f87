"""What certify's output adds to each row, named once for every format and path: the
``cover`` block's calibrator fields (:func:`calibrator_fields`), the columns of its CSV
output (:data:`COVER_COLUMNS`, :data:`P_VALUE_COLUMN`), and the refusal of an input that
already has one of them (:func:`refuse_certified`: certify's own output given back)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cover.calibrate.calibrator import Calibrator
from cover.data.relevance import SALIENCY
from cover.errors import InputError

__all__ = ["CERTIFIED_FIELDS", "COVER_COLUMNS", "P_VALUE_COLUMN", "calibrator_fields",
           "refuse_certified"]

#: The columns certify's CSV output appends to every row: the ``cover`` block,
#: flattened (region as JSON).
COVER_COLUMNS = ("cover_status", "cover_region", "cover_refused", "cover_duration",
                 "cover_threshold", "cover_threshold_end", "cover_in_calibration",
                 "cover_reason")
#: The column after them when the calibrator was fitted with ``--keep-scores``: each
#: row's conformal p-value (``cover.p_value``), empty for a rejected row.
P_VALUE_COLUMN = "cover_p_value"
#: The fields certify's output adds to a row, in any of its formats.
CERTIFIED_FIELDS = frozenset({"cover", *COVER_COLUMNS, P_VALUE_COLUMN})


def refuse_certified(source: str | Path, fields: Iterable[str]) -> None:
    """An :class:`InputError` when ``fields`` (an input's columns, or its first row's keys)
    hold one that certify's output adds (:data:`CERTIFIED_FIELDS`: the ``cover`` block,
    or a column of its CSV output). Such an input is certify's own output, refused on
    every path (its block was replaced in JSON lines, kept twice in CSV)."""
    got = next((f for f in fields if f in CERTIFIED_FIELDS), None)
    if got is not None:
        raise InputError(f"{source}: the input already has a {got!r} field (is it the output "
                         "of cover certify?); certify the original predictions")



def calibrator_fields(cal: Calibrator, **extra: Any) -> dict[str, Any]:
    """What a reader of the regions needs to trust them: the calibrator's score, rule,
    alpha, k and n, then ``extra``, then its relevance when not saliency."""
    meta = {"score": cal.score, "rule": cal.rule, "alpha": float(cal.alpha_fraction),
            "k": cal.k_, "n_calibration": cal.n_, **extra}
    if cal.relevance != SALIENCY:  # absent means saliency: older files keep their bytes
        meta["relevance"] = cal.relevance
    return meta
