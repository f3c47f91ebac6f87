"""Each row's thresholds from a fitted :class:`cover.calibrate.calibrator.Calibrator`:
``(lam_start, lam_end)`` by the row's group (or its covariates for a per-row rule), and
each row's conformal p-value by its group when the calibration scores were kept.

A row whose group was not seen at calibration is an error naming the row and the known
groups (the first ten of them)."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.calibrator_views import FittedViews
from cover.calibrate.registry import ALL, Grouping
from cover.data.table import GroundingTable
from cover.regions import Regions, build_regions


def first_names(names: list[str], limit: int = 10) -> str:
    """``a, b, c`` or ``a, b, ... and 90 more``: a message stays readable with many groups."""
    shown = ", ".join(names[:limit])
    return shown if len(names) <= limit else f"{shown}, ... and {len(names) - limit} more"


class RowThresholds(FittedViews):
    """The per-row side of a fitted calibrator (the Calibrator dataclass holds the fields)."""

    score: str
    min_scale: float
    group_params_: dict[str, Any]
    score_sketch_: dict[str, Any] | None
    _alpha: Fraction
    _grouping: Grouping

    def _regions_of(self, table: GroundingTable) -> Callable[[Any], Regions]:
        """``lam per row -> regions`` of ``table`` (rules that read regions, p-values)."""
        return lambda lam: build_regions(table, self.score, lam, min_scale=self.min_scale)

    def row_lams(self, table: GroundingTable) -> tuple[NDArray[np.float64],
                                                       NDArray[np.float64] | None]:
        """``(lam_start, lam_end)`` per row of ``table`` (``lam_end`` None for one-parameter
        rules); a row whose group was not seen at calibration is an error."""
        self._require_fitted()
        one_side = self._spec.sides == ("both",) and not self._spec.needs & {"sides"}
        if self._spec.per_row is not None:  # a threshold per row from its covariates
            lam = self._spec.per_row.lams(table, self.params_, float(self._alpha))
            return lam, (None if one_side else lam)
        if self.groups == "all" and len(self.thresholds_) == 1:
            # One group: no per-row labels (a text array and a text search per row).
            (record,) = self.thresholds_.values()
            ls, le = self._spec.lams(record, self.params_)
            n = len(table)
            # Read-only views of one value: build_regions treats them as scalars.
            return (np.broadcast_to(np.float64(ls), (n,)),
                    None if one_side else np.broadcast_to(np.float64(le), (n,)))
        labels = np.asarray(self._grouping.assign(table, self.group_params_)).astype(str)
        known = np.isin(labels, list(self.thresholds_))
        if not known.all():
            i = int(np.flatnonzero(~known)[0])
            raise ValueError(
                f"{table.where(i)}: group {labels[i]} ({self.groups}) was not seen at "
                f"calibration (known groups: {first_names(sorted(self.thresholds_))}); "
                f"{int((~known).sum())} row(s) affected")
        names = sorted(self.thresholds_)
        pairs = np.array([self._spec.lams(self.thresholds_[g], self.params_) for g in names],
                         dtype=np.float64).reshape(-1, 2)
        idx = np.searchsorted(np.array(names), labels)
        lam_s, lam_e = pairs[idx, 0], pairs[idx, 1]
        return lam_s, (None if one_side else lam_e)

    def _p_values(self, table: GroundingTable) -> NDArray[np.float64]:
        """Each row's conformal p-value (:mod:`cover.calibrate.pvalues`), by its group."""
        from cover.calibrate.pvalues import p_values

        assert self.score_sketch_ is not None
        labels = (np.full(len(table), ALL) if self.groups == ALL else
                  np.asarray(self._grouping.assign(table, self.group_params_)).astype(str))
        out = np.ones(len(table))
        for g, entry in self.score_sketch_.items():
            rows = np.flatnonzero(labels == g)
            if rows.size:
                out[rows] = p_values(self._regions_of(table.take(rows)), entry, rows.size)
        return out
