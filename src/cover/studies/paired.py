"""Paired differences of two grounders (or two rules) on the same test queries.

Rule: for every metric ``j`` and test query ``i`` the paired difference is
``d_ij = a_ij - b_ij`` (A minus B, one value per query). The reported difference is
the mean ``dbar_j``; its sd is the cluster-robust sd of that mean over source videos
(:func:`cover.metric_sums.cluster_sd_of`, the same estimator as the test band of
``cover evaluate``: queries of one video are dependent, videos are not). The 95%
interval is the normal approximation ``dbar_j ± z·sd_j``, clipped to what the
difference can be (``[lo_j, hi_j]``, e.g. ``[-1, 1]`` for a coverage difference).

The interval is *conditional on the one calibration split*: both grounders are
calibrated on the same calibration queries, and only the test sample's noise is in
the sd. Identical inputs give a difference of 0 with a zero-width interval; swapping
A and B negates the difference and mirrors the interval exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.metric_sums import cluster_sd_of

#: Two-sided level of the paired interval.
PAIRED_LEVEL = 0.95


@dataclass(frozen=True)
class PairedDiff:
    """Per-metric means of A and B, their paired difference A - B, its video-clustered
    sd and clipped normal-approximation interval (all arrays of one value per metric)."""

    mean_a: NDArray[np.float64]
    mean_b: NDArray[np.float64]
    diff: NDArray[np.float64]
    sd: NDArray[np.float64]
    lo: NDArray[np.float64]
    hi: NDArray[np.float64]
    n: int
    n_units: int
    level: float = PAIRED_LEVEL

    @property
    def excludes_zero(self) -> NDArray[np.bool_]:
        """Whether the interval lies wholly on one side of 0 (a clear difference)."""
        return (self.lo > 0) | (self.hi < 0)


def unit_sums(x: NDArray[np.float64], units: ArrayLike) -> tuple[NDArray[np.float64],
                                                                 NDArray[np.int64]]:
    """``(per-unit column sums, rows per unit)`` of ``x`` (rows x columns), units in
    sorted order, in one pass over the rows."""
    _, inv = np.unique(np.asarray(units).astype(str), return_inverse=True)
    order = np.argsort(inv, kind="stable")
    counts = np.bincount(inv)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    return np.add.reduceat(x[order], starts, axis=0), counts


def paired_differences(a: ArrayLike, b: ArrayLike, units: ArrayLike, *,
                       lower: ArrayLike, upper: ArrayLike,
                       level: float = PAIRED_LEVEL) -> PairedDiff:
    """The paired difference ``A - B`` of every column (metric) of ``a`` and ``b``
    (queries x metrics, the same queries in the same order), clustered by ``units``
    (one source video per query), with the interval clipped to ``[lower, upper]``
    (one bound per metric). See the module docstring for the rule."""
    xa = np.atleast_2d(np.asarray(a, dtype=np.float64).T).T
    xb = np.atleast_2d(np.asarray(b, dtype=np.float64).T).T
    u = np.asarray(units)
    if xa.shape != xb.shape:
        raise ValueError(f"A has shape {xa.shape} and B {xb.shape}: pair the same queries")
    if u.shape[0] != xa.shape[0]:
        raise ValueError(f"{u.shape[0]} units for {xa.shape[0]} queries")
    n, m = xa.shape
    lo_b = np.broadcast_to(np.asarray(lower, dtype=np.float64), (m,))
    hi_b = np.broadcast_to(np.asarray(upper, dtype=np.float64), (m,))
    if n == 0:
        nan = np.full(m, np.nan)
        return PairedDiff(nan, nan, nan, nan, nan, nan, 0, 0, level)
    d = xa - xb
    sums, counts = unit_sums(d, u)
    sd = np.array([cluster_sd_of(sums[:, j], counts, n) for j in range(m)])
    from scipy.special import ndtri

    z = float(ndtri(0.5 + level / 2))
    diff = d.mean(axis=0)
    return PairedDiff(
        mean_a=xa.mean(axis=0), mean_b=xb.mean(axis=0), diff=diff, sd=sd,
        lo=np.clip(diff - z * sd, lo_b, hi_b), hi=np.clip(diff + z * sd, lo_b, hi_b),
        n=n, n_units=int(counts.size), level=level)


def verdict(diff: float, lo: float, hi: float, *, higher_is_better: bool | None,
            names: tuple[str, str]) -> str:
    """Plain words for one metric: which side is clearly ahead (or, for a metric with no
    better direction such as coverage against a fixed target, clearly higher), or that
    the interval contains 0."""
    if not (lo > 0 or hi < 0):
        return "no clear difference"
    a_higher = diff > 0
    if higher_is_better is None:
        return f"{names[0] if a_higher else names[1]} higher"
    better = names[0] if a_higher == higher_is_better else names[1]
    return f"{better} better"


def paired_rows(p: PairedDiff, metrics: list[dict[str, Any]], names: tuple[str, str]
                ) -> list[dict[str, Any]]:
    """One JSON-ready record per metric: A, B, A - B, sd, interval, verdict."""
    return [{"metric": mt["key"], "label": mt["label"], "unit": mt["unit"],
             "a": float(p.mean_a[j]), "b": float(p.mean_b[j]), "diff": float(p.diff[j]),
             "sd": float(p.sd[j]), "ci_lo": float(p.lo[j]), "ci_hi": float(p.hi[j]),
             "bounds": [float(mt["lower"]), float(mt["upper"])],
             "verdict": verdict(float(p.diff[j]), float(p.lo[j]), float(p.hi[j]),
                                higher_is_better=mt["higher_is_better"], names=names)}
            for j, mt in enumerate(metrics)]
