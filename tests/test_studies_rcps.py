"""RCPS study: its main table is the paper's Hoeffding bound, and it says that
`cover calibrate --rule rcps` defaults to another bound."""

from __future__ import annotations

from cover.calibrate.rcps import DEFAULTS
from cover.studies.rcps import rcps
from study_pairs import synthetic_pair


def test_study_states_the_bound_difference_with_the_cli() -> None:
    res = rcps(synthetic_pair())
    assert res.data["main_bound"] == "hoeffding"
    assert res.data["cli_default_bound"] == DEFAULTS["bound"] == "binomial"
    main = res.tables[0]
    assert "the paper's Hoeffding bound" in main.caption
    assert ("`cover calibrate --rule rcps` defaults to the binomial bound instead"
            in main.caption)
    assert {c["bound"] for c in res.data["cells"]} >= {"hoeffding", "binomial"}
