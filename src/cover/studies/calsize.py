"""Study 6, calibration-set size (paper Table 14; SPEC §6.6).

For each size ``n`` (in units = source videos) the pool is subsampled ``n_resamples``
times (``n`` units without replacement each time), calibrated at ``alpha`` and
evaluated on the fixed test split. Reported: realised coverage mean ± sd, against
the Beta prediction ``Beta(k, m + 1 - k)`` at the median number of rows ``m`` (mean
``k/(m+1)``, sd ``sqrt(k (m+1-k) / ((m+1)^2 (m+2)))``). Sizes the pool cannot
supply are marked (the paper's dagger).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.quantile import conformal_ranks
from cover.calibrate.split import beta_sd
from cover.studies.common import mean_sd
from cover.studies.context import Pair
from cover.studies.result import StudyResult, Table
from cover.studies.sweep import resample_thresholds

#: Calibration sizes of the paper, in units.
PAPER_SIZES: tuple[int, ...] = (20, 50, 100, 200, 400)


def unit_subsamples(units: NDArray[Any], n_units: int, n_resamples: int,
                    seed: int) -> NDArray[np.bool_]:
    """``(R, rows)`` masks, each the rows of ``n_units`` units drawn without replacement:
    one random matrix, ranked along its rows."""
    uniq, inverse = np.unique(units, return_inverse=True)
    rng = np.random.default_rng(np.random.SeedSequence([seed, n_units]))
    ranks = np.argsort(np.argsort(rng.random((n_resamples, uniq.size)), axis=1), axis=1)
    return (ranks < n_units)[:, inverse]


def calsize(pair: Pair, sizes: tuple[int, ...] = PAPER_SIZES, alpha: float = 0.1,
            family: str = "norm") -> StudyResult:
    """Coverage spread vs calibration size (units), against the Beta prediction."""
    fam = family if family in pair.families else pair.families[0]
    pool = pair.sweep("pool", fam)
    test = pair.sweep("test", fam)
    n_units_pool = pair.split.n_units_calibration
    r = max(pair.protocol.n_resamples, 1)
    cells: list[dict[str, Any]] = []
    for n in sizes:
        if n >= n_units_pool:
            cells.append({"n_units": n, "supported": False})
            continue
        masks = unit_subsamples(pair.pool_codes, n, r, pair.protocol.seed)
        th = resample_thresholds(pool.scores, masks, (alpha,))
        cov = test.covered(th.values[0]).mean(axis=1)
        m = int(np.median(th.n))
        k = int(conformal_ranks(np.array([m]), alpha)[0])
        mu, sd = mean_sd(cov)
        cells.append({"n_units": n, "supported": True, "rows_median": m, "k": k,
                      "coverage_mean": mu, "coverage_sd": sd,
                      "beta_mean": min(k, m + 1) / (m + 1), "beta_sd": beta_sd(m, k),
                      "coverage": cov.tolist()})
    header = ("Grounder", "Dataset", *(f"n={c['n_units']}" for c in cells))
    row = (pair.name, pair.dataset, *(
        f"{c['coverage_mean']:.3f} ± {c['coverage_sd']:.3f}" if c["supported"] else "†"
        for c in cells))
    beta_row = (f"{pair.name} (Beta law)", pair.dataset, *(
        f"{c['beta_mean']:.3f} ± {c['beta_sd']:.3f}" if c["supported"] else "†"
        for c in cells))
    table = Table("calsize", f"Coverage vs calibration size in units (videos), "
                  f"{fam.upper()}, target {1 - alpha:.2f}: mean ± sd over {r} subsamples; "
                  f"the Beta row is the finite-sample law at the median row count; "
                  f"† = the pool ({n_units_pool} units) cannot supply this size.",
                  header, (row, beta_row))
    data = {"family": fam, "alpha": alpha, "n_units_pool": n_units_pool, "cells": cells}
    return StudyResult("calsize", "Calibration-set size", pair.label, data, [table])
