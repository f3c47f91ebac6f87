"""The Calibrator's per-row thresholds: the one-group shortcut equals the general path."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.calibrate import Calibrator
from test_calibrator_file import make_table


def _general_path(cal: Calibrator, table) -> tuple[np.ndarray, np.ndarray | None]:
    """``row_lams`` through the labelling and lookup it skips for one group."""
    groups = cal.groups
    object.__setattr__(cal, "groups", "not-all")  # any name but "all" takes the long way
    try:
        return cal.row_lams(table)
    finally:
        object.__setattr__(cal, "groups", groups)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 50), rule=st.sampled_from(["split", "bonferroni", "rcps", "crc"]),
       score=st.sampled_from(["norm", "sec", "sls"]))
def test_one_group_shortcut_equals_the_lookup(seed, rule, score):
    if rule == "bonferroni" and score == "sls":
        return  # per-boundary rules need an interval score (a clear error, tested elsewhere)
    table = make_table(80, seed=seed)
    cal = Calibrator(score=score, alpha=0.2, rule=rule).fit(table)
    fast_s, fast_e = cal.row_lams(table)
    slow_s, slow_e = _general_path(cal, table)
    assert np.array_equal(fast_s, slow_s)
    assert (fast_e is None) == (slow_e is None)
    if fast_e is not None:
        assert np.array_equal(fast_e, slow_e)


def test_unseen_group_message_lists_at_most_ten_known_groups():
    table = make_table(300, seed=1)
    cal = Calibrator(score="sec", alpha=0.2, rule="mondrian", groups="key",
                     group_params={"field": "qid"}).fit(table)
    other = make_table(5, seed=2)
    object.__setattr__(other, "qid", np.array([f"new{i}" for i in range(5)]))
    with pytest.raises(ValueError, match=r"\.\.\. and \d+ more\)") as err:
        cal.certify(other)
    assert "was not seen at calibration" in str(err.value) and len(str(err.value)) < 600


def test_fitted_on_is_taken_from_the_ids_when_first_asked() -> None:
    """fit keeps the calibration ids and digests them on first use: the same record as
    digesting their text at fit time, saved and read back unchanged."""
    from cover.data.fitted_on import fitted_on
    from cover.data.table import GroundingTable

    n = 120
    rng = np.random.default_rng(3)
    ps = rng.uniform(0, 50, n)
    table = GroundingTable.from_arrays(qid=np.arange(1000, 1000 + n), duration=100.0,
                                       pred_start=ps, pred_end=ps + 10,
                                       truth=(np.maximum(ps + rng.normal(0, 2, n), 0), ps + 12))
    cal = Calibrator(score="sec", alpha=0.1).fit(table)
    assert cal._fitted_on is None  # nothing hashed yet
    want = fitted_on(np.arange(1000, 1000 + n).astype(str))
    assert cal.fitted_on_ == want
    assert Calibrator.from_dict(cal.to_dict()).fitted_on_ == want
    cal.fitted_on_ = None
    assert cal.fitted_on_ is None


def test_fit_and_certify_check_a_table_built_without_from_arrays() -> None:
    """A table built directly (or by dataclasses.replace) is checked by the readers' rules
    at the top of fit and certify: the truth below was fitted without a word before."""
    from dataclasses import replace

    from cover.data.table import GroundingTable
    from cover.errors import InputError

    good = GroundingTable.from_arrays(qid=np.arange(20), duration=100.0,
                                      pred_start=np.full(20, 10.0), pred_end=np.full(20, 30.0),
                                      truth=(np.full(20, 12.0), np.full(20, 33.0)))
    cal = Calibrator(score="norm", alpha=0.1).fit(good)
    truth = replace(good.truth, starts=good.truth.starts.copy())
    truth.starts[4] = 300.0  # start > end, and outside [0, T]
    with pytest.raises(InputError, match=r"Calibrator.fit:\n  row 4 \(qid=4\): truth: a true "
                                         r"window has start > end"):
        Calibrator(score="norm").fit(replace(good, truth=truth))
    with pytest.raises(InputError, match=r"Calibrator.certify:\n  row 0 \(qid=0\): duration"):
        cal.certify(replace(good, duration=np.r_[0.0, np.full(19, 100.0)]))
    assert cal.certify(good).intervals.n_components.min() == 1


def test_fitting_a_family_no_row_has_names_the_missing_input():
    """SLS on a table without a relevance signal: the reason in words, as the file
    commands give it (it said the threshold is -inf because k rows are refusals)."""
    import numpy as np

    import cover
    from cover.errors import InputError

    n = 50
    table = cover.GroundingTable.from_arrays(
        qid=np.arange(n), duration=60.0, pred_start=np.full(n, 10.0),
        pred_end=np.full(n, 20.0), truth=(np.full(n, 11.0), np.linspace(15, 25, n)))
    with pytest.raises(InputError, match=r"^<memory>: score family sls needs a relevance "
                                         r"signal \(pred_saliency_scores\), and none of the "
                                         r"50 rows has one; choose another family \(norm, "
                                         r"sec\)$"):
        cover.Calibrator(score="sls").fit(table)
    # some rows with a signal: a fit as before (the check runs only when a fit fails)
    rel = [[0.5] * 30 if i % 2 else [] for i in range(n)]
    some = cover.GroundingTable.from_arrays(
        qid=np.arange(n), duration=60.0, pred_start=np.full(n, 10.0),
        pred_end=np.full(n, 20.0), relevance=rel,
        truth=(np.full(n, 11.0), np.linspace(15, 25, n)))
    assert cover.Calibrator(score="sls").fit(some).n_ == n
