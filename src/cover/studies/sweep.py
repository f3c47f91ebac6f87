"""Regions of one score family at many thresholds at once (the studies' inner loop).

A study evaluates the same test rows under tens of thresholds (one per resample,
per alpha, per hand-picked margin). Building regions one threshold at a time
repeats the same work; here everything that does not depend on ``lam`` is computed
once and a whole vector of thresholds is applied as one array operation:

* coverage by nestedness (SPEC §3): ``truth ⊆ C_lam  <=>  S <= lam``;
* interval families: ``|[s - lam*l, e + lam*l] ∩ [0, T]|`` in closed form;
* SLS: each row's clips sorted once by relevance, so the clips with ``f >= c`` (``c =
  -lam``) are a suffix of the row: length and overlap with the truth are suffix sums,
  found by one ``searchsorted`` per (threshold, row); the number of connected components
  is ``#{i : f_i >= c} - #{i : min(f_i, f_{i-1}) >= c}`` (selected clips minus selected
  clips whose predecessor is selected), two such counts.

Every result is an ``(R, n)`` array: one row per threshold, one column per table row.
Thresholds are ``(R,)`` (one per resample) or ``(R, n)`` (one per resample and row, e.g.
per-group thresholds). Refused rows and ``lam = +inf`` give the whole video
``[0, T]``, exactly as :func:`cover.regions.build_regions`. The SLS suffix counts are
:class:`cover.studies.suffix_index.SuffixIndex`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.calibrate.quantile import conformal_ranks
from cover.data.table import GroundingTable
from cover.intervals import CONTAINMENT_ATOL
from cover.ragged import row_ids
from cover.scores import DEFAULT_MIN_SCALE, Scores, check_family, compute_scores, side_scales
from cover.studies.suffix_index import SuffixIndex

F64 = NDArray[np.float64]


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
    scale_start: F64     # widening per unit of lam on the start side (SIGMA: start_std)
    scale_end: F64       # and on the end side (NORM, SEC: the same array as scale_start)
    by_value: SuffixIndex | None = None
    by_pair_min: SuffixIndex | None = None
    #: The scores with the flags that explain them (refused, floored, beyond the signal).
    detail: Scores | None = None

    @property
    def counts(self) -> dict[str, int]:
        """:meth:`cover.scores.Scores.counts` of the scores."""
        return {} if self.detail is None else self.detail.counts()

    @classmethod
    def of(cls, table: GroundingTable, family: str, *, min_scale: float = DEFAULT_MIN_SCALE,
           target: str = "envelope") -> Sweep:
        """Precompute scores, scales and (SLS) per-clip spans of a labelled table."""
        fam = check_family(family)
        sc = compute_scores(table, fam, min_scale=min_scale, target=target)
        ts, te = table.truth_envelope()
        t = table.duration
        by_value = by_pair_min = None
        scale_s = scale_e = np.ones_like(t)
        if fam == "sls":
            rel = table.relevance
            r = row_ids(rel.offsets)
            i = np.arange(rel.values.size, dtype=np.int64) - rel.offsets[r]
            lo = i * table.clip
            hi = np.minimum((i + 1) * table.clip, t[r])
            # Clips starting at or past T are never in a region: leave them out. The rest
            # of each row stays contiguous from clip 0, so "predecessor" is clip i - 1.
            ok = hi > lo
            r, v = r[ok], rel.values[ok].astype(np.float64)
            span = (hi - lo)[ok]
            overlap = np.maximum(np.minimum(hi[ok], te[r]) - np.maximum(lo[ok], ts[r]), 0.0)
            first = np.r_[True, r[1:] != r[:-1]] if r.size else np.zeros(0, dtype=bool)
            prev = np.r_[-np.inf, v[:-1]] if v.size else v
            pair_min = np.where(first, -np.inf, np.minimum(v, prev))
            by_value = SuffixIndex.of(r, v, len(table), (span, overlap))
            by_pair_min = SuffixIndex.of(r, pair_min, len(table))
        else:
            # The same per-side scales certify uses: SIGMA widens by the reported stds,
            # not by the predicted length.
            scale_s, scale_e, _ = side_scales(table, fam, min_scale, with_floored=False)
        return cls(fam, sc.values, sc.refused, t, ts, te, table.pred_start, table.pred_end,
                   scale_s, scale_e, by_value, by_pair_min, sc)

    def __len__(self) -> int:
        return int(self.scores.size)

    def take(self, rows: NDArray[np.bool_]) -> Sweep:
        """The sweep of the rows the mask ``rows`` keeps: bit for bit :meth:`of` of
        ``table.take(rows)`` for a score computed row by row (SLS: its clip indices taken,
        not sorted again)."""
        d = self.detail

        def opt(a: F64 | None) -> F64 | None:
            return None if a is None else a[rows]

        detail = None if d is None else Scores(
            d.family, d.values[rows], d.refused[rows], d.floored[rows], d.beyond_signal[rows],
            opt(d.start), opt(d.end))
        return Sweep(self.family, self.scores[rows], self.refused[rows], self.duration[rows],
                     self.truth_start[rows], self.truth_end[rows], self.pred_start[rows],
                     self.pred_end[rows], self.scale_start[rows], self.scale_end[rows],
                     None if self.by_value is None else self.by_value.take(rows),
                     None if self.by_pair_min is None else self.by_pair_min.take(rows),
                     detail)

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
        if self.by_value is not None and self.by_pair_min is not None:
            # Thresholds shared by all rows stay a broadcast view (SuffixIndex.locate's
            # one-pass count).
            cut = np.broadcast_to(-lam[:, :1], lam.shape) if lam.strides[1] == 0 else -lam
            n_sel, (length, inter) = self.by_value.at(cut)
            n_joined, _ = self.by_pair_min.at(cut)
            comps = (n_sel - n_joined).astype(np.float64)
        else:
            length, inter, comps = self.interval_parts(lam)
        return finish_metrics(self.covered(lam), whole, self.duration, self.truth_start,
                              self.truth_end, length, inter, comps)

    def interval_parts(self, lam: F64) -> tuple[F64, F64, F64]:
        """Interval families: raw length, overlap with the truth envelope and component
        count of ``[s - lam*scale, e + lam*scale] ∩ [0, T]`` per (threshold, row)."""
        t = self.duration[None, :]
        ts, te = self.truth_start[None, :], self.truth_end[None, :]
        with np.errstate(invalid="ignore"):
            lo = np.maximum(self.pred_start[None, :] - lam * self.scale_start[None, :], 0.0)
            hi = np.minimum(self.pred_end[None, :] + lam * self.scale_end[None, :], t)
            length = np.maximum(hi - lo, 0.0)
            inter = np.maximum(np.minimum(hi, te) - np.maximum(lo, ts), 0.0)
            # widen() keeps a region that rounding alone pushed past a point.
            comps = (hi >= lo - CONTAINMENT_ATOL).astype(np.float64)
        return length, inter, comps


def certified_length(whole: NDArray[np.bool_], duration: F64, length: F64) -> F64:
    """Region length with the rows certified as the whole video (``whole``) at ``T``."""
    return np.where(whole, duration[None, :], length)


def finish_metrics(covered: NDArray[np.bool_], whole: NDArray[np.bool_], duration: F64,
                   truth_start: F64, truth_end: F64, length: F64, inter: F64,
                   comps: F64) -> SweepMetrics:
    """:class:`SweepMetrics` from the regions' raw length, overlap with the truth and
    component count (``(R, n)``): rows certified as the whole video (``whole``) get length
    ``T``, the whole truth as overlap and one component; IoU from length and overlap."""
    t = duration[None, :]
    truth_len = (truth_end - truth_start)[None, :]
    length = certified_length(whole, duration, length)
    inter = np.where(whole, truth_len, inter)
    comps = np.where(whole, 1.0, comps)
    union = length + truth_len - inter
    iou = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    return SweepMetrics(covered, length, iou, comps, np.broadcast_to(t, length.shape))


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
