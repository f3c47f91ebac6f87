"""The vectorised sweep agrees with building and evaluating regions one threshold at a time,
and the resample thresholds with split conformal on each resample."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.calibrate.quantile import conformal_rank, conformal_ranks
from cover.calibrate.split import split_conformal
from cover.metrics import evaluate
from cover.regions import build_regions
from cover.scores import FAMILIES
from cover.studies.suffix_index import SuffixIndex
from cover.studies.sweep import Sweep, resample_thresholds
from grounding_cases import cases, scores_of, thresholds

FAST = settings(max_examples=60, deadline=None, derandomize=True, database=None)


@FAST
@given(st.sampled_from(FAMILIES).flatmap(lambda f: cases(f, max_rows=6)), st.data())
def test_sweep_matches_regions_and_evaluate(case, data) -> None:
    lam = data.draw(thresholds(case, scores_of(case)))
    sw = Sweep.of(case.table, case.family, min_scale=case.min_scale, target=case.target)
    m = sw.at(lam[None, :])
    reg = build_regions(case.table, case.family, lam, min_scale=case.min_scale)
    np.testing.assert_array_equal(m.covered[0], sw.scores <= lam)
    np.testing.assert_allclose(m.length[0], reg.length, atol=1e-9)
    np.testing.assert_array_equal(m.components[0], reg.n_components)
    if case.target == "envelope":
        ev = evaluate(reg, case.table, target="envelope", base_iou=False)
        got = float(m.mean("iou")[0])
        assert abs(got - ev.marginal.mean_iou) < 1e-9


@FAST
@given(st.integers(0, 2**31), st.integers(1, 60), st.integers(1, 8))
def test_resample_thresholds_equal_split_conformal(seed: int, n: int, r: int) -> None:
    rng = np.random.default_rng(seed)
    scores = rng.choice([-np.inf, np.inf, 0.0, 1.0, 2.5], size=n) if seed % 3 == 0 else \
        rng.normal(size=n)
    masks = rng.random((r, n)) < rng.uniform(0.1, 1.0)
    alphas = (0.05, 0.1, 0.3, 0.5)
    th = resample_thresholds(scores, masks, alphas)
    for j, a in enumerate(alphas):
        for i in range(r):
            want = split_conformal(scores[masks[i]], alpha=a, warn=False)
            assert th.values[j, i] == want.value
            assert th.k[j, i] == want.k


def test_conformal_ranks_exact() -> None:
    n = np.arange(0, 500)
    for a in (0.05, 0.1, 0.2, 0.3, 0.7, 0.9):
        assert conformal_ranks(n, a).tolist() == [conformal_rank(int(x), a) for x in n]


def test_suffix_index_counts_and_sums_per_row() -> None:
    row = np.array([0, 0, 0, 2, 2])  # row 1 has no values
    value = np.array([3.0, 1.0, 2.0, 5.0, 5.0])
    idx = SuffixIndex.of(row, value, 3, (np.array([1.0, 10.0, 100.0, 7.0, 8.0]),))
    count, (total,) = idx.at(np.array([[2.0, 0.0, 5.0], [np.inf, 0.0, -np.inf]]))
    assert count.tolist() == [[2, 0, 2], [0, 0, 2]]
    assert total.tolist() == [[101.0, 0.0, 15.0], [0.0, 0.0, 15.0]]


SIGMA_FAMILIES = ("norm", "sec", "sls", "sigma")
#: One-parameter rules the studies sweep, alone and per group (one threshold per row).
RULES_AND_GROUPS = (("split", "all"), ("mondrian", "duration"), ("crc", "all"),
                    ("rcps", "all"))


def _with_stds(table, rng: np.random.Generator):
    """The table with per-side reported stds (SIGMA's input), some far from the length."""
    import dataclasses

    n = len(table)
    return dataclasses.replace(table, start_std=rng.uniform(0.05, 30.0, n),
                               end_std=rng.uniform(0.05, 30.0, n))


@pytest.mark.filterwarnings("ignore::cover.errors.CoverWarning")  # tiny tables: whole video
@FAST
@given(st.sampled_from(SIGMA_FAMILIES).flatmap(
    lambda f: st.tuples(st.just(f), cases(f if f != "sigma" else "norm", max_rows=8))),
       st.sampled_from(RULES_AND_GROUPS), st.integers(0, 2**32 - 1))
def test_sweep_length_equals_certified_length(fam_case, rule_groups, seed: int) -> None:
    """Whatever the family and rule, the sweep's mean length at the calibrator's per-row
    thresholds is the mean length of the regions ``Calibrator.certify`` writes."""
    from cover.calibrate.calibrator import Calibrator

    family, case = fam_case
    rule, groups = rule_groups
    table = case.table if family != "sigma" else _with_stds(case.table,
                                                          np.random.default_rng(seed))
    cal = Calibrator(score=family, alpha=0.2, rule=rule, min_scale=case.min_scale,
                     target=case.target, groups=groups)
    cal.fit(table)
    reg = cal.certify(table)
    sw = Sweep.of(table, family, min_scale=case.min_scale, target=case.target)
    m = sw.at(np.asarray(reg.threshold, dtype=np.float64)[None, :])
    np.testing.assert_allclose(m.length[0], reg.length, atol=1e-9)
    assert abs(float(m.mean("length")[0]) - float(np.mean(reg.length))) < 1e-9


@FAST
@given(st.integers(0, 2**31), st.integers(1, 12), st.integers(1, 40))
def test_one_cut_per_threshold_counts_as_a_cut_per_row(seed: int, n: int, r: int) -> None:
    """SuffixIndex.locate's one-pass count for cuts shared by every row (a broadcast view)
    gives the positions of the search per (threshold, row), ties and infinities too."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 7, n)
    row = np.repeat(np.arange(n), lengths)
    pool = np.r_[np.round(rng.normal(size=5), 1), -np.inf, np.inf]
    value = rng.choice(pool, row.size)
    idx = SuffixIndex.of(row, value, n, (rng.random(row.size),))
    cuts = rng.choice(np.r_[pool, np.round(rng.normal(size=3), 1)], r)
    shared = np.broadcast_to(cuts[:, None], (r, n))
    want_pos, want_end = idx.locate(np.ascontiguousarray(shared))
    np.testing.assert_array_equal(idx._locate_common(cuts), want_pos)
    pos, end = idx.locate(shared)
    np.testing.assert_array_equal(pos, want_pos)
    np.testing.assert_array_equal(end, want_end)
    (count, (total,)), (want_count, (want_total,)) = idx.at(shared), idx.at(shared + 0.0)
    np.testing.assert_array_equal(count, want_count)
    np.testing.assert_array_equal(total, want_total)


def _same(a, b) -> None:
    """Two sweeps (or indices) equal field by field, array by array, to the bit."""
    import dataclasses

    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if dataclasses.is_dataclass(x) and not isinstance(x, type):
            _same(x, y)
        elif isinstance(x, tuple):
            assert len(x) == len(y)
            for u, v in zip(x, y, strict=True):
                np.testing.assert_array_equal(u, v)
                assert np.asarray(u).dtype == np.asarray(v).dtype
        elif isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y)
            assert x.dtype == y.dtype, f.name
        else:
            assert x == y, f.name


@FAST
@given(st.sampled_from(FAMILIES).flatmap(lambda f: cases(f, max_rows=7)), st.data())
def test_a_taken_sweep_is_the_sweep_of_the_taken_rows(case, data) -> None:
    """Sweep.take (a study pair's SLS sweeps, taken from the table's) is Sweep.of of the
    rows it keeps, every array to the bit, its sorted clip index included."""
    keep = np.array(data.draw(st.lists(st.booleans(), min_size=case.n, max_size=case.n)))
    whole = Sweep.of(case.table, case.family, min_scale=case.min_scale, target=case.target)
    want = Sweep.of(case.table.take(keep), case.family, min_scale=case.min_scale,
                    target=case.target)
    _same(whole.take(keep), want)
    lam = np.linspace(-1.0, 3.0, 5)
    _same(whole.take(keep).at(lam), want.at(lam))
