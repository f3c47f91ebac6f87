"""The calibrator file's field checks: exact alpha text, ranks, the qids digest."""

from __future__ import annotations

import hashlib
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.calibrate.calibrator_fields import (
    BadField,
    alpha_field,
    alpha_text,
    fitted_on_field,
    side_field,
)


@settings(max_examples=100, deadline=None)
@given(st.fractions(min_value=Fraction(1, 10**6), max_value=Fraction(999_999, 10**6))
       .filter(lambda a: 0 < a < 1))
def test_alpha_text_round_trips_exactly(a):
    assert alpha_field(alpha_text(a)) == a


def test_alpha_written_otherwise_names_the_field():
    assert alpha_text(Fraction(1, 10)) == "0.1" and alpha_text(Fraction(1, 3)) == "1/3"
    for bad in ("0.10", "1", 0.1, "x"):
        with pytest.raises(BadField, match="field alpha"):
            alpha_field(bad)


def test_side_needs_the_rule_rank_and_inf_beyond_n():
    assert side_field({"value": 1.5, "k": 3}, "t", 4, 3).k == 3
    with pytest.raises(BadField, match="not the rank 3"):
        side_field({"value": 1.5, "k": 2}, "t", 4, 3)
    with pytest.raises(BadField, match="requires the threshold 'inf'"):
        side_field({"value": 1.5, "k": 5}, "t", 4, 5)


def test_fitted_on_digest_must_match_the_sorted_qids():
    qids = ["1", "2", "3"]
    digest = hashlib.sha256("\n".join(qids).encode()).hexdigest()
    assert fitted_on_field({"count": 3, "sha256": digest, "qids": qids})["count"] == 3
    with pytest.raises(BadField, match="does not match"):
        fitted_on_field({"count": 3, "sha256": "0" * 64, "qids": qids})
    with pytest.raises(BadField, match="not sorted"):
        fitted_on_field({"count": 3, "sha256": digest, "qids": ["2", "1", "3"]})
