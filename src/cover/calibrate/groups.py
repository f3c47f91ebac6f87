"""Groupings for group-conditional (Mondrian) calibration: which group each row is in.

A :class:`Grouping` is fitted on the calibration set and then assigns any row, at
calibration or at certify time, to one of its named groups (SPEC §4, paper Prop. A.3):

* ``pred_length``: terciles of the *predicted* length ``e_hat - s_hat``; the cut points
  are order statistics of the calibration set, and refusals (no predicted length) form
  their own group ``refused``;
* ``duration``: video-duration buckets ``[e_i, e_{i+1})`` (given edges, or equal-count
  cuts of the calibration durations);
* ``key``: any user key (a column or a field of the input rows); its groups are the
  values seen at calibration.

Numeric groups are lower-inclusive bins ``[e_i, e_{i+1})``: row ``x`` is in group
``#{edges <= x}``. A row whose group does not exist (an unseen key, an unknown
duration) gets code ``-1``; :func:`require_known` turns that into a clear error.

>>> g = length_terciles([10.0, 20.0, 30.0, 40.0, 50.0, 60.0, float("nan")])
>>> g.edges, g.labels
((30.0, 50.0), ('short', 'medium', 'long', 'refused'))
>>> g.assign([5.0, 30.0, 55.0, float("nan")]).tolist()
[0, 1, 2, 3]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.data.table import GroundingTable

GroupKind = Literal["pred_length", "duration", "key"]
GROUP_KINDS: tuple[GroupKind, ...] = ("pred_length", "duration", "key")
TERCILE_LABELS = ("short", "medium", "long")
REFUSED = "refused"
#: Table columns a ``key`` grouping can name directly; other names are read from the
#: original input rows (``table.records``).
TABLE_KEYS = ("vid", "qid", "unit")
#: Groupings computed from table columns alone: a reader may drop the input rows.
_FROM_COLUMNS = ("all", "pred_length", "duration")


def reads_input_rows(groups: str) -> bool:
    """Whether a calibrator grouped by ``groups`` may read the original input rows
    (``table.records``): any grouping but those computed from the table's columns."""
    return groups not in _FROM_COLUMNS


def equal_count_edges(values: ArrayLike, n_bins: int, *, drop_empty: bool = True
                      ) -> tuple[float, ...]:
    """Cut points ``e_j = the (r_j + 1)-th smallest`` of the ``m`` finite values,
    ``r_j = floor(j*m/n_bins)``, ``j = 1..n_bins-1`` (integer rank arithmetic): with distinct
    values bin ``[e_j, e_{j+1})`` holds ``r_{j+1} - r_j`` of them. Under ties a cut moves
    to the next distinct value when that puts the count below it nearer ``r_j``; with
    ``drop_empty`` cuts that would leave a bin empty (repeated, or at the minimum) are
    dropped, otherwise all ``n_bins - 1`` are kept."""
    if n_bins < 1:
        raise ValueError(f"the number of bins must be >= 1, got {n_bins}")
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    v = np.sort(v[np.isfinite(v)])
    if v.size == 0:
        if n_bins == 1:
            return ()
        raise ValueError("no finite values to cut into bins")
    ranks = (np.arange(1, n_bins, dtype=np.int64) * v.size) // n_bins
    at = v[ranks]
    below = np.searchsorted(v, at, side="left")
    above = np.searchsorted(v, at, side="right")
    nxt = v[np.minimum(above, v.size - 1)]
    move = (above < v.size) & (np.abs(above - ranks) < np.abs(below - ranks))
    cuts = np.where(move, nxt, at)
    if drop_empty:
        cuts = np.unique(cuts)
        cuts = cuts[cuts > v[0]]
    return tuple(float(x) for x in cuts)


def bin_labels(edges: Sequence[float]) -> tuple[str, ...]:
    bounds = [0.0, *edges, float("inf")]
    return tuple(f"[{lo:g}, {hi:g})" for lo, hi in pairwise(bounds))


@dataclass(frozen=True)
class Grouping:
    """A fitted partition of rows into named groups (see the module docstring).

    ``edges`` (numeric kinds) are non-decreasing cut points; ``labels`` name the groups
    in code order; ``field`` is the key's column or field name (``key`` kind).
    """

    kind: GroupKind
    labels: tuple[str, ...]
    edges: tuple[float, ...] = ()
    field: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in GROUP_KINDS:
            raise ValueError(f"unknown grouping {self.kind!r}; choose one of "
                             f"{', '.join(GROUP_KINDS)}")
        e = np.asarray(self.edges, dtype=np.float64)
        if e.size and (not np.isfinite(e).all() or (np.diff(e) < 0).any()):
            raise ValueError(f"group edges must be finite and non-decreasing, got {self.edges}")
        expected = {"pred_length": len(self.edges) + 2, "duration": len(self.edges) + 1}
        if self.kind in expected and len(self.labels) != expected[self.kind]:
            raise ValueError(f"{self.kind} grouping with {len(self.edges)} edges needs "
                             f"{expected[self.kind]} labels, got {len(self.labels)}")
        if self.kind == "key" and not self.field:
            raise ValueError("a key grouping needs the name of its field")
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(f"group labels must be distinct, got {self.labels}")

    @property
    def n_groups(self) -> int:
        return len(self.labels)

    @property
    def name(self) -> str:
        """``pred_length``, ``duration`` or ``key:<field>``."""
        return f"key:{self.field}" if self.kind == "key" else self.kind

    def assign(self, values: ArrayLike) -> NDArray[np.int64]:
        """Group code of each row; ``-1`` where the row fits no group.

        ``values``: predicted lengths (NaN = refusal), durations, or key values (text).
        """
        if self.kind == "key":
            v = np.asarray(values).astype(str).reshape(-1)
            known = np.asarray(self.labels, dtype=str)
            if known.size == 0:
                return np.full(v.size, -1, dtype=np.int64)
            order = np.argsort(known)
            pos = np.searchsorted(known[order], v)
            pos_c = np.minimum(pos, known.size - 1)
            hit = known[order][pos_c] == v
            return np.where(hit, order[pos_c], -1).astype(np.int64)
        x = np.asarray(values, dtype=np.float64).reshape(-1)
        codes = np.searchsorted(np.asarray(self.edges, dtype=np.float64), x, side="right")
        codes = codes.astype(np.int64)
        if self.kind == "pred_length":
            return np.where(np.isnan(x), self.n_groups - 1, codes)
        return np.where(np.isfinite(x) & (x > 0), codes, -1)

    def values_of(self, table: GroundingTable) -> NDArray[Any]:
        """The column this grouping reads, taken from ``table``."""
        if self.kind == "pred_length":
            return predicted_length(table)
        if self.kind == "duration":
            return table.duration
        return key_values(table, self.field or "")

    def codes_of(self, table: GroundingTable) -> NDArray[np.int64]:
        return self.assign(self.values_of(table))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "labels": list(self.labels), "edges": list(self.edges),
                "field": self.field}

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> Grouping:
        return cls(kind=doc["kind"], labels=tuple(str(x) for x in doc["labels"]),
                   edges=tuple(float(x) for x in doc.get("edges", ())),
                   field=doc.get("field"))


def predicted_length(table: GroundingTable) -> NDArray[np.float64]:
    """``e_hat - s_hat`` per row; NaN for a refusal (no usable interval)."""
    return np.where(table.has_interval, table.pred_end - table.pred_start, np.nan)


def length_terciles(pred_length: ArrayLike) -> Grouping:
    """Predicted-length terciles with cut points from the calibration set (NaN = refusal,
    its own group)."""
    return Grouping("pred_length", (*TERCILE_LABELS, REFUSED),
                    equal_count_edges(pred_length, 3, drop_empty=False))


def duration_buckets(duration: ArrayLike | None = None, *, edges: Sequence[float] | None = None,
                     n_buckets: int = 2) -> Grouping:
    """Video-duration buckets ``[e_i, e_{i+1})``: the given ``edges`` (seconds), or
    ``n_buckets`` equal-count cuts of the calibration ``duration``."""
    if edges is None:
        if duration is None:
            raise ValueError("duration buckets need the calibration durations or edges")
        edges = equal_count_edges(duration, n_buckets)
    e = tuple(float(x) for x in edges)
    if any(x <= 0 for x in e):
        raise ValueError(f"duration edges must be > 0 seconds, got {list(e)}")
    return Grouping("duration", bin_labels(e), e)


def key_groups(values: ArrayLike, field: str) -> Grouping:
    """One group per distinct value of a user key seen at calibration (sorted)."""
    v = np.unique(np.asarray(values).astype(str))
    return Grouping("key", tuple(str(x) for x in v), (), field)


def key_values(table: GroundingTable, field: str) -> NDArray[np.str_]:
    """The key ``field`` of every row as text: a table column (``vid``, ``qid``, ``unit``)
    or a field of the original input rows. A row without the field is an error."""
    if field in TABLE_KEYS:
        return np.asarray(table.units if field == "unit" else getattr(table, field)).astype(str)
    if table.records is None:
        raise ValueError(f"group key {field!r} is not a table column "
                         f"({', '.join(TABLE_KEYS)}) and this table keeps no input rows")
    # Parsed JSON records: a per-row field lookup is the one accepted loop over rows.
    missing = object()
    got = [r.get(field, missing) if isinstance(r, dict) else missing for r in table.records]
    bad = [i for i, x in enumerate(got) if x is missing]
    if bad:
        raise ValueError(f"{table.where(bad[0])}: no field {field!r} to group by "
                         f"({len(bad)} row(s) lack it)")
    return np.asarray([str(x) for x in got]).astype(str)


def require_known(codes: NDArray[np.int64], grouping: Grouping, values: ArrayLike,
                  where: Any = None) -> None:
    """Raise a clear error if any row fits no group fitted at calibration.

    ``where(i)`` (e.g. :meth:`GroundingTable.where`) names row ``i`` in the message.
    """
    bad = np.flatnonzero(codes < 0)
    if bad.size == 0:
        return
    v = np.asarray(values).reshape(-1)
    shown = sorted({str(x) for x in v[bad][:1000].tolist()})[:5]
    first = where(int(bad[0])) if where is not None else f"row {int(bad[0]) + 1}"
    if grouping.kind == "key":
        what = (f"group(s) {', '.join(shown)} of key {grouping.field!r} were not seen at "
                f"calibration (known: {', '.join(grouping.labels[:10])}"
                f"{', ...' if grouping.n_groups > 10 else ''})")
    else:
        what = f"{grouping.kind} {', '.join(shown)} fits no group (unknown or not positive)"
    raise ValueError(f"{first}: {what}; {bad.size} row(s) cannot be certified by this "
                     "group-conditional calibrator. Recalibrate with these groups present.")
