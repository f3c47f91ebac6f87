"""Tables, figures and the HTML report of a coverage-validity run."""

from __future__ import annotations

import numpy as np
import pytest

import cover
from cover.report.html import write_html
from cover.report.tables import multi_validity_table, validity_table
from cover.studies import Protocol, coverage_validity


@pytest.fixture(scope="module")
def result() -> cover.studies.ValidityResult:
    rng = np.random.default_rng(0)
    n = 300
    s = rng.uniform(0, 100, n)
    e = s + rng.uniform(5, 40, n)
    rel = [list(rng.normal(size=75)) for _ in range(n)]
    ts = np.clip(s + rng.normal(0, 4, n), 0, None)
    te = np.minimum(np.maximum(ts + 1, e + rng.normal(0, 4, n)), 150)
    table = cover.GroundingTable.from_arrays(qid=np.arange(n), duration=150.0, pred_start=s,
                                             pred_end=e, relevance=rel, truth=(ts, te))
    return coverage_validity(table, name="synthetic", protocol=Protocol(n_resamples=3))


def test_console_and_markdown_tables_hold_every_cell(result):
    text = validity_table(result)
    md = validity_table(result, markdown=True)
    for alpha in result.protocol.alphas:
        assert f"{1 - alpha:.2f}" in text
    lines = md.splitlines()
    assert len(lines) == 2 + len(result.protocol.alphas)
    assert all(line.count("|") == 2 + 2 * 3 + 1 for line in lines)
    c = result.cell("sls", 0.1)
    assert f"{c.coverage_mean:.3f}" in md and f"{c.length_mean:.1f}" in md
    multi = multi_validity_table([result, result], 0.1)
    assert multi.count("synthetic") == 2


def test_figures_and_html(result, tmp_path):
    from cover.report.figures import validity_figures

    figs = validity_figures(result, tmp_path, mean_duration=150.0)
    assert [f.name for f in figs] == ["coverage_vs_target.png", "length_vs_target.png",
                                      "frontier.png"]
    for f in figs:
        assert f.read_bytes()[:4] == b"\x89PNG" and f.stat().st_size > 20_000
    page = write_html(tmp_path / "r.html", "t", [("s", "para <b>", validity_table(
        result, markdown=True), figs)])
    html = page.read_text()
    assert html.count("<img") == 3 and "para &lt;b&gt;" in html and "<th>1-alpha</th>" in html


def test_summary_names_refusals():
    rng = np.random.default_rng(1)
    n = 200
    s = rng.uniform(0, 100, n)
    e = s + 10
    s[:20] = np.nan  # the grounder gave no interval for 20 queries
    table = cover.GroundingTable.from_arrays(qid=np.arange(n), duration=150.0, pred_start=s,
                                             pred_end=e, truth=(np.full(n, 50.0),
                                                                np.full(n, 60.0)))
    res = coverage_validity(table, families=("norm",), protocol=Protocol(n_resamples=2))
    from cover.report.tables import validity_summary

    assert "Refused rows (certified as the whole video): NORM 20." in validity_summary(res)
