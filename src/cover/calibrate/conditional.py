"""Rule ``conditional``: coverage over a class of covariate shifts (Gibbs, Cherian &
Candès 2023), a threshold per row from its covariates.

The function class is ``F = {x -> beta_0 + sum_j beta_j x_j}``, linear in the chosen
covariates (:mod:`cover.calibrate.covariates`: ``duration``, ``pred_length``,
``pred_center``, ``query_words``, ``grounder_score``; default ``duration,pred_length``).
A row ``x`` is certified at the conservative cutoff

    lam(x) = g_inf(x),  g_inf = argmin_{g in F} sum_i l_tau(S_i - g(X_i)) - tau g(x),

the augmented quantile regression (``tau = 1 - alpha``) with the row's own score imputed
above the fit (:mod:`cover.calibrate.conditional_lp` derives it and states both
variants). Guarantee (unrandomised variant, the paper's Theorem 2): for every
non-negative ``f`` in ``F``, ``E[f(X) 1{Y in C(X)}] >= (1 - alpha) E[f(X)]``, i.e.
coverage >= 1 - alpha under every covariate shift whose density ratio is linear in the
covariates; with only the intercept this is split conformal. The randomised variant
(exact ``1 - alpha``) draws ``U ~ Unif[-alpha, 1 - alpha]`` per row; COVER certifies the
conservative one, which is deterministic. It does *not* guarantee coverage conditional
on a shift outside ``F`` (e.g. conditional on a narrow band of one covariate, or on a
property not in the covariates, such as the number of truth windows).

Certifying needs the calibration design (covariates and scores of the calibration rows),
so it is saved in the calibrator file as ``params.design``; a new row costs one LP with
``n`` bounded variables and ``1 + #covariates`` equality constraints (HiGHS dual simplex;
measured in ``bench/results-conditional.md``: a few ms at ``n`` in the hundreds). Rows
with the same covariates share one LP.

Refused calibration rows (score ``-inf``: always covered, their region is the whole
video) are left out of the design: the guarantee is over the rows with a prediction,
and a refusal is covered anyway. A refused row is certified as the whole video whatever
its threshold; it is given the summary threshold (the cutoff at the mean calibration
covariates), which is also the ``thresholds.all.value`` of the file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover._json import from_json_number, to_json_number
from cover.calibrate.conditional_lp import cutoff, cutoffs, design_matrix, standardiser
from cover.calibrate.covariates import COVARIATES, FROM_PREDICTION, covariate_matrix
from cover.calibrate.registry import (
    ALL,
    GroupThreshold,
    PerRow,
    RuleFit,
    RuleInput,
    RuleSpec,
    Side,
    register_rule,
)
from cover.data.table import GroundingTable

DEFAULT_COVARIATES = ("duration", "pred_length")


def _check(params: Mapping[str, Any]) -> dict[str, Any]:
    """``covariates`` (known names, once each) and ``design`` (null before fitting; else
    ``{"x": rows of finite covariates, "scores": finite numbers or "inf"}``)."""
    extra = sorted(set(params) - {"covariates", "design"})
    if extra:
        raise ValueError(f"rule 'conditional' takes covariates and design, not {', '.join(extra)}")
    cov = params.get("covariates", list(DEFAULT_COVARIATES))
    if isinstance(cov, str):
        cov = [c.strip() for c in cov.split(",")]
    if not isinstance(cov, (list, tuple)) or not cov or not all(c in COVARIATES for c in cov) \
            or len(set(cov)) != len(cov):
        raise ValueError(f"covariates must name each of some of {', '.join(COVARIATES)} "
                         f"once, got {cov!r}")
    out: dict[str, Any] = {"covariates": list(cov), "design": None}
    d = params.get("design")
    if d is None:
        return out
    if not isinstance(d, dict) or set(d) != {"x", "scores"} or not isinstance(d["x"], list) \
            or not isinstance(d["scores"], list) or len(d["x"]) != len(d["scores"]) \
            or not d["x"]:
        raise ValueError("design must hold x (one row of covariates per calibration row) "
                         "and scores (one per row), of the same length >= 1")
    k = len(cov)
    for i, row in enumerate(d["x"]):
        if not isinstance(row, list) or len(row) != k or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                for v in row):
            raise ValueError(f"design.x[{i}] is not {k} finite number(s)")
    for i, s in enumerate(d["scores"]):
        try:
            v = from_json_number(s)
        except ValueError:
            v = math.nan
        if math.isnan(v) or v == -math.inf:
            raise ValueError(f"design.scores[{i}] is not a number or 'inf'")
    out["design"] = {"x": [[float(v) for v in row] for row in d["x"]],
                     "scores": [to_json_number(from_json_number(s)) for s in d["scores"]]}
    return out


def _fitted(params: Mapping[str, Any]) -> tuple[NDArray[np.float64], NDArray[np.float64],
                                                NDArray[np.float64], NDArray[np.float64]]:
    """``(phi_cal, scores, center, scale)`` of a fitted design."""
    d = params["design"]
    x = np.asarray(d["x"], dtype=np.float64).reshape(len(d["x"]), -1)
    scores = np.array([from_json_number(s) for s in d["scores"]], dtype=np.float64)
    center, scale = standardiser(x)
    return design_matrix(x, center, scale), scores, center, scale


def _summary(phi_cal: NDArray[np.float64], scores: NDArray[np.float64], alpha: float) -> float:
    """The cutoff at the mean calibration covariates (standardised: all zero)."""
    phi = np.zeros(phi_cal.shape[1])
    phi[0] = 1.0
    return cutoff(phi_cal, scores, phi, 1.0 - alpha)


def conditional_rule(data: RuleInput, alpha: Fraction, params: Mapping[str, Any]) -> RuleFit:
    """Keep the design (covariates and scores of the rows with a prediction) and the
    summary cutoff; the per-row cutoffs come at certify time (:func:`row_lams`)."""
    if data.features is None:
        raise ValueError("rule 'conditional' needs the calibration rows' covariates")
    x, s = data.features, data.scores
    use = s > -np.inf
    bad = use & ~np.isfinite(x).all(axis=1)
    if bad.any():
        j = int(np.flatnonzero(~np.isfinite(x[bad][0]))[0])
        raise ValueError(f"calibration row {int(np.flatnonzero(bad)[0])}: covariate "
                         f"{params['covariates'][j]} is not known ({int(bad.sum())} row(s) "
                         "without it); choose covariates every row carries")
    if not use.any():
        raise ValueError("every calibration row is a refusal: no design to fit")
    design = {"x": x[use].tolist(), "scores": [to_json_number(float(v)) for v in s[use]]}
    learned = {"design": design}
    phi, scores, _, _ = _fitted({**params, **learned})
    value = _summary(phi, scores, float(alpha))
    report = {"covariates": ", ".join(params["covariates"]),
              "design rows": f"{int(use.sum())} of {data.n} (refusals left out)",
              "threshold": "per row: the augmented quantile regression's cutoff (Gibbs, "
                           "Cherian & Candès 2023, conservative variant); shown: at the "
                           "mean calibration covariates"}
    return RuleFit({ALL: GroupThreshold(data.n, {"both": Side(value, None)})}, report=report,
                   learned=learned)


def _features(table: GroundingTable, params: Mapping[str, Any]) -> NDArray[np.float64]:
    return covariate_matrix(table, params["covariates"])


def row_lams(table: GroundingTable, params: Mapping[str, Any], alpha: float
             ) -> NDArray[np.float64]:
    """The conservative cutoff of every row of ``table`` (refusals: the summary one); a
    row with a prediction but without one of the covariates is a ValueError naming it."""
    x = _features(table, params)
    phi_cal, scores, center, scale = _fitted(params)
    known = np.isfinite(x).all(axis=1)
    missing = ~known & table.has_interval
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        names = [c for c, ok in zip(params["covariates"], np.isfinite(x[i]), strict=True)
                 if not ok]
        hint = "" if set(names) <= set(FROM_PREDICTION) else " (e.g. query text not read)"
        raise ValueError(f"{table.where(i)}: covariate {', '.join(names)} is not known, so "
                         f"rule 'conditional' cannot set its threshold{hint}; "
                         f"{int(missing.sum())} row(s) affected")
    # The summary cutoff (one LP more) only where a row has no covariates (refusals).
    out = np.full(len(table), _summary(phi_cal, scores, alpha) if not known.all() else 0.0)
    if known.any():
        out[known] = cutoffs(phi_cal, scores, design_matrix(x[known], center, scale), alpha)
    return out


def _check_saved(params: Mapping[str, Any], thresholds: Mapping[str, GroupThreshold],
                 n_fitted: int, alpha: float) -> None:
    """A loaded file's design against its threshold record: fitted, at most ``n_fitted``
    rows, and the summary threshold the one the design gives."""
    if params.get("design") is None:
        raise ValueError("rule 'conditional' needs the fitted design (params.design)")
    rows = len(params["design"]["x"])
    if rows > n_fitted:
        raise ValueError(f"design holds {rows} rows, more than the {n_fitted} fitted on")
    phi, scores, _, _ = _fitted(params)
    want = _summary(phi, scores, alpha)
    got = thresholds[ALL].sides["both"].value
    if not (got == want or math.isclose(got, want, rel_tol=1e-7, abs_tol=1e-9)):
        raise ValueError(f"thresholds.{ALL}.value {got!r} is not the cutoff {want!r} the "
                         "design gives at the mean covariates")


register_rule(RuleSpec(
    "conditional", conditional_rule,
    "conditional conformal over covariate shifts linear in --covariates (Gibbs, Cherian & "
    "Candès 2023): a threshold per row from an augmented quantile regression",
    defaults={"covariates": list(DEFAULT_COVARIATES), "design": None}, check_params=_check,
    per_row=PerRow(_features, row_lams, _check_saved)))
