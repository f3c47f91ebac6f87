"""The built-in groupings of the :class:`~cover.calibrate.Calibrator` (``groups=...``):
``pred_length`` (predicted-length terciles), ``duration`` (buckets) and ``key`` (any
column or input field), registered in :mod:`cover.calibrate.registry` on import. Each
``fit`` learns its cut points from the calibration table and ``assign`` labels any
table with them (see :mod:`cover.calibrate.groups` for the groupings themselves).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.groups import (
    REFUSED,
    TERCILE_LABELS,
    Grouping,
    bin_labels,
    duration_buckets,
    key_values,
    length_terciles,
    predicted_length,
)
from cover.calibrate.registry import Grouping as Registered
from cover.calibrate.registry import register_grouping
from cover.data.table import GroundingTable


def _labels(grouping: Grouping, table: GroundingTable) -> NDArray[np.str_]:
    codes = grouping.codes_of(table)
    names = np.asarray([*grouping.labels, "unknown"], dtype=str)
    return names[np.where(codes < 0, len(grouping.labels), codes)]


def _edges_param(params: Mapping[str, Any], name: str = "edges") -> list[float] | None:
    e = params.get(name)
    if e is None:
        return None
    if not isinstance(e, list) or not all(isinstance(x, (int, float)) and
                                          not isinstance(x, bool) for x in e):
        raise ValueError(f"{name} must be a list of numbers, got {e!r}")
    Grouping("duration", bin_labels(e), tuple(float(x) for x in e))  # validates the edges
    return [float(x) for x in e]


def _only(params: Mapping[str, Any], allowed: set[str], kind: str) -> None:
    extra = sorted(set(params) - allowed)
    if extra:
        raise ValueError(f"grouping {kind!r} takes {', '.join(sorted(allowed)) or 'nothing'}, "
                         f"not {', '.join(extra)}")


def _length_check(params: Mapping[str, Any]) -> dict[str, Any]:
    _only(params, {"edges", "refused"}, "pred_length")
    out: dict[str, Any] = {}
    edges = _edges_param(params)
    if edges is not None:
        if len(edges) != 2:
            raise ValueError(f"pred_length terciles need 2 edges, got {edges}")
        out["edges"] = edges
    if "refused" in params:
        if not isinstance(params["refused"], bool):
            raise ValueError(f"refused must be true or false, got {params['refused']!r}")
        out["refused"] = params["refused"]
    return out


def _length_fit(table: GroundingTable, params: Mapping[str, Any]) -> dict[str, Any]:
    p = _length_check(params)
    values = predicted_length(table)
    edges = p.get("edges") or list(length_terciles(values).edges)
    return {"edges": edges, "refused": bool(np.isnan(values).any())}


def _length_assign(table: GroundingTable, params: Mapping[str, Any]) -> NDArray[np.str_]:
    g = Grouping("pred_length", (*TERCILE_LABELS, REFUSED), tuple(params["edges"]))
    labels = _labels(g, table)
    # A refusal is the whole video at any threshold; without refusals at calibration
    # it borrows the first tercile's label rather than failing as an unseen group.
    return labels if params.get("refused", True) else \
        np.where(labels == REFUSED, TERCILE_LABELS[0], labels)


def _duration_check(params: Mapping[str, Any]) -> dict[str, Any]:
    _only(params, {"edges", "n_buckets"}, "duration")
    out: dict[str, Any] = {}
    edges = _edges_param(params)
    if edges is not None:
        duration_buckets(edges=edges)
        out["edges"] = edges
    if "n_buckets" in params:
        nb = params["n_buckets"]
        if isinstance(nb, bool) or not isinstance(nb, int) or nb < 1:
            raise ValueError(f"n_buckets must be an integer >= 1, got {nb!r}")
        out["n_buckets"] = nb
    return out


def _duration_fit(table: GroundingTable, params: Mapping[str, Any]) -> dict[str, Any]:
    p = _duration_check(params)
    g = duration_buckets(table.duration, edges=p.get("edges"),
                         n_buckets=p.get("n_buckets", 2))
    return {"edges": list(g.edges)}


def _duration_assign(table: GroundingTable, params: Mapping[str, Any]) -> NDArray[np.str_]:
    return _labels(duration_buckets(edges=params["edges"]), table)


def _key_check(params: Mapping[str, Any]) -> dict[str, Any]:
    _only(params, {"field"}, "key")
    f = params.get("field")
    if not isinstance(f, str) or not f:
        raise ValueError("grouping 'key' needs field: the column or input field to group by")
    return {"field": f}


def _key_fit(table: GroundingTable, params: Mapping[str, Any]) -> dict[str, Any]:
    return _key_check(params)


def _key_assign(table: GroundingTable, params: Mapping[str, Any]) -> NDArray[np.str_]:
    return key_values(table, params["field"])


def register_groupings() -> None:
    """Make ``Calibrator(groups="pred_length" | "duration" | "key")`` reach these."""
    register_grouping(Registered("pred_length", _length_fit, _length_assign, _length_check))
    register_grouping(Registered("duration", _duration_fit, _duration_assign, _duration_check))
    register_grouping(Registered("key", _key_fit, _key_assign, _key_check))


register_groupings()
