"""Permutation KS: the matrix form equals the two-sample KS, and the test has power."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import ks_2samp

from cover.studies.common import ks_statistic
from cover.studies.exchangeability import ks_rows, permutation_ks


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.integers(0, 2**31), st.integers(2, 80))
def test_ks_rows_equals_two_sample_ks(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=n), 1)  # rounding makes ties
    x[rng.random(n) < 0.1] = -np.inf
    mask = rng.random((5, n)) < 0.5
    mask[:, 0], mask[:, 1] = True, False
    order = np.argsort(x, kind="stable")
    got = ks_rows(x[order], mask[:, order])
    for i in range(5):
        want = ks_statistic(x[mask[i]], x[~mask[i]])
        assert abs(got[i] - want) < 1e-12
        finite = np.isfinite(x)
        if finite[mask[i]].all() and finite[~mask[i]].all():
            assert abs(want - ks_2samp(x[mask[i]], x[~mask[i]]).statistic) < 1e-12


def test_permutation_p_is_large_under_exchangeability_and_small_under_shift() -> None:
    rng = np.random.default_rng(0)
    units = np.repeat(np.arange(120).astype(str), 3)
    in_pool = np.isin(units, np.arange(0, 120, 2).astype(str))
    same = rng.normal(size=units.size)
    _, p_same, perm = permutation_ks(same, units, in_pool, n_perm=400)
    assert perm.shape == (400,)
    assert 1 / 401 <= p_same <= 1
    assert p_same > 0.01
    shifted = same + np.where(in_pool, 0.8, 0.0)
    _, p_shift, _ = permutation_ks(shifted, units, in_pool, n_perm=400)
    assert p_shift == 1 / 401


def _video_pair(shared: bool, n_videos: int = 150, per_video: int = 4, seed: int = 0):
    """Boundary errors with (``shared``) or without a per-video component."""
    import cover
    from cover.studies.context import Pair
    from cover.studies.protocol import Protocol

    rng = np.random.default_rng(seed)
    n = n_videos * per_video
    base = np.repeat(rng.normal(0, 15, n_videos), per_video) if shared else np.zeros(n)
    ts = rng.uniform(10, 100, n)
    te = ts + rng.uniform(5, 30, n)
    err = np.abs(base) + np.abs(rng.normal(0, 1, n))
    table = cover.GroundingTable.from_arrays(
        qid=np.arange(n), vid=np.repeat(np.arange(n_videos), per_video).astype(str),
        duration=150.0, pred_start=ts + err, pred_end=np.maximum(te, ts + err + 1.0),
        truth=(ts, te))
    return Pair("g", "d", table, Protocol(n_resamples=2))


def test_within_video_dependence_reads_the_design_effect() -> None:
    from cover.bands import unit_design_effect
    from cover.studies.exchangeability import within_video_dependence

    clustered = within_video_dependence(_video_pair(shared=True), "norm")
    alone = within_video_dependence(_video_pair(shared=False), "norm")
    assert clustered["icc"] > 0.5 > 0.05 > alone["icc"] >= 0
    assert clustered["calibration_rows_sharing_a_test_video"] == 0  # split by video
    pair = _video_pair(shared=True)
    lam = clustered["threshold"]
    covered = pair.sweep("test", "norm").scores <= lam
    deff, g = unit_design_effect(covered, pair.test.units)
    assert (clustered["design_effect"], clustered["test_units"]) == (deff, g)
    # Kish: deff = 1 + (m_w - 1) rho, m_w = 4 queries in every video.
    assert clustered["queries_per_video"] == 4.0
    assert abs(1 + 3 * clustered["icc"] - deff) < 1e-12
    assert abs(clustered["effective_n"] - covered.size / deff) < 1e-9


def test_study_reports_the_prop3_table() -> None:
    from cover.studies.exchangeability import exchangeability

    res = exchangeability(_video_pair(shared=True), n_perm=50)
    table = next(t for t in res.tables if t.key == "exchangeability_dependence")
    assert "Prop. 3" in table.caption and "zero by design" in table.caption
    assert table.header[-1] == "Cal. rows sharing a test video"
    assert [r[-1] for r in table.rows] == ["0", "0"]  # NORM and SEC
    assert [d["family"] for d in res.data["within_video"]] == ["norm", "sec"]


def test_permutation_subsets_are_the_units_of_smallest_draw() -> None:
    """The permuted pools (one partition per permutation) are the subsets the double
    argsort ranking picked: the same statistics, seed for seed."""
    rng = np.random.default_rng(2)
    n = 120
    units = np.array([f"v{i // 3}" for i in range(n)])
    scores = rng.normal(size=n)
    in_pool = np.isin(units, [f"v{i}" for i in range(0, 40, 2)])
    perm = permutation_ks(scores, units, in_pool, n_perm=300, seed=7)[2]
    order = np.argsort(scores, kind="stable")
    uniq, inverse = np.unique(units[order], return_inverse=True)
    k = np.unique(units[in_pool]).size
    r = np.random.default_rng(np.random.SeedSequence([7, 8]))
    want = np.concatenate([
        ks_rows(scores[order], (np.argsort(np.argsort(r.random((q, uniq.size)), axis=1),
                                           axis=1) < k)[:, inverse])
        for q in (250, 50)])
    np.testing.assert_array_equal(perm, want)


def test_permutations_by_unit_codes_and_in_any_block_are_the_same_bits(monkeypatch) -> None:
    """Integer unit codes (the names' sorted order) give the names' statistics, the
    permutations counted a few draw chunks at a time give those counted all at once, and
    several score columns tested on one set of draws give each column's own test."""
    import cover.studies.exchangeability as ex
    from cover.data.splits import unit_codes

    rng = np.random.default_rng(5)
    n = 150
    units = np.array([f"v{(i * 7) % 41:02d}" for i in range(n)])
    scores = np.round(rng.normal(size=n), 1)
    in_pool = np.isin(units, [f"v{i:02d}" for i in range(0, 41, 3)])
    want = permutation_ks(scores, units, in_pool, n_perm=700, seed=3)
    got = permutation_ks(scores, unit_codes(units), in_pool, n_perm=700, seed=3)
    monkeypatch.setattr(ex, "_CELLS", n * ex._CHUNK)  # one draw chunk per block
    blocks = permutation_ks(scores, units, in_pool, n_perm=700, seed=3)
    other_scores = np.where(scores > 0, scores, -np.inf)
    many = ex.permutation_ks_many([other_scores, scores], units, in_pool, n_perm=700, seed=3)
    first = permutation_ks(other_scores, units, in_pool, n_perm=700, seed=3)
    for other, ref in ((got, want), (blocks, want), (many[1], want), (many[0], first)):
        assert other[:2] == ref[:2]
        np.testing.assert_array_equal(other[2], ref[2])
