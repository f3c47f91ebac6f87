"""Per-boundary widening by one quantile of an asymmetric score (exact joint guarantee).

``S = max(S_s / w_s, S_e / w_e)`` with ``S_s = (s_hat - s*)/l``, ``S_e = (e* - e_hat)/l``
and side weights ``w_s, w_e > 0`` fixed **before** calibration (SPEC §3): given, or
estimated on a random fold of the calibration set that is then left out of the
quantile. ``q = k-th smallest S`` of the remaining ``n`` rows, ``k = ceil((n+1)(1-alpha))``,
and the region ``[s_hat - q w_s l, e_hat + q w_e l] ∩ [0, T]`` contains the truth iff
``S <= q``: one quantile, so the split-conformal guarantee holds jointly for both sides.

Weights from the fold: ``w = max(Q_{1-alpha}(S_side), 0.1 * max(Q_s, Q_e))`` per side
(a floor keeps a side that the grounder never misses from a zero weight), scaled to
``w_s + w_e = 2`` (equal weights are the one-parameter score); ``(1, 1)`` when neither
quantile is positive. The calibrated start/end ratio is ``w_s / w_e``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.quantile import conformal_rank
from cover.calibrate.registry import (
    GroupThreshold,
    RuleFit,
    RuleInput,
    RuleSpec,
    Side,
    register_rule,
)
from cover.calibrate.split import split_conformal

DEFAULTS: dict[str, Any] = {"fold": 0.25, "seed": 0, "weights": None}


def fold_weights(start: NDArray[np.float64], end: NDArray[np.float64], alpha: Fraction
                 ) -> tuple[float, float]:
    """Side weights from a fold's per-side scores (see the module docstring)."""
    fin_s, fin_e = start[np.isfinite(start)], end[np.isfinite(end)]
    if fin_s.size == 0 or fin_e.size == 0:
        return 1.0, 1.0
    level = 1.0 - float(alpha)
    qs, qe = float(np.quantile(fin_s, level)), float(np.quantile(fin_e, level))
    top = max(qs, qe)
    if not top > 0:
        return 1.0, 1.0
    ws, we = max(qs, 0.1 * top), max(qe, 0.1 * top)
    return 2 * ws / (ws + we), 2 * we / (ws + we)


def asymmetric_score(start: NDArray[np.float64], end: NDArray[np.float64], ws: float,
                     we: float) -> NDArray[np.float64]:
    """``S = max(S_s / w_s, S_e / w_e)``."""
    return np.maximum(start / ws, end / we)


def asymmetric_rule(data: RuleInput, alpha: Fraction, params: Mapping[str, Any]) -> RuleFit:
    """Weights from ``params["weights"]`` or a random fold (``fold`` share, ``seed``),
    then split conformal on the asymmetric score of the other rows, per group."""
    assert data.start is not None and data.end is not None
    n = data.n
    held = np.zeros(n, dtype=bool)
    if params.get("weights") is not None:
        ws, we = float(params["weights"]["start"]), float(params["weights"]["end"])
    else:
        n_fold = math.floor(params["fold"] * n)
        if n_fold < 1 or n_fold >= n:
            raise ValueError(f"a weight fold of {params['fold']} of {n} rows is empty or leaves "
                             "no rows to calibrate; give side weights or more rows")
        held[np.random.default_rng(params["seed"]).permutation(n)[:n_fold]] = True
        ws, we = fold_weights(data.start[held], data.end[held], alpha)
    s = asymmetric_score(data.start, data.end, ws, we)
    out: dict[str, GroupThreshold] = {}
    for g in np.unique(data.groups[~held]):
        th = split_conformal(s[~held & (data.groups == g)], alpha=alpha)
        out[str(g)] = GroupThreshold(th.n, {"both": Side(th.value, th.k)})
    learned = {"weights": {"start": ws, "end": we}, "fold_rows": int(held.sum())}
    return RuleFit(out, report={"side weights w_s/w_e": f"{ws:.4g}/{we:.4g}",
                                "weight fold rows": int(held.sum())}, learned=learned)


def check_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """``fold`` in (0, 1), integer ``seed``, ``weights`` None or two positive numbers;
    ``fold_rows`` (learned) a non-negative integer."""
    extra = set(params) - {*DEFAULTS, "fold_rows"}
    if extra:
        raise ValueError(f"unknown parameter(s) {', '.join(sorted(extra))}")
    fold, seed, w = params.get("fold"), params.get("seed"), params.get("weights")
    if isinstance(fold, bool) or not isinstance(fold, (int, float)) or not 0 < fold < 1:
        raise ValueError(f"fold must be a share in (0, 1), got {fold!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    out: dict[str, Any] = {"fold": float(fold), "seed": seed, "weights": None}
    if w is not None:
        if not isinstance(w, Mapping) or set(w) != {"start", "end"} or not all(
                not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
                and v > 0 for v in w.values()):
            raise ValueError(f"weights must be {{'start': w_s, 'end': w_e}}, both > 0, got {w!r}")
        out["weights"] = {"start": float(w["start"]), "end": float(w["end"])}
    if "fold_rows" in params:
        fr = params["fold_rows"]
        if isinstance(fr, bool) or not isinstance(fr, int) or fr < 0:
            raise ValueError(f"fold_rows must be an integer >= 0, got {fr!r}")
        out["fold_rows"] = fr
    return out


def _rank(n: int, alpha: Fraction, params: Mapping[str, Any], side: str) -> int:
    return conformal_rank(n, alpha)


def _lams(record: GroupThreshold, params: Mapping[str, Any]) -> tuple[float, float]:
    q = record.sides["both"].value
    w = params["weights"]
    return q * w["start"], q * w["end"]


register_rule(RuleSpec(
    "asymmetric", asymmetric_rule,
    "per-boundary widening by one quantile of max(S_s/w_s, S_e/w_e), weights from a fold",
    defaults=DEFAULTS, check_params=check_params, rank=_rank,
    needs=frozenset({"sides"}), lams=_lams))
