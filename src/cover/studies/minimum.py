"""How many rows a study needs, checked before any work or any file is written.

The rule (after the unit-level split of :class:`Protocol`):

* the rows come from at least two units (source videos), so that the split has a
  calibration pool and a test split;
* the test split holds at least one row (study 7, exchangeability, replays it as a
  stream with a trailing window: at least :data:`WINDOW` rows);
* every calibration resample (the whole pool when ``n_resamples == 0``) holds at least
  ``n`` rows with ``k = ceil((n + 1)(1 - alpha)) <= n`` at the study's smallest alpha,
  i.e. ``n >= (1 - alpha) / alpha``: with fewer, the threshold is ``+inf`` in every
  resample, every region is the whole video and the study measures nothing.

Each study calibrates at its own alphas: study 1 (coverage, ``cover validity``) at the
protocol's grid, two-param at half the headline alpha (Bonferroni: 0.05), the others at
the headline 0.1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.calibrate.quantile import as_fraction
from cover.data.splits import UnitSplit, resample_units, split_by_unit
from cover.errors import InputError, counted
from cover.studies.protocol import Protocol

#: Trailing window of study 7's rolling miss rate, steps (its test split needs as many rows).
WINDOW = 100

#: The smallest alpha each study calibrates at, when not the protocol's grid.
STUDY_ALPHA: dict[str, float] = {"two-param": 0.05}
#: Alpha of the studies not named above or in :data:`GRID_STUDIES` (the headline 0.1).
HEADLINE_ALPHA = 0.1
#: Studies that calibrate at every alpha of the protocol's grid.
GRID_STUDIES = frozenset({"coverage", "validity"})
#: Test rows a study needs, when more than one.
STUDY_TEST_ROWS: dict[str, int] = {"exchangeability": WINDOW}


def calibration_rows_needed(alpha: float) -> int:
    """The smallest ``n`` with ``ceil((n + 1)(1 - alpha)) <= n`` (exact arithmetic)."""
    a = as_fraction(alpha)
    return max(1, math.ceil((1 - a) / a))


def study_alpha(study: str, protocol: Protocol) -> float:
    """The smallest alpha ``study`` calibrates at."""
    if study in GRID_STUDIES:
        return min(protocol.alphas)
    return STUDY_ALPHA.get(study, HEADLINE_ALPHA)


def _check_videos(n_rows: int, n_units: int, what: str) -> None:
    if n_units < 2:
        raise InputError(
            f"{what}: too few rows to study: {counted(n_rows, 'row')} from "
            f"{counted(n_units, 'video')}; the calibration pool and the test split "
            "are split by video, so the rows must come from at least 2 videos")


def check_enough_rows(units: ArrayLike, protocol: Protocol, studies: Sequence[str], *,
                      what: str, flags: Sequence[str] = ("--alphas", "--cal-frac")) -> None:
    """Raise :class:`InputError` naming ``what`` (the input), the study, how many rows it
    needs and how many the split gives, when the rows are too few for any of ``studies``
    (see the module docstring); ``flags`` are the command's options that would help."""
    u = np.asarray(units).astype(str)
    _check_videos(u.size, int(np.unique(u).size), what)
    split = split_by_unit(u, cal_frac=protocol.cal_frac, seed=protocol.seed)
    masks = (np.stack(resample_units(u[split.calibration], n_resamples=protocol.n_resamples,
                                     frac=protocol.resample_frac, seed=protocol.seed))
             if protocol.n_resamples > 0 else None)
    check_split_rows(split, masks, protocol, studies, what=what, flags=flags)


def check_split_rows(split: UnitSplit, masks: NDArray[np.bool_] | None, protocol: Protocol,
                     studies: Sequence[str], *, what: str,
                     flags: Sequence[str] = ("--alphas", "--cal-frac")) -> None:
    """:func:`check_enough_rows` of a split already drawn (``masks``: its calibration
    resamples, one per row; read only when ``protocol.n_resamples > 0``)."""
    n_pool, n_test = int(split.calibration.sum()), int(split.test.sum())
    n_rows, n_units = n_pool + n_test, split.n_units_calibration + split.n_units_test
    _check_videos(n_rows, n_units, what)
    where = (f"the calibration pool has {n_pool} of the {n_rows} rows "
             f"({split.n_units_calibration} of {n_units} videos, --cal-frac "
             f"{protocol.cal_frac:g}), the test split has {n_test}")
    if protocol.n_resamples > 0:
        assert masks is not None
        smallest = int(masks.sum(axis=1).min())
        per = (f"the smallest of the {protocol.n_resamples} calibration resamples holds "
               f"{smallest} (each keeps {protocol.resample_frac:g} of the pool's videos)")
    else:
        smallest, per = n_pool, f"the calibration pool holds {n_pool}"
    for study in studies:
        need_test = STUDY_TEST_ROWS.get(study, 1)
        if n_test < need_test:
            raise InputError(
                f"{what}: too few rows for {study}: it needs at least "
                f"{counted(need_test, 'test row')}; {where}; give more rows, or a smaller "
                "--cal-frac")
        alpha = study_alpha(study, protocol)
        need = calibration_rows_needed(alpha)
        if smallest < need:
            # --alphas moves only the studies that calibrate at the protocol's grid.
            helps = [f for f in flags if f != "--alphas" or study in GRID_STUDIES]
            raise InputError(
                f"{what}: too few rows for {study}: alpha {alpha:g} needs at least {need} "
                f"calibration rows in every resample (k = ceil((n+1)(1-alpha)) <= n); "
                f"{per}; {where}; give more rows, or a larger {' / '.join(helps)}")
