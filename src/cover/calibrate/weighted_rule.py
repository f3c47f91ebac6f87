"""Weighted split conformal inside the :class:`~cover.calibrate.Calibrator` (rule
``weighted``, grouping ``covariate_cells``), with the likelihood ratio estimated from one
covariate (video duration by default) against an unlabelled target sample.

A saved calibrator cannot see the test rows it will certify, so the per-row threshold
``q(w(x))`` of :func:`~cover.calibrate.weighted.weighted_conformal` is stored as a step
function of the covariate: cells ``[lo, hi]`` cut at equal-count calibration quantiles
(at most ``max_cells``; every cell holds calibration rows), each certified at
``q(max(w(lo), w(hi)))``. The ratio is monotone in the covariate (logistic, degree 1), so
that is the largest threshold any ``x`` in the cell would get: within the calibration
range the cells are conservative, never looser than exact weighted conformal. Rows
beyond the calibration range take the nearest cell (the ratio is not extrapolated);
the positivity report names the target rows that are outside or unsupported.

Without a target sample the ratio is 1 and the rule is split conformal.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import pairwise
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.calibrate.groups import equal_count_edges, predicted_length
from cover.calibrate.ratio import LogisticRatio, fit_logistic_ratio
from cover.calibrate.registry import (
    Grouping,
    GroupThreshold,
    RuleFit,
    RuleInput,
    RuleSpec,
    Side,
    register_grouping,
    register_rule,
)
from cover.calibrate.weighted import PositivityReport, weighted_conformal
from cover.data.table import GroundingTable

COVARIATES = ("duration", "pred_length")
DEFAULT_MAX_CELLS = 32
_CELL = re.compile(r"^\[(.+), (.+)\]$")


def covariate_of(table: GroundingTable, covariate: str) -> NDArray[np.float64]:
    """Video duration or predicted length (NaN for refusals) of every row."""
    if covariate == "duration":
        return table.duration
    if covariate == "pred_length":
        return predicted_length(table)
    raise ValueError(f"unknown covariate {covariate!r}; choose one of {', '.join(COVARIATES)}")


def _cell_label(lo: float, hi: float) -> str:
    return f"[{lo!r}, {hi!r}]"


def cell_bounds(label: str) -> tuple[float, float]:
    """``(lo, hi)`` of a ``covariate_cells`` label."""
    m = _CELL.match(label)
    if m is None:
        raise ValueError(f"{label!r} is not a covariate cell label (from groups "
                         "'covariate_cells')")
    return float(m.group(1)), float(m.group(2))


# ---- the grouping ---------------------------------------------------------------------
def _cells_check(params: Mapping[str, Any]) -> dict[str, Any]:
    extra = sorted(set(params) - {"covariate", "max_cells", "edges", "range"})
    if extra:
        raise ValueError(f"grouping 'covariate_cells' does not take {', '.join(extra)}")
    cov = params.get("covariate", "duration")
    if cov not in COVARIATES:
        raise ValueError(f"covariate must be one of {', '.join(COVARIATES)}, got {cov!r}")
    mc = params.get("max_cells", DEFAULT_MAX_CELLS)
    if isinstance(mc, bool) or not isinstance(mc, int) or mc < 1:
        raise ValueError(f"max_cells must be an integer >= 1, got {mc!r}")
    out: dict[str, Any] = {"covariate": cov, "max_cells": mc}
    if "edges" in params or "range" in params:
        e, r = params.get("edges"), params.get("range")
        if not (isinstance(e, list) and isinstance(r, list) and len(r) == 2
                and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                        and math.isfinite(x) for x in [*e, *r])
                and r[0] <= r[1] and all(r[0] < x <= r[1] for x in e) and e == sorted(set(e))):
            raise ValueError("edges must be increasing numbers inside range [lo, hi]")
        out["edges"], out["range"] = [float(x) for x in e], [float(x) for x in r]
    return out


def _cells_fit(table: GroundingTable, params: Mapping[str, Any]) -> dict[str, Any]:
    p = _cells_check({k: v for k, v in params.items() if k not in ("edges", "range")})
    x = covariate_of(table, p["covariate"])
    x = x[np.isfinite(x)]
    if x.size == 0:
        raise ValueError(f"no calibration row has a {p['covariate']} to cut into cells")
    lo, hi = float(x.min()), float(x.max())
    n_cells = min(p["max_cells"], x.size)
    edges = sorted({e for e in equal_count_edges(x, n_cells) if e > lo})
    return {**p, "edges": edges, "range": [lo, hi]}


def _cells_assign(table: GroundingTable, params: Mapping[str, Any]) -> NDArray[np.str_]:
    edges = np.asarray(params["edges"], dtype=np.float64)
    lo, hi = params["range"]
    bounds = np.concatenate(([lo], edges, [hi]))
    labels = np.array([_cell_label(float(a), float(b)) for a, b in pairwise(bounds)],
                      dtype=str)
    x = covariate_of(table, params["covariate"])
    # Beyond the calibration range: the nearest cell (NaN, i.e. a refusal: the first).
    code = np.searchsorted(edges, np.nan_to_num(x, nan=lo), side="right")
    return labels[code]


register_grouping(Grouping("covariate_cells", _cells_fit, _cells_assign, _cells_check))


# ---- the rule ---------------------------------------------------------------------------
def _ratio_of(params: Mapping[str, Any]) -> LogisticRatio | None:
    r = params.get("ratio")
    if r is None:
        return None
    return LogisticRatio(tuple(float(c) for c in r["coef"]), float(r["center"]),
                         float(r["scale"]), bool(r["log"]), int(r["n_cal"]), int(r["n_test"]),
                         float(r["range"][0]), float(r["range"][1]))


def _check(params: Mapping[str, Any]) -> dict[str, Any]:
    extra = sorted(set(params) - {"ratio"})
    if extra:
        raise ValueError(f"rule 'weighted' takes ratio (a fitted likelihood-ratio model or "
                         f"null), not {', '.join(extra)}")
    r = params.get("ratio")
    if r is None:
        return {"ratio": None}
    try:
        model = _ratio_of(params)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ValueError(f"ratio is not a likelihood-ratio model ({exc})") from None
    assert model is not None
    if model.degree != 1 or not all(math.isfinite(c) for c in model.coef) or \
            not model.scale > 0 or model.n_cal < 1 or model.n_test < 1:
        raise ValueError("ratio must be a finite degree-1 logistic model")
    return {"ratio": model.to_dict()}


def weighted_rule(data: RuleInput, alpha: Fraction, params: Mapping[str, Any]) -> RuleFit:
    """Per covariate cell ``[lo, hi]``: ``q = smallest S_(j) with C_j >= (1 - alpha)(W + w*)``,
    ``w* = max(w(lo), w(hi))`` (Tibshirani et al. 2019 at the cell's largest ratio)."""
    if data.weights is None:
        raise ValueError("rule 'weighted' needs the calibration rows' likelihood ratios")
    ratio = _ratio_of(params)
    labels, codes = np.unique(data.groups, return_inverse=True)
    bounds = np.array([cell_bounds(str(g)) for g in labels], dtype=np.float64)
    w_star = (np.ones(labels.size) if ratio is None
              else np.maximum(ratio(bounds[:, 0]), ratio(bounds[:, 1])))
    th = weighted_conformal(data.scores, data.weights, w_star, alpha=alpha)
    n = np.bincount(codes, minlength=labels.size)
    records = {str(g): GroupThreshold(int(n[i]), {"both": Side(float(th.values[i]), None)})
               for i, g in enumerate(labels)}
    rep = th.report
    report = {"likelihood ratio": "1 (no target sample: split conformal)" if ratio is None
              else "logistic on " + ("log " if ratio.log else "") + "covariate",
              "effective sample size": f"{rep.ess:.1f} of {rep.n_calibration}",
              "cells": int(labels.size),
              "cells without a finite threshold": int(rep.unsupported.sum())}
    return RuleFit(records, report=report)


register_rule(RuleSpec(
    "weighted", weighted_rule,
    "weighted split conformal (Tibshirani et al. 2019) with likelihood ratios of one "
    "covariate (default: video duration) against a target sample, per covariate cell",
    defaults={"ratio": None}, check_params=_check, needs=frozenset({"weights"})))


# ---- fitting it from tables ---------------------------------------------------------------
@dataclass(frozen=True)
class WeightedSetup:
    """Everything :class:`~cover.calibrate.Calibrator` needs for rule ``weighted``:
    ``Calibrator(rule="weighted", groups="covariate_cells", group_params=group_params,
    params=params).fit(table, weights=weights)``; ``report`` is the positivity report of
    the target sample (None without one)."""

    params: dict[str, Any]
    group_params: dict[str, Any]
    weights: NDArray[np.float64]
    report: PositivityReport | None = None
    ratio: LogisticRatio | None = field(default=None, repr=False)


def weighted_setup(cal_table: GroundingTable, target: ArrayLike | None = None, *,
                   covariate: str = "duration", log: bool | None = None,
                   alpha: Any = 0.1, max_cells: int = DEFAULT_MAX_CELLS,
                   scores: ArrayLike | None = None) -> WeightedSetup:
    """Estimate ``w(x)`` from ``covariate`` of the calibration rows against ``target``
    (the covariate of unlabelled target rows; ``log`` defaults to True for duration) and
    return the Calibrator settings. With ``scores`` (calibration scores) the positivity
    report of the target rows is computed too."""
    x = covariate_of(cal_table, covariate)
    gp = {"covariate": covariate, "max_cells": max_cells}
    if target is None:
        return WeightedSetup({"ratio": None}, gp, np.ones(len(cal_table)))
    t = np.asarray(target, dtype=np.float64).reshape(-1)
    t = t[np.isfinite(t)]
    use_log = covariate == "duration" if log is None else log
    fin = np.isfinite(x)
    ratio = fit_logistic_ratio(x[fin], t, degree=1, log=use_log)
    lo, hi = float(np.min(x[fin])), float(np.max(x[fin]))
    # Calibration rows without the covariate (a refusal's predicted length) get weight 1.
    w = np.where(fin, ratio(np.clip(np.nan_to_num(x, nan=lo), lo, hi)), 1.0)
    report = None
    if scores is not None:
        report = weighted_conformal(scores, w, ratio(np.clip(t, lo, hi)), alpha=alpha,
                                    test_covariate=t, cal_covariate=x[fin]).report
    return WeightedSetup({"ratio": ratio.to_dict()}, gp, w, report, ratio)
