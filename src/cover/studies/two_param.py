"""Study 2c, one parameter or two (paper Tables 9-10; SPEC §3 per-boundary, §6.2).

The per-boundary variant calibrates the start and end widenings separately:
start score ``S_s = (s_hat - s*)/l``, end score ``S_e = (e* - e_hat)/l``, each at
``alpha/2`` (Bonferroni), so that joint coverage ``P(S_s <= lam_s, S_e <= lam_e)``
stays ``>= 1 - alpha``. Region ``[s_hat - lam_s*l, e_hat + lam_e*l] ∩ [0, T]``.
Reported per family and target: ``lam_start``, ``lam_end`` and their ratio (the
grounder's boundary asymmetry: the side with the larger widening is the weak one),
coverage and length of both members, and the relative length change
``100 (len_2 - len_1) / len_1``; also for the exact single-quantile member
``max(S_s/w_s, S_e/w_e)`` (:mod:`cover.calibrate.asymmetric`), side weights from a disjoint
fold of the pool's units.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.asymmetric import asymmetric_score, fold_weights
from cover.calibrate.quantile import as_fraction
from cover.studies.common import HEADLINE_TARGETS, alpha_of, finite_mean, mean_sd
from cover.studies.context import Pair
from cover.studies.result import StudyResult, Table, family_label, fmt
from cover.studies.sweep import Sweep, resample_thresholds

F64 = NDArray[np.float64]


def side_scores(sw: Sweep) -> tuple[F64, F64]:
    """``(S_s, S_e)`` per row; ``-inf`` for refused rows (always covered)."""
    with np.errstate(invalid="ignore"):
        s = (sw.pred_start - sw.truth_start) / sw.scale_start
        e = (sw.truth_end - sw.pred_end) / sw.scale_end
    return np.where(sw.refused, -np.inf, s), np.where(sw.refused, -np.inf, e)


def two_sided(sw: Sweep, lam_s: F64, lam_e: F64) -> tuple[NDArray[np.bool_], F64]:
    """Coverage mask and length ``(R, n)`` of the per-boundary region at ``(lam_s, lam_e)``."""
    s, e = side_scores(sw)
    ls, le = lam_s[:, None], lam_e[:, None]
    covered = (s[None, :] <= ls) & (e[None, :] <= le)
    t = sw.duration[None, :]
    with np.errstate(invalid="ignore"):
        lo = np.maximum(sw.pred_start[None, :] - ls * sw.scale_start[None, :], 0.0)
        hi = np.minimum(sw.pred_end[None, :] + le * sw.scale_end[None, :], t)
        length = np.maximum(hi - lo, 0.0)
    whole = sw.refused[None, :] | np.isposinf(ls) | np.isposinf(le)
    return covered, np.where(whole, t, length)


#: Share of the pool's units that estimates the asymmetric member's side weights.
FOLD = 0.25


def _fold(pair: Pair) -> NDArray[np.bool_]:
    """Rows of the pool's weight fold: ``FOLD`` of its units, seeded by the protocol."""
    units = pair.pool_codes  # the unit names' groups and order, as integers
    uniq, inv = np.unique(units, return_inverse=True)
    rng = np.random.default_rng(np.random.SeedSequence([pair.protocol.seed, 2]))
    picked = np.zeros(uniq.size, dtype=bool)
    picked[rng.permutation(uniq.size)[:max(round(FOLD * uniq.size), 1)]] = True
    return picked[inv]


def two_param(pair: Pair, targets: tuple[float, ...] = HEADLINE_TARGETS) -> StudyResult:
    """One vs two calibrated parameters (Bonferroni per side) for NORM and SEC."""
    cells: list[dict[str, Any]] = []
    for fam in ("norm", "sec"):
        if fam not in pair.families:
            continue
        pool, test = pair.sweep("pool", fam), pair.sweep("test", fam)
        ps, pe = side_scores(pool)
        alphas = tuple(alpha_of(t) for t in targets)
        one = resample_thresholds(pool.scores, pair.masks, alphas)
        half = tuple(a / 2 for a in alphas)
        th_s = resample_thresholds(ps, pair.masks, half)
        th_e = resample_thresholds(pe, pair.masks, half)
        fold = _fold(pair)
        rest = pair.masks & ~fold[None, :]
        ts_, te_ = side_scores(test)
        for j, tgt in enumerate(targets):
            # The exact single-quantile member: side weights from a disjoint fold of the
            # pool, one quantile of max(S_s/w_s, S_e/w_e) on the rest of each resample.
            ws, we = fold_weights(ps[fold], pe[fold], as_fraction(alphas[j]))
            th_a = resample_thresholds(asymmetric_score(ps, pe, ws, we), rest, (alphas[j],))
            q = th_a.values[0]
            cov_a = asymmetric_score(ts_, te_, ws, we)[None, :] <= q[:, None]
            _, len_a = two_sided(test, q * ws, q * we)
            m1 = test.at(one.values[j])
            cov2, len2 = two_sided(test, th_s.values[j], th_e.values[j])
            l1 = m1.mean("length")
            l2 = len2.mean(axis=1)
            lam_s, lam_e = finite_mean(th_s.values[j]), finite_mean(th_e.values[j])
            cells.append({
                "family": fam, "target": tgt,
                "lam_one": finite_mean(one.values[j]), "lam_start": lam_s, "lam_end": lam_e,
                "ratio_start_end": lam_s / lam_e if lam_e > 0 else float("inf"),
                "coverage_one": mean_sd(m1.coverage())[0],
                "coverage_two": float(cov2.mean()),
                "length_one": float(l1.mean()), "length_two": float(l2.mean()),
                "change_pct": float(100 * (l2.mean() - l1.mean()) / l1.mean()),
                "weak_side": "end" if lam_e > lam_s else "start",
                "asym_weights": [ws, we], "asym_ratio_start_end": ws / we,
                "coverage_asym": float(cov_a.mean()), "length_asym": float(len_a.mean()),
                "change_pct_asym": float(100 * (len_a.mean() - l1.mean()) / l1.mean()),
            })
    header = ("Grounder", "Dataset", *(f"{family_label(c['family'])} @{c['target']:.2f}"
                                       for c in cells))
    change = Table("two_param_change", "Relative length of two-parameter calibration, "
                   "100 (len_2param - len_1param) / len_1param, for the Bonferroni member "
                   "(each side at alpha/2) and, in brackets, the exact asymmetric member (one "
                   "quantile of max(S_s/w_s, S_e/w_e), side weights from a disjoint 25% fold "
                   "of the pool); positive = the second parameter costs length.", header,
                   ((pair.name, pair.dataset, *(
                       f"{c['change_pct']:+.1f}% ({c['change_pct_asym']:+.1f}%)"
                       for c in cells)),))
    lam_header = ["Grounder", "Dataset"]
    lam_row = [pair.name, pair.dataset]
    for c in cells:
        lab = f"{family_label(c['family'])} @{c['target']:.2f}"
        lam_header += [f"{lab} lam_start", f"{lab} lam_end", f"{lab} start/end"]
        d = 3 if c["family"] == "norm" else 2
        lam_row += [fmt(c["lam_start"], d), fmt(c["lam_end"], d), fmt(c["ratio_start_end"], 2)]
    lams = Table("two_param_lambdas", "Calibrated boundary parameters of the two-parameter "
                 "variant (mean over resamples; NORM in predicted lengths, SEC in seconds). "
                 "A ratio far below 1 means the end boundary carries the error.",
                 tuple(lam_header), (tuple(lam_row),))
    data = {"targets": list(targets), "cells": cells,
            "rules": ["bonferroni (alpha/2 per side)",
                      f"asymmetric (weights from a {FOLD:.0%} fold of the pool's units)"]}
    return StudyResult("two_param", "One parameter or two", pair.label, data, [change, lams])
