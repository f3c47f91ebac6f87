"""Study 1, coverage validity (paper §Coverage validity, SPEC §6.1).

For every score family and every alpha of the grid: calibrate on resamples of the
calibration pool, certify the fixed test split, and report realised coverage and
region length (mean ± sd over resamples) against the target, with the
finite-sample reference: realised coverage ~ ``Beta(k, n + 1 - k)`` (the calibration
band), widened by the test split's own sampling noise clustered by source video (the
test band, :mod:`cover.bands`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover._json import json_safe
from cover._progress import NullProgress, Progress
from cover.bands import CoverageBands, calibration_clusters
from cover.calibrate.quantile import conformal_rank
from cover.calibrate.split import split_conformal
from cover.data.table import GroundingTable
from cover.grounding_metrics import GroundingSums
from cover.metrics import cluster_sd, evaluate, point_iou
from cover.regions import build_regions
from cover.scores import DEFAULT_MIN_SCALE, FAMILIES
from cover.studies.context import Pair
from cover.studies.minimum import check_enough_rows, check_split_rows
from cover.studies.protocol import Protocol
from cover.studies.sweep import resample_thresholds
from cover.ties import distinct_counts, mass_at, upper_bound_applies


@dataclass(frozen=True)
class ValidityCell:
    """One (family, alpha) cell of the study."""

    family: str
    alpha: float
    target: float
    coverage_mean: float
    coverage_sd: float
    length_mean: float
    length_sd: float
    length_frac_mean: float
    iou_mean: float
    components_mean: float
    nonrefused_coverage_mean: float
    nonrefused_length_mean: float
    threshold_mean: float
    n_calibration: int
    k: int
    expected: float
    beta_sd: float
    beta_lo: float
    beta_hi: float
    test_sd: float
    band_lo: float
    band_hi: float
    within_band: bool
    pool_coverage: float
    pool_length: float
    pool_threshold: float
    #: Ties (:mod:`cover.ties`): distinct calibration scores and calibration scores equal
    #: to the threshold, medians over the resamples; the share of resamples with more than
    #: one score at their threshold; the same two counts for the whole pool. The upper
    #: bound 1 - alpha + 1/(n+1) assumes distinct scores: ``upper_bound_applies`` is False
    #: when at least half the resamples have ties at their threshold.
    distinct_scores: int = 0
    ties_at_threshold: float = 1.0
    tied_share: float = 0.0
    upper_bound_applies: bool = True
    pool_distinct_scores: int = 0
    pool_ties_at_threshold: int = 1


@dataclass
class ValidityResult:
    """All cells for one grounder, plus the split and counts behind them."""

    name: str
    source: str
    protocol: Protocol
    n_rows: int
    n_pool: int
    n_test: int
    n_units_pool: int
    n_units_test: int
    cells: list[ValidityCell]
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    point_iou: float = float("nan")
    #: The field's point metrics of the grounder on the test split (percent; see
    #: :mod:`cover.grounding_metrics`), so coverage can be read beside R1 and mIoU.
    field_metrics: dict[str, Any] = field(default_factory=dict)

    def cell(self, family: str, alpha: float) -> ValidityCell:
        for c in self.cells:
            if c.family == family and abs(c.alpha - alpha) < 1e-12:
                return c
        raise KeyError((family, alpha))

    @property
    def families(self) -> list[str]:
        return list(dict.fromkeys(c.family for c in self.cells))

    def to_dict(self) -> dict[str, Any]:
        return {
            "study": "coverage_validity",
            "name": self.name,
            "source": self.source,
            "protocol": self.protocol.to_dict(),
            "rows": {"total": self.n_rows, "pool": self.n_pool, "test": self.n_test},
            "units": {"pool": self.n_units_pool, "test": self.n_units_test},
            "point_iou": self.point_iou,
            "field_metrics": json_safe(self.field_metrics),
            "counts": self.counts,
            # Cells hold scalars only: a shallow dict is asdict's without its deep copies.
            "cells": [json_safe({f.name: getattr(c, f.name) for f in fields(c)})
                      for c in self.cells],
        }


def coverage_validity(
    table: GroundingTable,
    *,
    name: str = "grounder",
    families: tuple[str, ...] = FAMILIES,
    protocol: Protocol | None = None,
    min_scale: float = DEFAULT_MIN_SCALE,
    target: str = "envelope",
    progress: Progress | None = None,
) -> ValidityResult:
    """Run the coverage-validity protocol on a labelled table.

    The pool/test split is by unit (source video). Each resample calibrates on
    ``resample_frac`` of the pool's units; with ``n_resamples = 0`` the whole pool
    is used once. Too few rows for the study (:mod:`cover.studies.minimum`) raise
    :class:`~cover.errors.InputError`. Per cell the reference is ``E = k/(n+1)`` at the
    median resample size ``n``; ``beta_lo/hi`` is its calibration band and ``band_lo/hi``
    its test band (:class:`cover.bands.CoverageBands`: video-clustered, clipped to [0, 1]).
    """
    protocol = protocol or Protocol()
    check_enough_rows(table.units, protocol, ("validity",), what=table.source)
    pair = Pair(name, "", table, protocol, min_scale, target)
    return pair_validity(pair, families=families, progress=progress)


def pair_validity(pair: Pair, *, families: tuple[str, ...] | None = None,
                  progress: Progress | None = None) -> ValidityResult:
    """:func:`coverage_validity` of a prepared pair (its split, resamples, sweeps and the
    per-row field metrics reused; ``families`` default: the pair's applicable ones)."""
    protocol, table, split, pool, test = (pair.protocol, pair.table, pair.split, pair.pool,
                                          pair.test)
    min_scale, target, name = pair.min_scale, pair.target, pair.name
    families = pair.families if families is None else families
    progress = progress or NullProgress()
    check_split_rows(split, pair.masks, protocol, ("validity",), what=table.source)
    mask_matrix = pair.masks
    masks = list(mask_matrix)
    n_med = int(np.median(mask_matrix.sum(axis=1)))
    # Videos in a resample of median size: the calibration band's clustering unit count.
    pool_units, test_units = pair.pool_codes, pair.test_codes
    g_med = int(np.median(distinct_per_row(mask_matrix, pool_units))) if len(pool) else 0
    cells: list[ValidityCell] = []
    counts: dict[str, dict[str, int]] = {}
    for fam in families:
        pool_sweep, sweep = pair.sweep("pool", fam), pair.sweep("test", fam)
        pool_values = pool_sweep.scores
        counts[fam] = {f"pool_{k}": v for k, v in pool_sweep.counts.items()
                       } | {f"test_{k}": v for k, v in sweep.counts.items()}
        # Envelope truth (the paper's): every resample at once through the threshold sweep
        # (one sort of the resample matrix, regions as arrays); "windows" truth keeps the
        # per-resample loop, whose IoU is against the union of the windows.
        fast = target == "envelope"
        if fast:
            ths = resample_thresholds(pool_values, mask_matrix, protocol.alphas)
        # Ties do not depend on alpha: distinct values per resample, counted once.
        n_distinct = int(np.median(distinct_counts(pool_values, mask_matrix)))
        pool_distinct = int(distinct_counts(pool_values)[0])
        for j, alpha in enumerate(protocol.alphas):
            cov, length, frac, iou, comp, nr_cov, nr_len, thr = ([] for _ in range(8))
            if fast:
                sw = sweep.at(ths.values[j])
                nr = ~sweep.refused
                cov, length, frac = sw.coverage().tolist(), sw.mean("length").tolist(), \
                    sw.mean("frac").tolist()
                iou, comp = sw.mean("iou").tolist(), sw.mean("components").tolist()
                nr_cov, nr_len = sw.coverage(nr).tolist(), sw.mean("length", nr).tolist()
                thr = ths.values[j].tolist()
                progress.advance(len(masks))
            for m in [] if fast else masks:
                th = split_conformal(pool_values[m], alpha=alpha, warn=False)
                ev = evaluate(build_regions(test, fam, th.value, min_scale=min_scale), test,
                              target=target, base_iou=False)
                cov.append(ev.marginal.coverage)
                length.append(ev.marginal.mean_length_s)
                frac.append(ev.marginal.mean_length_frac)
                iou.append(ev.marginal.mean_iou)
                comp.append(ev.marginal.mean_components)
                nr_cov.append(ev.non_refused.coverage)
                nr_len.append(ev.non_refused.mean_length_s)
                thr.append(th.value)
                progress.advance()
            full = split_conformal(pool_values, alpha=alpha, warn=False)
            ev_full = evaluate(build_regions(test, fam, full.value, min_scale=min_scale), test,
                               target=target, base_iou=False)
            k = conformal_rank(n_med, alpha)
            cal_deff, _ = calibration_clusters(pool_values, full.value, pool_units)
            bands = CoverageBands.of(
                n_med, k, calibration_deff=cal_deff, calibration_units=g_med,
                test_sd=cluster_sd(ev_full.covered.astype(np.float64), test_units),
                test_p=ev_full.marginal.coverage, test_n=len(test),
                test_units=split.n_units_test)
            assert bands.test is not None and bands.test_sd is not None
            (b_lo, b_hi), (band_lo, band_hi) = bands.calibration, bands.test
            at = mass_at(pool_values, np.asarray(thr, dtype=np.float64), mask_matrix)
            tied_share = float(np.mean(~upper_bound_applies(at)))
            cov_mean = float(np.mean(cov))
            finite_thr = [t for t in thr if np.isfinite(t)]
            cells.append(ValidityCell(
                family=fam, alpha=float(alpha), target=1.0 - float(alpha),
                coverage_mean=cov_mean, coverage_sd=float(np.std(cov, ddof=1)) if len(cov) > 1
                else 0.0,
                length_mean=float(np.mean(length)),
                length_sd=float(np.std(length, ddof=1)) if len(length) > 1 else 0.0,
                length_frac_mean=float(np.mean(frac)), iou_mean=float(np.mean(iou)),
                components_mean=float(np.mean(comp)),
                nonrefused_coverage_mean=float(np.nanmean(nr_cov)) if len(nr_cov) else np.nan,
                nonrefused_length_mean=float(np.nanmean(nr_len)) if len(nr_len) else np.nan,
                threshold_mean=float(np.mean(finite_thr)) if finite_thr else float("inf"),
                n_calibration=n_med, k=k, expected=bands.expected, beta_sd=bands.beta_sd,
                beta_lo=b_lo, beta_hi=b_hi, test_sd=bands.test_sd, band_lo=band_lo,
                band_hi=band_hi, within_band=bool(band_lo <= cov_mean <= band_hi),
                pool_coverage=ev_full.marginal.coverage,
                pool_length=ev_full.marginal.mean_length_s,
                pool_threshold=full.value,
                distinct_scores=n_distinct, ties_at_threshold=float(np.median(at)),
                tied_share=tied_share, upper_bound_applies=tied_share < 0.5,
                pool_distinct_scores=pool_distinct,
                pool_ties_at_threshold=int(mass_at(pool_values, full.value)[0]),
            ))
    return ValidityResult(
        name=name, source=table.source, protocol=protocol, n_rows=len(table),
        n_pool=len(pool), n_test=len(test), n_units_pool=split.n_units_calibration,
        n_units_test=split.n_units_test, cells=cells, counts=counts,
        point_iou=float(point_iou(test).mean()) if len(test) else float("nan"),
        field_metrics=_field_metrics(pair),
    )


def distinct_per_row(masks: NDArray[np.bool_], codes: NDArray[np.intp]) -> NDArray[np.int64]:
    """Distinct codes among the columns each row of ``masks`` keeps."""
    seen = np.zeros((masks.shape[0], int(codes.max(initial=-1)) + 1), dtype=bool)
    r, c = np.nonzero(masks)
    seen[r, codes[c]] = True
    return seen.sum(axis=1)


def _field_metrics(pair: Pair) -> dict[str, Any]:
    """The field's metrics of the test split, from the table's per-row values (the same
    bits as ``grounding_metrics(pair.test)``); empty without test rows."""
    if not len(pair.test):
        return {}
    sums = GroundingSums()
    sums.add_rows(pair.field_rows, np.flatnonzero(pair.split.test))
    return sums.finish().to_dict()


def n_steps(protocol: Protocol, families: tuple[str, ...]) -> int:
    """Progress units of one :func:`coverage_validity` run."""
    return len(families) * len(protocol.alphas) * max(protocol.n_resamples, 1)
