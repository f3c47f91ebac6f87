"""Nestedness of every score family: ``S <= lam  <=>  truth ⊆ C_lam`` (SPEC §3), on
the awkward tables of :mod:`grounding_cases`, plus pinned edge cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cover.data.table import GroundingTable
from cover.intervals import Intervals
from cover.ragged import Ragged
from cover.regions import build_regions
from cover.scores import FAMILIES, compute_scores, truth_target
from grounding_cases import (
    MARGIN_S,
    SETTINGS,
    Case,
    cases,
    check_nestedness,
    oracle_scale,
    score_oracle,
    scores_of,
    thresholds,
    unchecked_table,
)


@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data())
def test_nestedness_score_below_lam_iff_truth_in_region(family, data):
    case = data.draw(cases(family), label="case")
    scores = scores_of(case)
    lam = data.draw(thresholds(case, scores), label="lam")
    check_nestedness(case, scores, lam)
    # The boundary lam == S is always covered (the smallest covering threshold).
    check_nestedness(case, scores, scores.copy())


@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data())
def test_scores_match_oracle_and_counts(family, data):
    case = data.draw(cases(family), label="case")
    tb = case.table
    sc = compute_scores(tb, family, min_scale=case.min_scale, target=case.target)
    # Values: interval formula / SLS brute force over candidate thresholds.
    expected = score_oracle(case)
    if family == "sls":
        assert np.array_equal(sc.values, expected), (sc.values, expected)
    else:
        np.testing.assert_allclose(sc.values, expected, rtol=1e-12, atol=1e-12)
    # Counts.
    has_interval = np.isfinite(tb.pred_start) & np.isfinite(tb.pred_end)
    refused = (tb.relevance.lengths == 0) if family == "sls" else ~has_interval
    assert sc.refused.tolist() == refused.tolist()
    assert np.all(sc.values[refused] == -np.inf)
    assert not np.isnan(sc.values).any()
    if family == "norm":
        floored = has_interval & (tb.pred_end - tb.pred_start < case.min_scale)
    else:
        floored = np.zeros(case.n, dtype=bool)
    assert sc.floored.tolist() == floored.tolist()
    # Only SLS can need clips past the end of its signal, and exactly those rows score +inf.
    assert sc.beyond_signal.tolist() == (np.isposinf(sc.values) & ~refused).tolist()
    if family != "sls":
        assert np.isfinite(sc.values[~refused]).all()
    assert sc.counts() == {"rows": case.n, "refused": int(refused.sum()),
                           "min_scale_floored": int(floored.sum()),
                           "beyond_signal": int(sc.beyond_signal.sum())}
    # Targets: one interval covers every window iff it covers their envelope, so the
    # interval families ignore the target; for SLS covering the windows is easier.
    env = compute_scores(tb, family, min_scale=case.min_scale, target="envelope").values
    win = compute_scores(tb, family, min_scale=case.min_scale, target="windows").values
    if family == "sls":
        assert np.all(win <= env)
        single = tb.truth.n_components == 1
        assert np.array_equal(win[single], env[single])
    else:
        assert np.array_equal(env, win)


# ---- bulk randomized check at realistic magnitudes (fixed seed) --------------------------
@pytest.mark.parametrize("family", FAMILIES)
def test_nestedness_bulk_random(family):
    rng = np.random.default_rng(20240611 + FAMILIES.index(family))
    n = 4000
    clip = 2.0
    if family == "sls":
        duration = rng.choice([150.0, 148.0, 60.0, 31.0, 7.3], size=n)
    else:
        duration = rng.uniform(5.0, 3600.0, size=n)
    u = np.sort(rng.uniform(0, 1, size=(n, 2)), axis=1)
    ps, pe = u[:, 0] * duration, u[:, 1] * duration
    ps[rng.uniform(size=n) < 0.05] = np.nan
    zero = rng.uniform(size=n) < 0.1
    pe[zero] = ps[zero]
    w = np.sort(rng.uniform(0, 1, size=(n, 2)), axis=1)
    ts, te = w[:, 0] * duration, w[:, 1] * duration
    at_end = rng.uniform(size=n) < 0.1
    te[at_end] = duration[at_end]  # truth ending at the very end of the video
    ts = np.minimum(ts, te)
    full = np.ceil(duration / clip).astype(int)
    lengths = np.where(rng.uniform(size=n) < 0.1, 0, full - rng.integers(0, 3, size=n) * (
        rng.uniform(size=n) < 0.2))
    lengths = np.maximum(lengths, 0)
    if family == "sls":
        lengths[-1] = 0  # a refusal in the last row (see test_sls_refusal_in_the_last_row)
    values = rng.integers(0, 20, size=int(lengths.sum())).astype(float) / 4
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    table = GroundingTable.from_arrays(qid=np.arange(n), duration=duration, pred_start=ps,
                                       pred_end=pe, relevance=Ragged(values, offsets),
                                       truth=(ts, te), clip=clip)
    case = Case(table, family, "envelope", 1.0)
    scores = scores_of(case)
    scale = oracle_scale(case)
    for lam in (rng.uniform(-1, 10, size=n), rng.choice(values, size=n) * -1.0,
                np.full(n, 0.5), np.full(n, -0.25)):
        if family != "sls":
            far = ~np.isfinite(scores) | (np.abs(scores - lam) * scale > MARGIN_S)
            lam = np.where(far, lam, lam + 1.0)
        contained = check_nestedness(case, scores, lam)
        assert 0.0 < contained.mean() < 1.0  # both outcomes are exercised
    assert check_nestedness(case, scores, scores.copy()).all()
    assert check_nestedness(case, scores, np.full(n, np.inf)).all()


# ---- explicit edge cases -----------------------------------------------------------------
def one_row(**kw) -> GroundingTable:
    kw.setdefault("qid", ["q"])
    return unchecked_table(**kw)  # the kernel sees rows the API would refuse


@pytest.mark.parametrize("family", ["norm", "sec"])
def test_refused_interval_row_scores_minus_inf_and_gets_whole_video(family):
    tb = one_row(duration=30.0, pred_start=[np.nan], pred_end=[np.nan], truth=([3.0], [9.0]))
    sc = compute_scores(tb, family)
    assert sc.values.tolist() == [-np.inf] and sc.refused.tolist() == [True]
    for lam in (-10.0, 0.0, np.inf):
        reg = build_regions(tb, family, lam)
        assert reg.row(0) == [[0.0, 30.0]] and reg.refused.tolist() == [True]


def test_refused_sls_row_scores_minus_inf_and_gets_whole_video():
    tb = one_row(duration=30.0, relevance=[[]], truth=([3.0], [9.0]))
    sc = compute_scores(tb, "sls")
    assert sc.values.tolist() == [-np.inf] and sc.refused.tolist() == [True]
    assert build_regions(tb, "sls", -3.0).row(0) == [[0.0, 30.0]]


def test_zero_length_prediction_uses_min_scale():
    tb = one_row(duration=100.0, pred_start=[50.0], pred_end=[50.0], truth=([47.0], [52.0]))
    for min_scale, expected in ((1.0, 3.0), (2.0, 1.5), (0.5, 6.0)):
        sc = compute_scores(tb, "norm", min_scale=min_scale)
        assert sc.values.tolist() == [expected] and sc.floored.tolist() == [True]
        reg = build_regions(tb, "norm", expected, min_scale=min_scale)
        assert reg.row(0) == [[47.0, 53.0]]
    assert compute_scores(tb, "sec").values.tolist() == [3.0]


def test_zero_length_truth_and_clipping_at_both_ends():
    tb = one_row(duration=10.0, pred_start=[1.0], pred_end=[9.0], truth=([10.0], [10.0]))
    sc = compute_scores(tb, "sec")
    assert sc.values.tolist() == [1.0]
    reg = build_regions(tb, "sec", 1.0)
    assert reg.row(0) == [[0.0, 10.0]]  # [0, 10] clipped from [0, 10]
    assert reg.intervals.contains(truth_target(tb, "envelope")).tolist() == [True]
    reg = build_regions(tb, "sec", 5.0)
    assert reg.row(0) == [[0.0, 10.0]]  # clipped from [-4, 14]
    assert build_regions(tb, "sec", 0.999).intervals.contains(
        truth_target(tb, "envelope")).tolist() == [False]


def test_sls_clips_beyond_signal_score_plus_inf():
    # 10 s video, 2 s clips, but the signal stops after 3 clips (6 s).
    tb = one_row(duration=10.0, relevance=[[1.0, 2.0, 3.0]], truth=([5.0], [7.0]))
    sc = compute_scores(tb, "sls")
    assert sc.values.tolist() == [np.inf] and sc.beyond_signal.tolist() == [True]
    reg = build_regions(tb, "sls", 100.0)
    assert reg.row(0) == [[0.0, 6.0]]
    assert reg.intervals.contains(truth_target(tb, "envelope")).tolist() == [False]
    assert build_regions(tb, "sls", np.inf).row(0) == [[0.0, 10.0]]
    # A point on the last signal boundary needs only the last clip.
    tb = one_row(duration=10.0, relevance=[[1.0, 2.0, 3.0]], truth=([6.0], [6.0]))
    assert compute_scores(tb, "sls").values.tolist() == [-3.0]


def test_sls_truth_across_a_very_long_video_is_scored_without_listing_its_clips():
    """A truth window over a 1e12-second video needs 5e11 clips: the score is +inf
    (past the 3-clip signal) from the window's ends, never from an array of its clips
    (which raised MemoryError, or had the process killed for memory at ~1e9 s)."""
    for t in (1e12, 1e300):
        tb = one_row(duration=t, relevance=[[1.0, 2.0, 3.0]], truth=([0.0], [t]))
        sc = compute_scores(tb, "sls")
        assert sc.values.tolist() == [np.inf] and sc.beyond_signal.tolist() == [True]
    # inside the signal it is the same score as before: every clip the window needs
    tb = one_row(duration=1e12, relevance=[[1.0, 2.0, 3.0]], truth=([0.5], [3.5]))
    assert compute_scores(tb, "sls").values.tolist() == [-1.0]


def test_sls_multi_window_envelope_vs_windows():
    tb = one_row(duration=10.0, relevance=[[5.0, -4.0, 3.0, 1.0, 0.0]],
                 truth=Intervals.from_lists([[[0.5, 1.5], [4.5, 5.0]]]))
    env = compute_scores(tb, "sls", target="envelope").values[0]
    win = compute_scores(tb, "sls", target="windows").values[0]
    assert (env, win) == (4.0, -3.0)  # envelope needs clip 1 (f=-4); windows skip it
    reg = build_regions(tb, "sls", -3.0)
    assert reg.row(0) == [[0.0, 2.0], [4.0, 6.0]]
    assert reg.intervals.contains(truth_target(tb, "windows")).tolist() == [True]
    assert reg.intervals.contains(truth_target(tb, "envelope")).tolist() == [False]


# ---- regressions (each of these failed before the SLS score was made exact) --------------
def test_sls_refusal_in_the_last_row():
    """compute_scores(..., "sls") raised IndexError when the last row had no relevance
    signal and an earlier row had one (a gather at ``offsets[last] == values.size``
    evaluated before masking)."""
    tb = GroundingTable.from_arrays(qid=["a", "b"], duration=10.0, relevance=[[1.0], []],
                                    truth=([0.5, 0.5], [1.0, 1.0]))
    sc = compute_scores(tb, "sls")
    assert sc.values.tolist() == [-1.0, -np.inf]
    assert sc.refused.tolist() == [False, True]
    assert build_regions(tb, "sls", -1.0).intervals.to_lists() == [[[0.0, 2.0]], [[0.0, 10.0]]]


def test_sls_point_truth_at_T_with_a_signal_clip_starting_at_T():
    """T = 4 s, 2 s clips, a signal whose 3rd clip starts exactly at T. A point truth at
    t = T used to be served by that clip (S = -5), which no region ever contains; it
    must be served by clip 1 = [2, 4] (f = -1), so S = 1."""
    tb = one_row(duration=4.0, relevance=[[0.0, -1.0, 5.0]], truth=([4.0], [4.0]))
    case = Case(tb, "sls", "envelope", 1.0)
    sc = compute_scores(tb, "sls")
    assert sc.values.tolist() == [1.0] and sc.beyond_signal.tolist() == [False]
    assert check_nestedness(case, sc.values, sc.values.copy()).all()
    assert not check_nestedness(case, sc.values, np.array([0.999])).any()


def test_sls_sub_tolerance_window_straddling_a_clip_boundary():
    """A truth window of nonzero length <= 2*atol used to be scored as the point at its
    midpoint while contains() tests both endpoints. [2 - 1.4e-6, 2 + 0.4e-6] sticks out
    of clip 1 = [2, 4] by more than the 1e-6 slack, so it needs clip 0 (f = -5): S = 5."""
    tb = one_row(duration=10.0, relevance=[[-5.0, 1.0, -5.0, -5.0, -5.0]],
                 truth=([2.0 - 1.4e-6], [2.0 + 0.4e-6]))
    case = Case(tb, "sls", "envelope", 1.0)
    sc = compute_scores(tb, "sls")
    assert sc.values.tolist() == [5.0]
    assert check_nestedness(case, sc.values, sc.values.copy()).all()
    for lam in (-1.0, 4.999):
        assert not check_nestedness(case, sc.values, np.array([lam])).any()


# ---- known bug (fails on purpose until widen() is fixed) ---------------------------------
@pytest.mark.parametrize(("family", "duration", "pred", "point"), [
    # zero-length truth at T, prediction hanging over the end of the video
    ("sec", 0.112778371887871, (0.03679906757566786, 0.2631199682851063), "end"),
    ("norm", 0.112778371887871, (0.03679906757566786, 0.2631199682851063), "end"),
    # zero-length truth at 0, prediction hanging over the start
    ("norm", 8.1542612874578, (-4.591744637547498, 3.754357562571954), "start"),
])
def test_boundary_lam_keeps_a_point_region_clipped_at_the_video_edge(
        family, duration, pred, point):
    """At lam = S the widened interval, clipped to [0, T], collapses onto the point truth
    (here t = T or t = 0). widen() computes lo = s - lam*l one ulp past hi = T (or hi one
    ulp below lo = 0) and drops the component because lo > hi, so the region is empty and
    the truth is not covered although S <= lam. Found by the nestedness property with
    more random examples (~0.3% of such rows). Expected: a region [T, T] (or [0, 0]),
    e.g. keep components with lo <= hi + atol."""
    x = duration if point == "end" else 0.0
    tb = one_row(duration=duration, pred_start=[pred[0]], pred_end=[pred[1]], truth=([x], [x]))
    case = Case(tb, family, "envelope", 1.0)
    scores = scores_of(case)
    assert scores[0] < 0  # the region shrinks onto the truth
    assert check_nestedness(case, scores, scores.copy()).all()


@pytest.mark.parametrize("family", ["norm", "sec"])
@SETTINGS
@given(data=st.data())
def test_interval_scores_equal_the_where_formula(family, data):
    """The in-place, block-by-block score arithmetic gives the np.where formula it
    replaced and the paper's Eq. 1 as written (:func:`cover.scores.interval_score` over
    :func:`cover.scores.interval_scale`), bit for bit; a refusal scores -inf."""
    from cover.scores import interval_scale, interval_score

    case = data.draw(cases(family))
    tb = case.table
    ps, pe = tb.pred_start, tb.pred_end
    ts, te = tb.truth_envelope()
    if family == "sec":
        scale = np.ones_like(ps)
    else:
        length = pe - ps
        scale = np.where(length < case.min_scale, case.min_scale, length)
    refused = ~(np.isfinite(ps) & np.isfinite(pe))
    with np.errstate(invalid="ignore"):
        s_start = np.where(refused, -np.inf, (ps - ts) / scale)
        s_end = np.where(refused, -np.inf, (te - pe) / scale)
        eq1 = np.where(refused, -np.inf, interval_score(
            ps, pe, ts, te, interval_scale(ps, pe, family, case.min_scale)[0]))
    got = compute_scores(tb, family, min_scale=case.min_scale)
    np.testing.assert_array_equal(got.start, s_start)
    np.testing.assert_array_equal(got.end, s_end)
    np.testing.assert_array_equal(got.values, np.maximum(s_start, s_end))
    np.testing.assert_array_equal(got.values, eq1)


@pytest.mark.parametrize("family", ["norm", "sec"])
@pytest.mark.parametrize("validated", [False, True])
def test_block_by_block_scores_and_regions_equal_the_whole_column_formulas(
        family, validated, monkeypatch):
    """Scores and regions computed in blocks (here 7 rows: blocks end mid-table), with
    and without the per-side scores, and on a validated table without refusals (the
    "answered" mark skips the refusal tests), equal the whole-column formulas."""
    import cover.calibrate.quantile
    import cover.scores
    import cover.widening
    from cover.calibrate.quantile import kth_smallest

    for mod in (cover.scores, cover.widening, cover.calibrate.quantile):
        monkeypatch.setattr(mod, "BLOCK_ROWS", 7)
    monkeypatch.setattr(cover.calibrate.quantile, "SAMPLED_SELECT_MIN", 10)
    monkeypatch.setattr(cover.calibrate.quantile, "_SAMPLE", 8)  # the bracketed select
    rng = np.random.default_rng(3)
    n = 40
    T = np.full(n, 100.0)
    ps = rng.uniform(0, 50, n)
    pe = ps + rng.choice([0.0, 0.3, 5.0, 20.0], n)  # some lengths below min_scale
    ts, te = rng.uniform(0, 40, n), rng.uniform(60, 100, n)
    if not validated:
        ps[[3, 17]] = np.nan  # refusals
    kw = {"qid": np.arange(n), "duration": T, "pred_start": ps, "pred_end": pe,
          "truth": (ts, te)}
    tb = (GroundingTable.from_arrays(**kw) if validated else
          GroundingTable(qid=np.arange(n), vid=np.arange(n), duration=T, pred_start=ps,
                         pred_end=pe, relevance=Ragged(np.empty(0), np.zeros(n + 1, np.int64)),
                         truth=Intervals.single(ts, te)))
    assert ("answered" in tb.checked) == validated
    refused = ~(np.isfinite(ps) & np.isfinite(pe))
    length = pe - ps
    scale = np.ones(n) if family == "sec" else np.maximum(length, 1.0)
    with np.errstate(invalid="ignore"):
        s_start = np.where(refused, -np.inf, (ps - ts) / scale)
        s_end = np.where(refused, -np.inf, (te - pe) / scale)
    for sides in (True, False):
        got = compute_scores(tb, family, sides=sides)
        np.testing.assert_array_equal(got.values, np.maximum(s_start, s_end))
        np.testing.assert_array_equal(got.refused, refused)
        assert (got.start is not None) == sides
        floored = (length < 1.0) & ~refused if family == "norm" else np.zeros(n, bool)
        np.testing.assert_array_equal(got.floored, floored)
        assert got.counts() == {"rows": n, "refused": int(refused.sum()),
                                "min_scale_floored": int(floored.sum()), "beyond_signal": 0}
    q = 0.37
    reg = build_regions(tb, family, q)
    with np.errstate(invalid="ignore"):
        lo = np.where(refused, 0.0, np.maximum(ps - q * scale, 0.0))
        hi = np.where(refused, T, np.minimum(pe + q * scale, T))
    np.testing.assert_array_equal(reg.intervals.starts, lo)
    np.testing.assert_array_equal(reg.intervals.ends, hi)
    np.testing.assert_array_equal(reg.refused, refused)
    s = rng.permutation(np.arange(n, dtype=float))
    assert [kth_smallest(s, k) for k in (1, 20, 40)] == [0.0, 19.0, 39.0]
