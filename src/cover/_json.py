"""JSON has no NaN or infinity: COVER writes ``+-inf`` as "inf"/"-inf" and NaN as null."""

from __future__ import annotations

import math
from typing import Any


def to_json_number(x: float) -> float | str | None:
    """``x``, or "inf" / "-inf" for infinities, or None for NaN."""
    if math.isnan(x):
        return None
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def from_json_number(x: Any) -> float:
    """Inverse of :func:`to_json_number`; raises ``ValueError`` on anything else."""
    if x is None:
        return math.nan
    if isinstance(x, str) and x in ("inf", "-inf"):
        return float(x)
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    raise ValueError(f"expected a number, 'inf' or '-inf', got {x!r}")


def json_safe(d: dict[str, Any]) -> dict[str, Any]:
    """Copy of ``d`` with every float value passed through :func:`to_json_number`."""
    return {k: to_json_number(v) if isinstance(v, float) else v for k, v in d.items()}
