"""Study 8, exchangeability of the frozen split (paper Table 5; SPEC §6.8).

KS(calibration pool, test) of each family's scores, and a unit-level permutation
test: units (source videos) are reshuffled into pseudo-pool / pseudo-test groups of
the original unit counts (all rows of a unit move together), ``n_perm`` times, and
``p = (#{KS_perm >= KS_obs} + 1) / (n_perm + 1)``.

All permutations are one matrix operation: the pooled scores are sorted once; each
permutation is a row of a boolean matrix in that order, whose cumulative sums are
the two empirical CDFs; the statistic is read at the last position of every run of
tied scores.

**Within-video dependence (paper Prop. 3).** The paper bounds the coverage lost to
non-exchangeability by ``Delta``, the mean total-variation change when the test query
swaps places with a calibration query; for independent videos only calibration queries
from the test query's own video contribute. ``Delta`` itself is not estimable from one
sample, so :func:`within_video_dependence` reports the two estimable pieces it is made
of: the calibration rows that share a video with a test row (0 under COVER's split by
source video, so the within-video part of ``Delta`` is zero by design), and the
strength of the within-video dependence, as the intraclass correlation ``rho`` of the
coverage indicator over the test videos, read off the design effect
(:func:`cover.bands.unit_design_effect`) by Kish's ``deff = 1 + (m_w - 1) rho``
(``m_w = sum n_g^2 / n``, the size-weighted queries per video; ``rho >= 0`` since the
design effect is floored at 1). Under the video split that dependence does not bias
coverage; it widens its uncertainty (``n / deff`` effectively independent queries),
which the test band accounts for. Under a query-level split it is what ``Delta`` would
charge.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.bands import CLUSTER_UNIT, unit_design_effect
from cover.calibrate.online import DEFAULT_GAMMA, aci_replay, rolling_mean
from cover.calibrate.split import split_conformal
from cover.studies.common import ks_statistic
from cover.studies.context import Pair
from cover.studies.minimum import WINDOW
from cover.studies.result import StudyResult, Table, family_label

N_PERMUTATIONS = 2000
_CHUNK = 250  # permutations per draw from the generator
#: Running counts held at once (permutations x rows): 2 or 4 bytes each as integers, 16
#: as the two ECDFs' floats (about 16 MB at this budget).
_CELLS = 1_000_000


def _run_ends(sorted_scores: NDArray[np.float64]) -> NDArray[np.int64]:
    """Position of the last of every run of tied values in ascending ``sorted_scores``."""
    return np.flatnonzero(np.r_[sorted_scores[1:] != sorted_scores[:-1], True])


def _ks_of_counts(last: NDArray[np.int64], counts: NDArray[np.integer[Any]]
                  ) -> NDArray[np.float64]:
    """KS statistic per column of ``counts`` (``(K, P)``: rows of sample a up to the end
    ``last[k]`` of each run of tied scores): ``max |F_a - F_b|``."""
    ca = counts.astype(np.float64)  # integer counts: exact in floats
    # The rows not in a are the position minus ca.
    cb = (last + 1.0)[:, None] - ca
    na, nb = ca[-1:].copy(), cb[-1:].copy()
    # |ca / na - cb / nb| in place (the same operations, no temporaries).
    np.divide(ca, na, out=ca)
    np.divide(cb, nb, out=cb)
    np.subtract(ca, cb, out=ca)
    return np.max(np.abs(ca, out=ca), axis=0)


def ks_rows(sorted_scores: NDArray[np.float64], in_a: NDArray[np.bool_]) -> NDArray[np.float64]:
    """KS statistic for every row of ``in_a`` (``(P, N)``, columns in the order of the
    ascending ``sorted_scores``): ``max |F_a - F_b|`` over distinct score values."""
    last = _run_ends(sorted_scores)
    return _ks_of_counts(last, np.cumsum(in_a, axis=1, dtype=np.int32)[:, last].T)


def _running_counts(chosen: NDArray[np.bool_], inverse: NDArray[np.intp],
                    last: NDArray[np.int64]) -> NDArray[np.integer[Any]]:
    """``(K, P)`` rows in the chosen units (``chosen``: ``(U, P)``, one column per
    permutation) up to each run end ``last``, the rows taken in sorted order (row ``i`` in
    unit ``inverse[i]``): one vector add across all permutations per row."""
    dtype = np.int16 if inverse.size < 2**15 else np.int32
    out = np.empty((inverse.size, chosen.shape[1]), dtype=dtype)
    prev = np.zeros(chosen.shape[1], dtype=dtype)
    for i, u in enumerate(inverse.tolist()):
        prev = np.add(prev, chosen[u], out=out[i])
    return out[last]


def permutation_ks(scores: NDArray[np.float64], units: NDArray[Any],
                   in_pool: NDArray[np.bool_], n_perm: int = N_PERMUTATIONS,
                   seed: int = 42) -> tuple[float, float, NDArray[np.float64]]:
    """``(KS_obs, p, KS_perm)`` of the unit-level permutation test."""
    return permutation_ks_many([scores], units, in_pool, n_perm, seed)[0]


def permutation_ks_many(scores: Sequence[NDArray[np.float64]], units: NDArray[Any],
                        in_pool: NDArray[np.bool_], n_perm: int = N_PERMUTATIONS,
                        seed: int = 42) -> list[tuple[float, float, NDArray[np.float64]]]:
    """:func:`permutation_ks` of several score columns of the same rows (one per family):
    the permuted pools are drawn once and serve every column."""
    uniq, codes = np.unique(units, return_inverse=True)
    codes = codes.reshape(-1)
    n_pool_units = np.unique(units[in_pool]).size
    cols = []  # per column: run ends, unit of each row in score order, KS_obs
    for sc in scores:
        order = np.argsort(sc, kind="stable")
        s = sc[order]
        cols.append((_run_ends(s), codes[order], float(ks_rows(s, in_pool[order][None, :])[0])))
    rng = np.random.default_rng(np.random.SeedSequence([seed, 8]))
    # Permutations counted together: as many whole draw chunks as fit the cell budget.
    block = max(1, _CELLS // max(codes.size * _CHUNK, 1)) * _CHUNK
    perms = [np.empty(n_perm) for _ in cols]
    for start in range(0, n_perm, block):
        chosen = []
        for sub in range(start, min(start + block, n_perm), _CHUNK):
            draws = rng.random((min(_CHUNK, n_perm - sub), uniq.size))
            # The n_pool_units units of smallest draw per permutation (a uniformly random
            # subset): the draws up to the row's k-th smallest, by one partition per row.
            if n_pool_units:
                kth = np.partition(draws, n_pool_units - 1, axis=1)[
                    :, n_pool_units - 1:n_pool_units]
                chosen.append(draws <= kth)
            else:
                chosen.append(np.zeros(draws.shape, dtype=bool))
        both = np.ascontiguousarray(np.concatenate(chosen).T)  # (units, permutations)
        for perm, (last, inverse, _) in zip(perms, cols, strict=True):
            perm[start:start + both.shape[1]] = _ks_of_counts(
                last, _running_counts(both, inverse, last))
    # Ties of floating sums: a permuted KS equal to the observed one counts.
    return [(obs, (int(np.sum(perm >= obs - 1e-12)) + 1) / (n_perm + 1), perm)
            for perm, (_, _, obs) in zip(perms, cols, strict=True)]


def within_video_dependence(pair: Pair, family: str, alpha: float = 0.1) -> dict[str, Any]:
    """Prop. 3's estimable pieces for ``family`` at ``1 - alpha`` (module docstring): test
    rows covered by the pool's split-conformal threshold, their design effect and
    intraclass correlation over source videos, and the calibration rows sharing a video
    with a test row."""
    lam = split_conformal(pair.sweep("pool", family).scores, alpha=alpha, warn=False).value
    covered = pair.sweep("test", family).covered(np.array([lam]))[0]
    units = pair.test_codes  # the unit names' groups and order, as integers
    deff, g = unit_design_effect(covered, units)
    n = int(covered.size)
    sizes = np.unique(units, return_counts=True)[1] if n else np.zeros(0, dtype=np.int64)
    m_w = float(np.sum(sizes.astype(np.float64) ** 2) / n) if n else float("nan")
    icc = (deff - 1.0) / (m_w - 1.0) if m_w > 1 else float("nan")
    shared = int(np.count_nonzero(np.isin(pair.pool_codes, units)))
    return {"family": family, "alpha": alpha, "threshold": lam, "n_test": n,
            "test_units": g, "queries_per_video": m_w, "design_effect": deff, "icc": icc,
            "effective_n": n / deff if deff > 0 else float("nan"),
            "calibration_rows_sharing_a_test_video": shared, "cluster_unit": CLUSTER_UNIT}


def online_drift(pair: Pair, alpha: float = 0.1, family: str = "norm") -> dict[str, Any]:
    """Beyond exchangeability: the test split replayed as a stream against the pool's
    scores, in file order and in a drifting order (true event length ascending: events
    get longer over time), through online ACI and through the fixed split threshold.
    Overall miss rate and the worst trailing-window miss rate of each rule."""
    pool = pair.sweep("pool", family).scores
    test = pair.sweep("test", family)
    lam = split_conformal(pool, alpha=alpha, warn=False).value
    out: dict[str, Any] = {"alpha": alpha, "family": family, "window": WINDOW,
                           "gamma": float(DEFAULT_GAMMA), "orders": {}}
    for name, order in (("file order", np.arange(len(test))),
                        ("events get longer", np.argsort(test.truth_end - test.truth_start,
                                                          kind="stable"))):
        s = test.scores[order]
        rec = aci_replay(pool, s, alpha=alpha)
        split_miss = s > lam
        roll_aci = rolling_mean(rec.miss, WINDOW)
        roll_split = rolling_mean(split_miss, WINDOW)
        tail = slice(WINDOW - 1, None)  # full windows only
        out["orders"][name] = {
            "aci_miss_rate": rec.miss_rate, "split_miss_rate": float(split_miss.mean()),
            "aci_worst_window": float(roll_aci[tail].max()),
            "split_worst_window": float(roll_split[tail].max()),
            "rolling_aci": np.round(roll_aci, 4).tolist(),
            "rolling_split": np.round(roll_split, 4).tolist(),
            "alpha_t": np.round(rec.alpha_t, 4).tolist()}
    return out


def exchangeability(pair: Pair, n_perm: int = N_PERMUTATIONS) -> StudyResult:
    """KS(cal, test) per family with its unit-level permutation p-value, and the online
    (ACI) replay of the test split."""
    cells: list[dict[str, Any]] = []
    in_pool = pair.split.calibration
    assert pair.facts is not None
    units = pair.facts.unit_codes  # the unit names' groups and order, as integers
    columns = []
    for fam in pair.families:
        scores = np.empty(len(pair.table))
        scores[in_pool] = pair.sweep("pool", fam).scores
        scores[~in_pool] = pair.sweep("test", fam).scores
        columns.append(scores)
    tests = permutation_ks_many(columns, units, in_pool, n_perm, pair.protocol.seed)
    for fam, (obs, p, perm) in zip(pair.families, tests, strict=True):
        pool_s, test_s = pair.sweep("pool", fam).scores, pair.sweep("test", fam).scores
        cells.append({"family": fam, "ks": obs, "ks_direct": ks_statistic(pool_s, test_s),
                      "p_value": p, "n_permutations": n_perm,
                      "perm_quantiles": np.percentile(perm, [50, 90, 95, 99]).tolist()})
    table = Table("exchangeability", f"KS statistic between the frozen calibration pool and "
                  f"test split, with the unit-level permutation p-value ({n_perm} "
                  "permutations; p = (#{KS_perm >= KS_obs} + 1)/(permutations + 1)).",
                  ("Grounder", "Dataset", "Family", "KS(cal, test)", "Permutation p"),
                  tuple((pair.name, pair.dataset, family_label(c["family"]),
                         f"{c['ks']:.3f}", f"{c['p_value']:.2f}") for c in cells))
    online = online_drift(pair, family="norm" if "norm" in pair.families else pair.families[0])
    aci = Table("exchangeability_online", f"Beyond exchangeability: the test split as a "
                f"stream, {online['family'].upper()}, alpha = {online['alpha']}; overall miss "
                f"rate and worst {WINDOW}-query window of the fixed split threshold and of "
                f"online ACI (gamma = {online['gamma']:g}).",
                ("Grounder", "Dataset", "Stream order", "Split miss", "Split worst window",
                 "ACI miss", "ACI worst window"),
                tuple((pair.name, pair.dataset, o, f"{d['split_miss_rate']:.3f}",
                       f"{d['split_worst_window']:.3f}", f"{d['aci_miss_rate']:.3f}",
                       f"{d['aci_worst_window']:.3f}") for o, d in online["orders"].items()))
    dep = [within_video_dependence(pair, f) for f in pair.families]
    dependence = Table(
        "exchangeability_dependence", "Within-video dependence (paper Prop. 3), coverage "
        "indicator of the test rows at 1-alpha = 0.90. Prop. 3's loss Delta comes only from "
        "calibration queries sharing the test query's video: COVER splits by source video, "
        "so none do (last column) and that part of Delta is zero by design. rho = "
        "intraclass correlation over source videos, from the design effect deff = 1 + "
        "(m_w - 1) rho (m_w = size-weighted queries per video): how strongly queries of one "
        "video are covered together. It does not bias coverage under this split; it "
        "leaves n/deff effectively independent queries, which the test band accounts for.",
        ("Grounder", "Dataset", "Family", "Test videos", "Queries/video (m_w)", "rho (ICC)",
         "Design effect", "Effective n", "Cal. rows sharing a test video"),
        tuple((pair.name, pair.dataset, family_label(d["family"]), str(d["test_units"]),
               f"{d['queries_per_video']:.2f}", f"{d['icc']:.3f}", f"{d['design_effect']:.2f}",
               f"{d['effective_n']:.0f}", str(d["calibration_rows_sharing_a_test_video"]))
              for d in dep))
    data = {"cells": cells, "n_units_pool": pair.split.n_units_calibration,
            "n_units_test": pair.split.n_units_test, "online": online,
            "within_video": dep}
    return StudyResult("exchangeability", "Exchangeability of the split", pair.label, data,
                       [table, aci, dependence])
