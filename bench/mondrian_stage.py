"""Mondrian (group-conditional) calibrate + certify: G groups, SEC scores, alpha = 0.1.

The group of a row is a code 0..G-1 drawn uniformly. Every contender starts from the
same calibration scores (SEC, ``max(S, 0)`` for crepes as in a) and codes and ends with
the m test intervals ``[s - q_g, e + q_g] ∩ [0, T]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from peers import ConformalRegressor, for_peers
from results import Stage, same_arrays
from stages import ALPHA, Entry, run_cell
from workloads import Data, short

import cover
from cover.calibrate.mondrian import mondrian_conformal

F = NDArray[np.float64]
I64 = NDArray[np.int64]
REF = "COVER mondrian_conformal + per_row + build_regions('sec')"
TITLE = "e) Mondrian: one threshold per group, calibrate + certify (SEC, alpha = 0.1)"
NOTE = ("Column `G groups, n_cal → m`. Codes are uniform over the G groups. Ratio = time / "
        "COVER (bold): **< 1 means faster than COVER**. crepes is `ConformalRegressor().fit("
        "residuals, bins=codes)` + `predict_int(..., bins=...)` and a clip to T; numpy sorts by "
        "(group, score) and reads each group's k-th smallest (float ceil). The agreement column "
        "counts the groups whose threshold differs from COVER's exact "
        "`k_g = ceil((n_g + 1)(1 - alpha))`.")


def cover_mondrian(scores: F, codes: I64, G: int, test: Data, test_codes: I64
                   ) -> tuple[Any, cover.Regions]:
    th = mondrian_conformal(scores, codes, G, alpha=ALPHA, warn=False)
    return th.values, cover.build_regions(test.table, "sec", th.per_row(test_codes),
                                          alpha=ALPHA)


def np_mondrian(scores: F, codes: I64, G: int, test: Data, test_codes: I64
                ) -> tuple[F, F, F]:
    order = np.lexsort((scores, codes))
    n = np.bincount(codes, minlength=G)
    start = np.r_[0, np.cumsum(n)[:-1]]
    k = np.ceil((n + 1) * (1 - ALPHA)).astype(np.int64)  # float ceil, as users write it
    q = np.where(k <= n, scores[order][np.minimum(start + k - 1, scores.size - 1)], np.inf)
    lam = q[test_codes]
    return q, np.maximum(test.ps - lam, 0.0), np.minimum(test.pe + lam, test.T)


def crepes_mondrian(pscores: F, codes: I64, test: Data, test_codes: I64) -> tuple[F, F]:
    cr = ConformalRegressor().fit(pscores, bins=codes)
    m = test.ps.size
    out = cr.predict_int(np.concatenate([test.ps, test.pe]),
                         bins=np.concatenate([test_codes, test_codes]), confidence=1 - ALPHA,
                         y_min=0.0)
    return np.maximum(out[:m, 0], 0.0), np.minimum(out[m:, 1], test.T)


def crepes_group_thresholds(pscores: F, codes: I64, G: int) -> F:
    cr = ConformalRegressor().fit(pscores, bins=codes)
    return np.asarray(cr.predict_int(np.zeros(G), bins=np.arange(G), confidence=1 - ALPHA)[:, 1])


def mondrian(st: Stage, cal: Data, test: Data, G: int, rounds: int,
             rng: np.random.Generator) -> None:
    col = f"G={G}, {short(cal.ps.size)} → {short(test.ps.size)}"
    scores = cover.compute_scores(cal.table, "sec").values
    codes = rng.integers(0, G, scores.size)
    test_codes = rng.integers(0, G, test.ps.size)
    pscores = for_peers(scores)
    q_cover = mondrian_conformal(scores, codes, G, alpha=ALPHA, warn=False).values

    def groups_off(q: F) -> str:
        off = int(np.sum(q != q_cover))
        return "yes" if off == 0 else f"no ({off} of {G} group thresholds differ)"

    def same_np(out: Any, res: dict[str, Any]) -> str:
        verdict = groups_off(out[0])
        if verdict != "yes":
            return verdict
        iv = res[REF][1].intervals
        return same_arrays([(out[1], iv.starts), (out[2], iv.ends)])

    def same_crepes(out: Any, res: dict[str, Any]) -> str:
        if (q_cover < 0).any():
            return "n/a (q < 0)"
        verdict = groups_off(crepes_group_thresholds(pscores, codes, G))
        if verdict != "yes":
            return verdict
        iv = res[REF][1].intervals
        return same_arrays([(out[0], iv.starts), (out[1], iv.ends)])

    run_cell(st, col, [
        Entry(REF, REF, lambda: cover_mondrian(scores, codes, G, test, test_codes)),
        Entry("numpy lexsort by (group, score) + float-ceil k_g + widen/clip", REF,
              lambda: np_mondrian(scores, codes, G, test, test_codes), same_np),
        Entry("crepes ConformalRegressor fit(bins=) + predict_int(bins=) + clip to T", REF,
              None if ConformalRegressor is None
              else lambda: crepes_mondrian(pscores, codes, test, test_codes), same_crepes),
    ], rounds)
