"""The studies' numbers over many unit-level splits (``--split-seeds N``).

Every study uses one split of the source videos into calibration pool and test (the
protocol's seed, 42). :func:`seed_values` repeats that split for each seed and computes,
per seed, bit for bit what the single-split study computes with ``Protocol(seed=seed)``:

* study 1 (coverage validity): per (family, alpha) the coverage and length, mean over the
  calibration resamples, and the seed's own 95% test band
  (:class:`cover.bands.CoverageBands`, built as :func:`coverage_validity` builds it);
* study 4 (conditional, diagnostic half): per (family, stratum) the coverage of the pooled
  threshold, with a test band for the stratum's own rows and videos.

Vectorised over seeds as the studies are over resamples: the draws come from integer unit
codes (:func:`cover.data.splits.seeded_splits`), the thresholds of every (seed, resample)
from one sort (:func:`resample_thresholds`), and the regions of every row at every
threshold any seed needs from one sweep (:class:`SweepGrid`); each seed then only gathers
its test rows. Seeds are processed in chunks so memory stays bounded on large tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from cover.bands import CoverageBands, unit_design_effect
from cover.calibrate.quantile import conformal_rank
from cover.calibrate.split import split_conformal
from cover.data.splits import UnitSplit, seeded_splits, unit_codes
from cover.data.table import GroundingTable
from cover.metrics import cluster_sd
from cover.scores import DEFAULT_MIN_SCALE
from cover.studies.protocol import Protocol
from cover.studies.strata import strata
from cover.studies.sweep import Sweep, resample_thresholds
from cover.studies.sweep_grid import SweepGrid

#: What the spread is, in the words every output uses.
SPREAD_CAPTION = ("split-seed spread: how much the choice of calibration/test split alone "
                  "moves the number")
#: Elements of the (alpha x seed x resample x row) thresholds and grid held at once.
CHUNK_ELEMENTS = 48_000_000
#: The conditional study's level (its default, :func:`cover.studies.conditional.conditional`).
STRATA_ALPHA = 0.1


def default_seeds(n: int) -> tuple[int, ...]:
    """The seeds of ``--split-seeds N``: ``0 .. N - 1``."""
    return tuple(range(n))


@dataclass
class SeedValues:
    """Per-seed numbers of one table. Keys: ``(family, alpha)`` for ``coverage``,
    ``length``, ``band_lo``, ``band_hi``; ``(family, stratum)`` for the ``strata_*`` ones.
    Every array has one entry per seed (NaN where a seed has no such number)."""

    seeds: tuple[int, ...]
    coverage: dict[tuple[str, float], NDArray[np.float64]] = field(default_factory=dict)
    length: dict[tuple[str, float], NDArray[np.float64]] = field(default_factory=dict)
    band_lo: dict[tuple[str, float], NDArray[np.float64]] = field(default_factory=dict)
    band_hi: dict[tuple[str, float], NDArray[np.float64]] = field(default_factory=dict)
    strata_coverage: dict[tuple[str, str], NDArray[np.float64]] = field(default_factory=dict)
    strata_lo: dict[tuple[str, str], NDArray[np.float64]] = field(default_factory=dict)
    strata_hi: dict[tuple[str, str], NDArray[np.float64]] = field(default_factory=dict)

    def _put(self, what: dict[tuple[str, float], NDArray[np.float64]] | dict[
            tuple[str, str], NDArray[np.float64]], key: tuple[str, float] | tuple[str, str],
             i: int, value: float) -> None:
        arr = what.setdefault(key, np.full(len(self.seeds), np.nan))  # type: ignore[arg-type]
        arr[i] = value


def _band(n: int, k: int, covered_cal: NDArray[np.bool_], cal_codes: NDArray[np.intp],
          cal_units: int, covered: NDArray[np.bool_], codes: NDArray[np.intp],
          n_units: int) -> tuple[float, float]:
    """The 95% test band as :func:`coverage_validity` builds it (unit codes in place of the
    names: the same per-unit order, so the same bits)."""
    cal_deff, _ = unit_design_effect(covered_cal, cal_codes)
    bands = CoverageBands.of(
        n, k, calibration_deff=cal_deff, calibration_units=cal_units,
        test_sd=cluster_sd(covered.astype(np.float64), codes),
        test_p=int(np.count_nonzero(covered)) / covered.size if covered.size else None,
        test_n=int(covered.size), test_units=n_units)
    assert bands.test is not None
    return bands.test


def seed_values(table: GroundingTable, *, families: Sequence[str], protocol: Protocol,
                seeds: Sequence[int], alphas: Sequence[float] | None = None,
                band_alphas: Sequence[float] | None = None,
                strata_families: Sequence[str] = (), min_scale: float = DEFAULT_MIN_SCALE,
                target: str = "envelope") -> SeedValues:
    """Per seed of ``seeds``: coverage and length at every alpha of ``alphas`` (default:
    the protocol's), the test band at ``band_alphas`` (default: ``alphas``), and the
    conditional study's strata for ``strata_families``. The protocol's ``seed`` is
    ignored (each seed replaces it)."""
    if target != "envelope":
        raise ValueError("split seeds need the envelope target (the studies' fast sweep)")
    alphas = tuple(protocol.alphas if alphas is None else alphas)
    band_alphas = alphas if band_alphas is None else tuple(band_alphas)
    out = SeedValues(tuple(seeds))
    codes = unit_codes(table.units)
    draws = list(seeded_splits(codes, seeds, cal_frac=protocol.cal_frac,
                               n_resamples=protocol.n_resamples, frac=protocol.resample_frac))
    ts, te = table.truth_envelope()
    true_len = te - ts
    n_win = table.require_truth().n_components
    sizes = [_sizes(split, masks, codes) for split, masks in draws]
    # The grid holds at most one row per (alpha, seed, resample) threshold: bound both.
    per_chunk = max(1, CHUNK_ELEMENTS // max(1, len(alphas) * draws[0][1].shape[0]
                                             * len(table)))
    for fam in families:
        sweep = Sweep.of(table, fam, min_scale=min_scale, target=target)
        for lo in range(0, len(draws), per_chunk):
            chunk = range(lo, min(lo + per_chunk, len(draws)))
            _chunk(out, fam, sweep, [draws[i] for i in chunk], list(chunk), alphas,
                   band_alphas, codes, sizes)
        if fam in strata_families:
            for i, (split, _) in enumerate(draws):
                _strata(out, fam, sweep.scores, split, codes, true_len, n_win, i)
    return out


def _sizes(split: UnitSplit, masks: NDArray[np.bool_], codes: NDArray[np.intp]
           ) -> tuple[int, int]:
    """``(n, G)``: rows and videos of a resample of median size (the calibration band's)."""
    n_med = int(np.median(masks.sum(axis=1)))
    pool_codes = codes[split.calibration]
    if not pool_codes.size:
        return n_med, 0
    # Videos per resample: mark (resample, video) pairs once, count per resample.
    seen = np.zeros((masks.shape[0], int(pool_codes.max()) + 1), dtype=bool)
    r, i = np.nonzero(masks)
    seen[r, pool_codes[i]] = True
    return n_med, int(np.median(seen.sum(axis=1)))


def _chunk(out: SeedValues, fam: str, sweep: Sweep,
           draws: list[tuple[UnitSplit, NDArray[np.bool_]]], index: list[int],
           alphas: tuple[float, ...], band_alphas: tuple[float, ...],
           codes: NDArray[np.intp], sizes: list[tuple[int, int]]) -> None:
    """One chunk of seeds: every (seed, resample) threshold from one sort, every region
    from one grid, then per seed its test rows."""
    n, r = len(sweep), draws[0][1].shape[0]
    big = np.zeros((len(draws) * r, n), dtype=bool)
    for j, (split, masks) in enumerate(draws):
        big[j * r:(j + 1) * r][:, split.calibration] = masks
    ths = resample_thresholds(sweep.scores, big, alphas)
    grid = SweepGrid.of(sweep, np.unique(ths.values))
    which = grid.index(ths.values)
    for j, (split, _) in enumerate(draws):
        i = index[j]
        cov, length = grid.coverage_length(which[:, j * r:(j + 1) * r].reshape(-1),
                                           split.test)
        cov, length = cov.reshape(len(alphas), r), length.reshape(len(alphas), r)
        pool = sweep.scores[split.calibration]
        test = sweep.scores[split.test]
        n_med, g_med = sizes[i]
        for a, alpha in enumerate(alphas):
            out._put(out.coverage, (fam, alpha), i, float(np.mean(cov[a])))
            out._put(out.length, (fam, alpha), i, float(np.mean(length[a])))
            if alpha not in band_alphas:
                continue
            lam = split_conformal(pool, alpha=alpha, warn=False).value
            b_lo, b_hi = _band(n_med, conformal_rank(n_med, alpha), pool <= lam,
                               codes[split.calibration], g_med, test <= lam,
                               codes[split.test], split.n_units_test)
            out._put(out.band_lo, (fam, alpha), i, b_lo)
            out._put(out.band_hi, (fam, alpha), i, b_hi)


def _strata(out: SeedValues, fam: str, scores: NDArray[np.float64], split: UnitSplit,
            codes: NDArray[np.intp], true_len: NDArray[np.float64],
            n_win: NDArray[np.int64], i: int) -> None:
    """The conditional study's diagnostic half for one seed: one pooled threshold at
    :data:`STRATA_ALPHA`, coverage per stratum, and the stratum's own test band."""
    cal, test = split.calibration, split.test
    pool = scores[cal]
    lam = split_conformal(pool, alpha=STRATA_ALPHA, warn=False).value
    covered = scores[test] <= lam
    test_codes = codes[test]
    k = conformal_rank(int(pool.size), STRATA_ALPHA)
    for name, mask in strata(true_len[cal], true_len[test], n_win[test]):
        if not mask.any():
            out._put(out.strata_coverage, (fam, name), i, float("nan"))
            continue
        out._put(out.strata_coverage, (fam, name), i, float(covered[mask].mean()))
        lo, hi = _band(int(pool.size), k, pool <= lam, codes[cal], split.n_units_calibration,
                       covered[mask], test_codes[mask], int(np.unique(test_codes[mask]).size))
        out._put(out.strata_lo, (fam, name), i, lo)
        out._put(out.strata_hi, (fam, name), i, hi)
