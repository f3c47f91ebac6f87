"""The study protocol refuses what it cannot measure: every setting checked when built."""

from __future__ import annotations

import pytest

from cover.studies.protocol import PAPER_ALPHAS, Protocol


@pytest.mark.parametrize(("kw", "why"), [
    ({"cal_frac": 1.0}, "cal_frac must be in (0, 1), got 1.0"),
    ({"resample_frac": 0.0}, "resample_frac must be in (0, 1], got 0.0"),
    ({"n_resamples": -1}, "n_resamples must be 0 (the whole pool once) or >= 2"),
    # one resample: a mean +/- sd whose sd is 0 by construction, not a measured spread
    ({"n_resamples": 1}, "n_resamples must be 0 (the whole pool once) or >= 2 (the spread "
                         "over resamples needs two), got 1"),
    ({"alphas": ()}, "alphas must be a non-empty list in (0, 1)"),
    ({"alphas": (0.1, 1.0)}, "alphas must be a non-empty list in (0, 1)"),
    # a repeated alpha: a repeated row of every table and figure
    ({"alphas": (0.1, 0.2, 0.1)}, "alphas must be distinct, got (0.1, 0.2, 0.1)"),
])
def test_a_protocol_that_measures_nothing_is_refused(kw: dict, why: str) -> None:
    with pytest.raises(ValueError) as err:
        Protocol(**kw)
    assert str(err.value).startswith(why), str(err.value)


@pytest.mark.parametrize("n", [0, 2, 50])
def test_the_whole_pool_or_two_resamples_and_more_are_taken(n: int) -> None:
    p = Protocol(n_resamples=n, alphas=(0.3, 0.1))
    assert p.to_dict() == {"cal_frac": 0.4, "seed": 42, "n_resamples": n,
                           "resample_frac": 0.5, "alphas": [0.3, 0.1]}
    assert Protocol().alphas == PAPER_ALPHAS
