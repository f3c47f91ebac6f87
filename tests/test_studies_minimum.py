"""How many rows a study needs (cover.studies.minimum)."""

from __future__ import annotations

import numpy as np
import pytest

from cover.calibrate.quantile import conformal_rank
from cover.errors import InputError
from cover.studies.minimum import calibration_rows_needed, check_enough_rows
from cover.studies.protocol import Protocol


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.01, 0.15])
def test_calibration_rows_needed_is_the_smallest_n_with_k_at_most_n(alpha: float) -> None:
    n = calibration_rows_needed(alpha)
    assert conformal_rank(n, alpha) <= n
    assert n == 1 or conformal_rank(n - 1, alpha) > n - 1


def test_check_enough_rows_names_the_study_and_counts() -> None:
    units = np.repeat([f"v{i}" for i in range(100)], 2)  # 200 rows, 2 per video
    proto = Protocol(n_resamples=3, alphas=(0.1,))
    check_enough_rows(units, proto, ("coverage", "efficiency", "exchangeability"), what="p")
    with pytest.raises(InputError, match=r"^p: too few rows for coverage: alpha 0.01 needs at "
                       r"least 99 calibration rows in every resample .* the smallest of the 3 "
                       r"calibration resamples holds 40 .*the calibration pool has 80 of the "
                       r"200 rows \(40 of 100 videos, --cal-frac 0.4\), the test split has 120"):
        check_enough_rows(units, Protocol(n_resamples=3, alphas=(0.01,)), ("coverage",),
                          what="p")
    # Without resamples the whole pool calibrates.
    check_enough_rows(units, Protocol(n_resamples=0, alphas=(0.0125,)), ("coverage",), what="p")
    with pytest.raises(InputError, match="at least 2 videos"):
        check_enough_rows(["a"] * 50, proto, ("coverage",), what="p")


def test_a_drawn_split_is_checked_as_the_units_are() -> None:
    """check_split_rows on the split and resamples already drawn (a study pair's) raises
    what check_enough_rows raises on the units: the same message, word for word."""
    from cover.data.splits import resample_units, split_by_unit
    from cover.studies.minimum import check_split_rows

    for units, proto in ((np.repeat([f"v{i}" for i in range(10)], 2), Protocol(n_resamples=3)),
                         (np.repeat([f"v{i}" for i in range(10)], 2), Protocol(n_resamples=0)),
                         (np.array(["v0"] * 5), Protocol(n_resamples=2))):
        split = split_by_unit(units, cal_frac=proto.cal_frac, seed=proto.seed)
        masks = np.stack(resample_units(units[split.calibration],
                                        n_resamples=max(proto.n_resamples, 1),
                                        frac=proto.resample_frac, seed=proto.seed))
        with pytest.raises(InputError) as want:
            check_enough_rows(units, proto, ("coverage",), what="p.jsonl")
        with pytest.raises(InputError) as got:
            check_split_rows(split, masks, proto, ("coverage",), what="p.jsonl")
        assert str(got.value) == str(want.value)
        assert "p.jsonl: too few rows" in str(got.value)
