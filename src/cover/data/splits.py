"""Unit-level splits: calibration pool vs test, and resamples of the pool.

The paper's protocol: split source videos 40/60 into pool/test with seed 42,
then estimate variability from 50 resamples of 50% of the pool's units.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray


@dataclass(frozen=True)
class UnitSplit:
    """Boolean row masks of a unit-level split."""

    calibration: NDArray[np.bool_]
    test: NDArray[np.bool_]
    n_units_calibration: int
    n_units_test: int


def _choose_units(units: NDArray[np.str_], frac: float, rng: np.random.Generator) -> NDArray[
    np.bool_
]:
    """Mask of rows whose unit is among ``round(frac * n_units)`` units drawn without
    replacement (units sorted first, so the draw depends only on the seed)."""
    uniq, inverse = np.unique(units, return_inverse=True)
    return _pick_units(inverse.reshape(-1), uniq.size, frac, rng)


def _pick_units(inverse: NDArray[np.intp], n_units: int, frac: float,
                rng: np.random.Generator) -> NDArray[np.bool_]:
    """:func:`_choose_units` given the rows' unit codes (``0 .. n_units - 1`` in sorted
    order of the unit names)."""
    if not 0.0 < frac < 1.0:
        raise ValueError(f"fraction must be in (0, 1), got {frac}")
    n_pick = round(frac * n_units)
    n_pick = min(max(n_pick, 1), n_units - 1) if n_units > 1 else n_units
    picked = np.zeros(n_units, dtype=bool)
    picked[rng.permutation(n_units)[:n_pick]] = True
    return picked[inverse]


def split_by_unit(units: ArrayLike, *, cal_frac: float = 0.4, seed: int = 42) -> UnitSplit:
    """Split rows by unit: ``cal_frac`` of the units go to calibration, the rest to test."""
    u = np.asarray(units).astype(str)
    cal = _choose_units(u, cal_frac, np.random.default_rng(seed))
    return UnitSplit(
        calibration=cal,
        test=~cal,
        n_units_calibration=int(np.unique(u[cal]).size),
        n_units_test=int(np.unique(u[~cal]).size),
    )


def resample_units(
    units: ArrayLike, *, n_resamples: int = 50, frac: float = 0.5, seed: int = 42
) -> list[NDArray[np.bool_]]:
    """``n_resamples`` row masks, each keeping ``frac`` of the units (independent draws
    from one seeded generator)."""
    u = np.asarray(units).astype(str)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    return [_choose_units(u, frac, rng) for _ in range(n_resamples)]


def unit_codes(units: ArrayLike) -> NDArray[np.intp]:
    """Each row's unit as an integer ``0 .. U - 1`` in sorted order of the unit names: the
    same draws and the same per-unit order as the names themselves, without comparing
    strings again."""
    return np.unique(np.asarray(units).astype(str), return_inverse=True)[1].reshape(-1)


def seeded_splits(codes: NDArray[np.intp], seeds: Iterable[int], *, cal_frac: float = 0.4,
                  n_resamples: int = 50, frac: float = 0.5
                  ) -> Iterator[tuple[UnitSplit, NDArray[np.bool_]]]:
    """Per seed, ``(split, masks)``: bit for bit ``split_by_unit(units, seed=seed)`` and
    ``np.stack(resample_units(pool units, seed=seed))`` (``(n_resamples, n_pool)``; one
    all-true row when ``n_resamples`` is 0), from :func:`unit_codes` of the units."""
    n_units = int(codes.max()) + 1 if codes.size else 0
    for seed in seeds:
        cal = _pick_units(codes, n_units, cal_frac, np.random.default_rng(seed))
        pool_units, pool_codes = np.unique(codes[cal], return_inverse=True)
        split = UnitSplit(cal, ~cal, int(pool_units.size), int(np.unique(codes[~cal]).size))
        if n_resamples > 0:
            rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
            masks = np.stack([_pick_units(pool_codes, pool_units.size, frac, rng)
                              for _ in range(n_resamples)])
        else:
            masks = np.ones((1, int(cal.sum())), dtype=bool)
        yield split, masks
