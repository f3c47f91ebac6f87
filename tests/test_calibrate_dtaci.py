"""DtACI: levels stay bounded on any stream; the miss rate tracks alpha through a shift."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.calibrate.dtaci import DEFAULT_GAMMAS, DtACI


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=300),
       st.sampled_from([0.05, 0.1, 0.3]))
def test_levels_and_weights_stay_bounded_on_any_stream(betas, alpha):
    d = DtACI(alpha)
    g = max(DEFAULT_GAMMAS)
    for b in betas:
        d.update(b)
        assert all(-gi - 1e-12 <= a <= 1 + gi + 1e-12
                   for a, gi in zip(d.levels, d.gammas, strict=True))
        assert -g - 1e-12 <= d.alpha_t <= 1 + g + 1e-12
        assert all(w > 0 for w in d.weights) and abs(sum(d.weights) - 1) < 1e-9
    assert d.t == len(betas)


def test_miss_rate_tracks_alpha_through_a_shift():
    rng = np.random.default_rng(0)
    # Scores calibrated on N(0, 1), then the traffic moves to N(1, 1.5): the realised
    # level against the calibration scores drops and stays low.
    ref = np.sort(rng.normal(size=500))
    stream = np.concatenate([rng.normal(size=1000), rng.normal(1, 1.5, size=3000)])
    beta = 1 - np.searchsorted(ref, stream) / ref.size
    d = DtACI(0.1)
    miss = [d.update(float(b)) for b in beta]
    fixed = np.mean(beta[1000:] < 0.1)  # the calibrated level, never moved
    assert fixed > 0.3
    assert abs(np.mean(miss[1000:]) - 0.1) < 0.03


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="alpha"):
        DtACI(1.5)
    with pytest.raises(ValueError, match="gammas"):
        DtACI(0.1, gammas=(0.0,))
    with pytest.raises(ValueError, match="beta"):
        DtACI(0.1).update(2.0)
