"""One row at a time: the region of the vectorised path, bit for bit."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cover
from cover.errors import CoverWarning, InputError
from cover.ragged import Ragged
from cover.stream.row import RowCertifier, certify_row


def _cal_table(n: int = 200, seed: int = 0) -> cover.GroundingTable:
    rng = np.random.default_rng(seed)
    ts = rng.uniform(0, 110, n)
    rel = Ragged(rng.normal(0, 1, n * 75), np.arange(n + 1, dtype=np.int64) * 75)
    return cover.GroundingTable.from_arrays(
        qid=np.arange(n), duration=150.0,
        pred_start=np.maximum(ts + rng.normal(0, 4, n), 0),  # inside the video
        pred_end=ts + 20 + rng.normal(0, 4, n), truth=(ts, ts + 20), relevance=rel)


CALS = {
    (score, rule): cover.Calibrator(score=score, rule=rule, alpha=0.1).fit(_cal_table())
    for score, rule in [("norm", "split"), ("sec", "split"), ("norm", "bonferroni"),
                        ("sec", "asymmetric"), ("sls", "split")]
}

rows = st.tuples(st.floats(0, 200), st.floats(0, 60), st.floats(0.5, 300), st.booleans())


@settings(max_examples=60, deadline=None)
@given(key=st.sampled_from(sorted(CALS)), row=rows)
def test_one_row_equals_the_table_path(key, row):
    s, length, t, refuse = row
    e = s + length
    if refuse:
        s = e = math.nan
    cal = CALS[key]
    sal = np.linspace(-1, 1, 75).tolist()
    cert = RowCertifier(cal)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverWarning)  # a window partly outside: clipped
        try:
            table = cover.GroundingTable.from_arrays(
                qid=["q"], duration=t, pred_start=[s], pred_end=[e],
                relevance=Ragged(np.asarray(sal), np.array([0, 75])))
        except InputError as err:  # wholly outside [0, T]: refused on both paths
            assert "lies wholly outside the video" in str(err)
            with pytest.raises(InputError, match="lies wholly outside the video"):
                cert(s, e, t, saliency=sal)
            return
    want = cal.certify(table).row(0)
    assert want != []
    assert cert.fast == (key[0] != "sls")
    assert cert(s, e, t, saliency=sal) == want == certify_row(cal, s, e, t, saliency=sal)


def test_bad_rows_are_errors():
    cert = RowCertifier(CALS[("norm", "split")])
    with pytest.raises(ValueError, match="start > end"):
        cert(5.0, 4.0, 100.0)
    with pytest.raises(ValueError, match="duration"):
        cert(1.0, 4.0, math.nan)
    assert cert(math.nan, math.nan, 100.0) == [[0.0, 100.0]]


def test_a_window_outside_the_video_is_refused_not_an_empty_region():
    """The issue's case: ``RowCertifier(cal)(500, 600, 100)`` was ``[]`` "certified"."""
    cert = RowCertifier(CALS[("norm", "split")])
    with pytest.raises(InputError, match=r"predicted interval \[500, 600\] lies wholly outside "
                                         r"the video \[0, 100\]"):
        cert(500, 600, 100)
    with pytest.raises(InputError, match="duration must be a finite number > 0, got 0"):
        cert(1.0, 2.0, 0.0)
    with pytest.raises(InputError, match='start holds the string "1" where a number is'):
        cert("1", 2.0, 10.0)
    with pytest.raises(InputError, match="duration holds true"):
        cert(1.0, 2.0, True)
    assert cert(-5.0, 20.0, 100.0) == cert(0.0, 20.0, 100.0) and cert.clipped == 1
    with pytest.raises(InputError, match="strict mode"):
        RowCertifier(CALS[("norm", "split")], strict=True)(-5.0, 20.0, 100.0)


@settings(max_examples=80, deadline=None, derandomize=True, database=None)
@given(key=st.sampled_from(sorted(CALS)),
       row=st.tuples(st.floats(-1e3, 1e3), st.floats(-1e3, 1e3), st.floats(-10, 300)))
def test_any_row_is_a_region_or_an_input_error_never_empty(key, row):
    s, e, t = row
    cert = RowCertifier(CALS[key])
    try:
        region = cert(s, e, t)
    except InputError as err:
        assert "Traceback" not in str(err)
        assert not (0 < t and s <= e and 0 <= s and e <= t)  # a plain row is never refused
        return
    assert region and all(0.0 <= lo <= hi <= t for lo, hi in region)


def test_numbers_that_are_not_python_floats_take_the_same_path():
    """Ints and numpy numbers give the region of the same Python floats; text and
    booleans stay errors naming the field."""
    cert = RowCertifier(CALS[("norm", "split")])
    want = cert(12.0, 30.0, 150.0)
    assert cert(np.float64(12.0), 30, np.float32(150.0)) == want
    assert cert(12, np.int64(30), 150) == want
    with pytest.raises(InputError, match="start"):
        cert("12", 30.0, 150.0)
    with pytest.raises(InputError, match="duration"):
        cert(12.0, 30.0, True)
    with pytest.raises(InputError, match=r"^start holds true where a number is expected$"):
        cert(np.True_, 30.0, 150.0)  # numpy's boolean named as JSON, not as a repr


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(sal=st.lists(st.floats(-4, 4) | st.sampled_from([-1.0, 0.0, 1.0]), max_size=90),
       t=st.floats(0.5, 200) | st.sampled_from([2.0, 4.0, 150.0, 151.0]),
       window=st.sampled_from([(10.0, 20.0), (math.nan, math.nan), (-3.0, 5.0)]),
       at_lam=st.booleans())
def test_sls_read_off_the_relevance_equals_the_table_path(sal, t, window, at_lam):
    """Ties at the threshold, signals longer or shorter than the video, clip edges at T,
    refusals (no signal) and NaN windows: the region of the one-row table, bit for bit."""
    cal = CALS[("sls", "split")]
    cert = RowCertifier(cal)
    assert cert.fast_sls and not cert.fast
    if at_lam and sal:
        sal[0] = -float(cal.threshold_)  # exactly on the level: kept
    s, e = window
    if not (math.isnan(s) or e <= t):
        return  # wholly or partly outside: the window rules, tested above
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CoverWarning)  # the window partly outside: clipped
        table = cover.GroundingTable.from_arrays(
            qid=["q"], duration=t, pred_start=[s], pred_end=[e], clip=cal.clip_,
            relevance=Ragged(np.asarray(sal, dtype=np.float64), np.array([0, len(sal)])))
    want = cal.certify(table).row(0)
    assert cert(s, e, t, saliency=sal, clip=cal.clip_) == want
    assert cert(s, e, t, saliency=np.asarray(sal), clip=cal.clip_) == want


def test_sls_rows_the_relevance_cannot_give_are_refused_or_take_the_table_path():
    cal = CALS[("sls", "split")]
    cert = RowCertifier(cal)
    for bad in ([0.0, math.inf], np.array([0.0, math.nan])):  # the readers' words
        with pytest.raises(InputError, match=r"^non-finite number in pred_saliency_scores$"):
            cert(1.0, 2.0, 10.0, saliency=bad)
    with pytest.raises(ValueError, match=r"relevance clips are 1\.0 s here"):
        cert(1.0, 2.0, 10.0, saliency=[0.0, 1.0], clip=1.0)
    assert cert(1.0, 2.0, 10.0, saliency=[]) == [[0.0, 10.0]]  # no signal: a refusal


def test_sls_clips_at_the_video_end_are_counted_exactly():
    """With 0.1 s clips, ``ceil(T / c)`` is one clip off either way at some T (0.9 s and
    its neighbours: 9 * 0.1 is 0.9000000000000001): which clips start before T is decided
    by ``i * c < T`` itself, as in the table path."""
    rng = np.random.default_rng(4)
    n = 300
    ts = rng.uniform(0, 6, n)
    rel = Ragged(rng.normal(0, 1, n * 75), np.arange(n + 1, dtype=np.int64) * 75)
    cal = cover.Calibrator(score="sls", alpha=0.2).fit(cover.GroundingTable.from_arrays(
        qid=np.arange(n), duration=7.5, pred_start=ts, pred_end=ts + 1, truth=(ts, ts + 1),
        relevance=rel, clip=0.1))
    cert = RowCertifier(cal)
    assert cert.fast_sls and math.isfinite(float(cal.threshold_))
    # Every other clip kept (both ways): a clip wrongly counted as starting before T
    # would add a run of its own.
    signals = [[5.0, -50.0] * 37 + [5.0], [-50.0, 5.0] * 37 + [-50.0]]
    for k in range(1, 76):
        for t in (k * 0.1, math.nextafter(k * 0.1, math.inf), math.nextafter(k * 0.1, 0)):
            for sal in signals:
                table = cover.GroundingTable.from_arrays(
                    qid=["q"], duration=t, pred_start=[0.0], pred_end=[t / 2], clip=0.1,
                    relevance=Ragged(np.asarray(sal), np.array([0, 75])))
                want = cal.certify(table).row(0)
                assert cert(0.0, t / 2, t, saliency=sal, clip=0.1) == want, (k, t)


@pytest.mark.parametrize("key", [("sls", "split"), ("norm", "bonferroni")])
def test_relevance_values_are_refused_as_the_readers_refuse_them(key):
    """A boolean or a string among the relevance values is an error naming it (numpy
    would read True as 1.0 and "2" as 2.0), on the fast path and the table path alike."""
    cert = RowCertifier(CALS[key])
    clip = CALS[key].clip_ or 2.0
    for odd, words in (([0.1, True, 0.3], "holds true where"),
                       ([0.1, "2", 0.3], 'holds the string "2" where'),
                       (np.array([True, False]), "holds true where"),
                       ([[0.1, 0.2]], r"holds \[0.1, 0.2\] where")):
        for window in ((1.0, 2.0), (math.nan, math.nan)):  # a refusal is still read
            with pytest.raises(InputError, match=f"pred_saliency_scores {words}"):
                cert(*window, 10.0, saliency=odd, clip=clip)
    for huge in ([0.1, 10**400], [np.float64(0.1), 10**400]):  # beyond float range
        with pytest.raises(InputError, match="non-finite number in pred_saliency_scores"):
            cert(1.0, 2.0, 10.0, saliency=huge, clip=clip)
    with pytest.raises(InputError, match="non-finite number in start"):
        cert(10**400, 2.0, 10.0)
    plain = [0.1, 2, np.float32(0.3), np.int64(-1)]  # numbers of any kind are numbers
    assert cert(1.0, 2.0, 10.0, saliency=plain, clip=clip) == cert(
        1.0, 2.0, 10.0, saliency=[0.1, 2.0, float(np.float32(0.3)), -1.0], clip=clip)
