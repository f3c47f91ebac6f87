"""Per-row covariates known at test time, for conditional calibration (rule
``conditional``) and the conditional-coverage diagnostics (:mod:`cover.studies.diagnostics`).

* ``duration``: video length T, seconds;
* ``pred_length``: predicted length ``e_hat - s_hat``, seconds;
* ``pred_center``: predicted centre as a fraction of the video, ``(s_hat + e_hat) / 2T``;
* ``query_words``: words in the query text (rows read with their query);
* ``grounder_score``: the grounder's score of its top-1 window (rows that carry scored
  windows).

The prediction's covariates are NaN on refusals (no usable interval); a covariate the
rows do not carry is NaN on every row. The number of truth windows is *not* a covariate:
it is unknown when a new row is certified.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.groups import predicted_length
from cover.data.table import GroundingTable
from cover.ragged import segment_max

COVARIATES = ("duration", "pred_length", "pred_center", "query_words", "grounder_score")
#: Covariates read from the prediction: NaN on a refusal, where no threshold matters.
FROM_PREDICTION = ("pred_length", "pred_center", "grounder_score")


def covariate(table: GroundingTable, name: str) -> NDArray[np.float64]:
    """One covariate of every row (module docstring); an unknown name is a ValueError."""
    if name == "duration":
        return np.asarray(table.duration, dtype=np.float64)
    if name == "pred_length":
        return predicted_length(table)
    if name == "pred_center":
        return np.where(table.has_interval,
                        (table.pred_start + table.pred_end) / (2 * table.duration), np.nan)
    if name == "query_words":
        if table.query is None:
            return np.full(len(table), np.nan)
        return np.array([len(q.split()) if isinstance(q, str) else np.nan
                         for q in table.query], dtype=np.float64)
    if name == "grounder_score":
        w = table.pred_windows
        if w is None or w.values.size == 0:
            return np.full(len(table), np.nan)
        top = segment_max(np.asarray(w.values, dtype=np.float64).reshape(-1, 3)[:, 2],
                          w.offsets, empty=np.nan)
        return np.where(table.has_interval, top, np.nan)
    raise ValueError(f"unknown covariate {name!r}; choose from {', '.join(COVARIATES)}")


def covariate_matrix(table: GroundingTable, names: list[str] | tuple[str, ...]
                     ) -> NDArray[np.float64]:
    """``(rows, len(names))``: :func:`covariate` of each name, as columns."""
    return np.column_stack([covariate(table, c) for c in names]) if names else \
        np.zeros((len(table), 0))


def parse_covariates(text: str, flag: str = "--covariates") -> list[str]:
    """``duration,pred_length`` -> the names, each known and given once (a ValueError
    naming ``flag`` otherwise)."""
    names = [c.strip() for c in text.split(",") if c.strip()]
    if not names:
        raise ValueError(f"{flag} needs at least one covariate: {', '.join(COVARIATES)}")
    bad = [c for c in names if c not in COVARIATES]
    if bad:
        raise ValueError(f"{flag}: unknown covariate {bad[0]!r}; choose from "
                         f"{', '.join(COVARIATES)}")
    if len(set(names)) != len(names):
        raise ValueError(f"{flag}: a covariate is named twice in {text!r}")
    return names
