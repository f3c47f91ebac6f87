"""Regions of one score family at many thresholds at once (the studies' inner loop).

A study evaluates the same test rows under tens of thresholds (one per resample,
per alpha, per hand-picked margin). Building regions one threshold at a time
repeats the same work; here everything that does not depend on ``lam`` is computed
once and a whole vector of thresholds is applied as one array operation:

* coverage by nestedness (SPEC §3): ``truth ⊆ C_lam  <=>  S <= lam``;
* interval families: ``|[s - lam*l, e + lam*l] ∩ [0, T]|`` in closed form;
* SLS: the clips with ``f >= -lam`` as an ``(R, clips)`` mask, lengths and components
  as segment sums of that mask.

Every result is an ``(R, n)`` array: one row per threshold, one column per table row.
Thresholds are ``(R,)`` (one per resample) or ``(R, n)`` (one per resample and row, e.g.
per-group thresholds). Refused rows and ``lam = +inf`` give the whole video
``[0, T]``, exactly as :func:`cover.regions.build_regions`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.calibrate.quantile import as_fraction
from cover.data.table import GroundingTable
from cover.intervals import CONTAINMENT_ATOL
from cover.ragged import row_ids
from cover.scores import DEFAULT_MIN_SCALE, check_family, compute_scores, interval_scale

F64 = NDArray[np.float64]


def segment_sums(x: NDArray[np.float64], offsets: NDArray[np.int64]) -> NDArray[np.float64]:
    """Row-wise sums of ``x`` (shape ``(R, total)``) over the segments ``offsets`` (empty
    segments sum to 0): one cumulative sum, differenced at the offsets."""
    cs = np.zeros((x.shape[0], x.shape[1] + 1))
    np.cumsum(x, axis=1, out=cs[:, 1:])
    return cs[:, offsets[1:]] - cs[:, offsets[:-1]]


@dataclass(frozen=True)
class SweepMetrics:
    """Per-threshold, per-row metrics; every array has shape ``(R, n)``."""

    covered: NDArray[np.bool_]
    length: F64
    iou: F64
    components: F64
    duration: F64

    def coverage(self, rows: NDArray[np.bool_] | None = None) -> F64:
        """Mean coverage per threshold over ``rows`` (all rows by default)."""
        c = self.covered if rows is None else self.covered[:, rows]
        return c.mean(axis=1) if c.shape[1] else np.full(c.shape[0], np.nan)

    def mean(self, what: str, rows: NDArray[np.bool_] | None = None) -> F64:
        """Mean of ``length``, ``iou``, ``components`` or ``frac`` (length / T) per threshold."""
        x = self.length / self.duration if what == "frac" else getattr(self, what)
        x = x if rows is None else x[:, rows]
        return x.mean(axis=1) if x.shape[1] else np.full(x.shape[0], np.nan)


@dataclass(frozen=True)
class Sweep:
    """Everything about one (table, family) that does not depend on the threshold."""

    family: str
    scores: F64
    refused: NDArray[np.bool_]
    duration: F64
    truth_start: F64
    truth_end: F64
    pred_start: F64
    pred_end: F64
    scale: F64
    clip_row: NDArray[np.int64]
    clip_value: F64
    clip_len: F64
    clip_overlap: F64
    clip_index: NDArray[np.int64]
    clip_offsets: NDArray[np.int64]

    @classmethod
    def of(cls, table: GroundingTable, family: str, *, min_scale: float = DEFAULT_MIN_SCALE,
           target: str = "envelope") -> Sweep:
        """Precompute scores, scales and (SLS) per-clip spans of a labelled table."""
        fam = check_family(family)
        sc = compute_scores(table, fam, min_scale=min_scale, target=target)
        ts, te = table.truth_envelope()
        t = table.duration
        if fam == "sls":
            rel = table.relevance
            r = row_ids(rel.offsets)
            i = np.arange(rel.values.size, dtype=np.int64) - rel.offsets[r]
            c = table.clip
            lo = i * c
            hi = np.minimum((i + 1) * c, t[r])
            span = np.maximum(hi - lo, 0.0)
            overlap = np.maximum(np.minimum(hi, te[r]) - np.maximum(lo, ts[r]), 0.0)
            clip_row, clip_value, offsets = r, rel.values.astype(np.float64), rel.offsets
            scale = np.ones_like(t)
        else:
            scale, _ = interval_scale(table.pred_start, table.pred_end, fam, min_scale)
            clip_row = i = np.empty(0, dtype=np.int64)
            clip_value = span = overlap = np.empty(0)
            offsets = np.zeros(len(table) + 1, dtype=np.int64)
        return cls(fam, sc.values, sc.refused, t, ts, te, table.pred_start, table.pred_end,
                   scale, clip_row, clip_value, span, overlap, i, offsets)

    def __len__(self) -> int:
        return int(self.scores.size)

    def _lams(self, lams: ArrayLike) -> F64:
        lam = np.asarray(lams, dtype=np.float64)
        if lam.ndim == 0:
            lam = lam.reshape(1)
        if lam.ndim == 1:
            lam = lam[:, None]
        if np.isnan(lam).any():
            raise ValueError("threshold lam is NaN")
        return np.broadcast_to(lam, (lam.shape[0], len(self)))

    def covered(self, lams: ArrayLike) -> NDArray[np.bool_]:
        """``S <= lam`` per (threshold, row): truth inside the region (nestedness)."""
        return self.scores[None, :] <= self._lams(lams)

    def at(self, lams: ArrayLike) -> SweepMetrics:
        """Coverage, length (s), IoU with the truth envelope and components per
        (threshold, row)."""
        lam = self._lams(lams)
        whole = self.refused[None, :] | np.isposinf(lam)
        t = self.duration[None, :]
        ts, te = self.truth_start[None, :], self.truth_end[None, :]
        if self.family == "sls":
            lam_c = lam[:, self.clip_row]
            sel = (self.clip_value[None, :] >= -lam_c) & (self.clip_len[None, :] > 0)
            length = segment_sums(sel * self.clip_len[None, :], self.clip_offsets)
            inter = segment_sums(sel * self.clip_overlap[None, :], self.clip_offsets)
            same_row = np.r_[False, self.clip_row[1:] == self.clip_row[:-1]]
            prev = np.zeros_like(sel)
            prev[:, 1:] = sel[:, :-1]
            starts = sel & ~(prev & same_row[None, :])
            comps = segment_sums(starts.astype(np.float64), self.clip_offsets)
        else:
            with np.errstate(invalid="ignore"):
                w = lam * self.scale[None, :]
                lo = np.maximum(self.pred_start[None, :] - w, 0.0)
                hi = np.minimum(self.pred_end[None, :] + w, t)
                length = np.maximum(hi - lo, 0.0)
                inter = np.maximum(np.minimum(hi, te) - np.maximum(lo, ts), 0.0)
                # widen() keeps a region that rounding alone pushed past a point.
                comps = (hi >= lo - CONTAINMENT_ATOL).astype(np.float64)
        truth_len = te - ts
        length = np.where(whole, t, length)
        inter = np.where(whole, truth_len, inter)
        comps = np.where(whole, 1.0, comps)
        union = length + truth_len - inter
        iou = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
        t_full = np.broadcast_to(t, length.shape)
        return SweepMetrics(self.covered(lam), length, iou, comps, t_full)


def conformal_ranks(n: ArrayLike, alpha: float | Fraction) -> NDArray[np.int64]:
    """``k = ceil((n + 1)(1 - alpha))`` for an array of ``n``, in exact integer arithmetic
    (``alpha = p/q`` read as the decimal written: ``k = ceil((n + 1)(q - p) / q)``)."""
    a = as_fraction(alpha)
    p, q = a.numerator, a.denominator
    m = (np.asarray(n, dtype=np.int64) + 1) * (q - p)
    return -((-m) // q)


@dataclass(frozen=True)
class ResampleThresholds:
    """Split-conformal thresholds of ``R`` calibration resamples at several alphas."""

    alphas: tuple[float, ...]
    values: F64          # (A, R): k-th smallest score of each resample, +inf if k > n
    k: NDArray[np.int64]  # (A, R)
    n: NDArray[np.int64]  # (R,)


def resample_thresholds(scores: F64, masks: NDArray[np.bool_],
                        alphas: tuple[float, ...]) -> ResampleThresholds:
    """Thresholds of every resample (row of ``masks``) at every alpha from one sort:
    rows outside a resample become ``+inf``, each row of the matrix is sorted once and
    the ``k``-th smallest is read off (SPEC §4 split conformal)."""
    m = np.atleast_2d(masks)
    sorted_ = np.sort(np.where(m, scores[None, :], np.inf), axis=1)
    n = m.sum(axis=1).astype(np.int64)
    vals = np.empty((len(alphas), m.shape[0]))
    ks = np.empty((len(alphas), m.shape[0]), dtype=np.int64)
    padded = np.concatenate([sorted_, np.full((m.shape[0], 1), np.inf)], axis=1)
    rows = np.arange(m.shape[0])
    for j, a in enumerate(alphas):
        k = conformal_ranks(n, a)
        # k > n reads the +inf padding: the whole-video threshold.
        idx = np.clip(np.where(k > n, padded.shape[1] - 1, k - 1), 0, padded.shape[1] - 1)
        vals[j] = np.where(k < 1, -np.inf, padded[rows, idx])
        ks[j] = k
    return ResampleThresholds(tuple(alphas), vals, ks, n)
