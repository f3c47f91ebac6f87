"""Unit-level splits: calibration pool vs test, and resamples of the pool.

The paper's protocol: split source videos 40/60 into pool/test with seed 42,
then estimate variability from 50 resamples of 50% of the pool's units.
"""

from __future__ import annotations

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
    if not 0.0 < frac < 1.0:
        raise ValueError(f"fraction must be in (0, 1), got {frac}")
    uniq, inverse = np.unique(units, return_inverse=True)
    n_pick = round(frac * uniq.size)
    n_pick = min(max(n_pick, 1), uniq.size - 1) if uniq.size > 1 else uniq.size
    picked = np.zeros(uniq.size, dtype=bool)
    picked[rng.permutation(uniq.size)[:n_pick]] = True
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
