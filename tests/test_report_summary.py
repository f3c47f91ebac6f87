"""The summary box of the study and demo reports: misses first, in plain words (a known
miss: QD-DETR's Long tercile at the 0.9 target), the headline with its named calibration
band, and the glossary."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path
from typing import Any

import pytest

from cover.report.glossary import GLOSSARY, SLOT, USES, fill_glossary, glossary_html
from cover.report.misses import conditional_misses, misses, stratum_floor
from cover.report.summary import summary_html

PAIR = {"id": "p", "name": "G", "dataset": "D", "rows": 1000, "test_rows": 600}


def _coverage_cell(family: str, target: float, cov: float, within: bool) -> dict[str, Any]:
    return {"family": family, "target": target, "coverage_mean": cov, "length_mean": 120.0,
            "length_frac_mean": 0.8, "n_calibration": 300, "expected": target,
            "beta_lo": target - 0.03, "beta_hi": target + 0.03, "band_lo": target - 0.04,
            "band_hi": target + 0.04, "within_band": within}


def _studies(long_cov: float, above: bool = False) -> dict[str, Any]:
    strata = [("Short", 0.95), ("Medium", 0.93), ("Long", long_cov)]
    cond = {"data": {"target": 0.9, "cells": [
        {"half": "diagnostic", "family": "norm", "stratum": s, "n": 300, "coverage": c}
        for s, c in strata] + [
        {"half": "mondrian", "family": "norm", "stratum": s, "n": 300, "coverage": 0.9}
        for s, _ in strata]}}
    cells = [_coverage_cell("norm", 0.9, 0.91, True),
             _coverage_cell("norm", 0.5, 0.56 if above else 0.51, not above)]
    return {"conditional": cond, "coverage": {"data": {"cells": cells}}}


def _box(studies: dict[str, Any]) -> str:
    return summary_html([PAIR], {"p": studies}, [], [])


def test_a_stratum_below_target_is_listed_first_in_plain_words() -> None:
    html = _box(_studies(0.80))
    box = html[:html.index("What holds")]
    assert "Where the guarantee falls short (1)" in box
    assert "Long events (the longest third of true moment lengths)</b>, 300 test queries: " \
           "coverage NORM 0.800 at the 0.90 target, up to 10.0 points short" in box
    assert "Mondrian" in box and "inside its noise" in box
    # The headline comes after the misses and names the calibration band.
    assert html.index("Where the guarantee") < html.index("Target 90%, achieved")
    assert "<b>calibration band</b> [0.870, 0.930]" in html
    assert "NORM 120.0 s (80% of the video)" in html


def test_out_of_band_cells_are_misses_and_noise_is_not() -> None:
    # 0.88 on 300 queries is within 1.96 binomial sd of 0.9: not a miss.
    assert stratum_floor(0.9, 300) < 0.88
    html = _box(_studies(0.88, above=True))
    assert "Long events" not in html
    assert "NORM at the 0.50 target: coverage 0.560, above its test band [0.460, 0.540] " \
           "(more coverage than asked, paid for in length)" in html
    clean = _box(_studies(0.88))
    assert "No miss found in what this run checked: conditional strata, coverage cells" \
           in clean


def test_glossary_defines_every_term_the_box_uses_and_no_other() -> None:
    """The glossary lists the terms the page uses: "paired difference" (a compare page's)
    and the Beta band (a band whose queries' videos were not counted) were listed on
    every study page, which uses neither."""
    html = fill_glossary(_box(_studies(0.80)))
    for term in ("NORM", "share of T", "k/(n+1)", "calibration band", "test band",
                 "resamples", "stratum", "Mondrian"):
        assert term in GLOSSARY
        assert f"<dt>{term}</dt>" in html
    assert html.index("</div>") < html.index("id='glossary'")
    for term in ("Beta band", "paired difference", "SEC", "SLS", "IoU"):  # not in this box
        assert f"<dt>{term}</dt>" not in html
    assert glossary_html(["SEC"]).count("<dt>") == 1
    assert set(USES) == set(GLOSSARY)
    for term in GLOSSARY:  # a page using a term's words lists it, a page without, not
        page = f"<p>{term.replace('(', '').replace(')', '')} <b>{term}</b></p>{SLOT}"
        assert f"<dt>{escape(term, quote=False)}</dt>" in fill_glossary(page), term
        assert f"<dt>{escape(term, quote=False)}</dt>" not in fill_glossary(
            f"<p>a word</p><script>{term}</script>{SLOT}"), term


def test_qd_detr_long_tercile_undercovers_at_0_9(qdetr_table, data_dir: Path, qvh_gt: Path,
                                                 qdetr_preds: Path) -> None:
    from cover.studies.conditional import conditional
    from cover.studies.context import Pair
    from cover.studies.protocol import Protocol

    table = qdetr_table
    doc = conditional(Pair("QD-DETR", "QVHighlights", table, Protocol(n_resamples=0))).to_dict()
    found = conditional_misses(doc)
    assert found[0].startswith("<b>Long events")
    assert "coverage NORM 0.799, SEC 0.786 at the 0.90 target" in found[0]
    assert any(m.startswith("<b>Multi-window queries") for m in found)
    assert misses({"conditional": doc})[:len(found)] == found


@pytest.mark.xdist_group("demo")  # one worker runs the shared demo (tests/conftest.py)
def test_demo_report_opens_with_the_box(demo_run: tuple[int, Path, str, str]) -> None:
    code, out, _, _ = demo_run
    assert code == 0
    html = (out / "report.html").read_text()
    body = html[html.index("<body>"):]
    # The box comes before any section, the misses before the headline.
    assert body.index("id='summary'") < body.index("<h2>")
    assert body.index("Where the guarantee falls short") < body.index("Target 90%, achieved")
    assert "Long events" in body and "NORM 0.799" in body
    assert "NORM 134.8 s (90% of the video)" in body
    assert "<b>calibration band</b> [0.872, 0.927]" in body  # NORM, as calibrate says
    assert "id='glossary'" in body
    # Every figure carries a caption.
    assert body.count("<figure>") == 3 == body.count("<figcaption>")
    assert not re.search(r"<figcaption>\s*</figcaption>", body)


def test_other_checks_and_a_remedy_that_does_not_fix_it() -> None:
    studies = _studies(0.80)
    for c in studies["conditional"]["data"]["cells"]:
        if c["half"] == "mondrian" and c["stratum"] == "Short":
            c["coverage"] = 0.80
    studies["utility"] = {"data": {"cells": [{"family": "norm", "rho": 0.007}]}}
    studies["rcps"] = {"data": {"delta": 0.1, "cells": [
        {"family": "sec", "bound": "binomial", "violation_fraction": 0.35}]}}
    html = _box(studies)
    assert "Where the guarantee falls short (3)" in html
    assert "No easy remedy" in html and "1 of its strata below target" in html
    assert "Spearman ρ between width and the grounder's IoU is NORM +0.007" in html
    assert "RCPS (SEC, binomial bound): the test miss rate exceeds alpha for 35% of " \
           "calibration resamples" in html


def test_split_sensitivity_is_stated_with_its_range() -> None:
    """With --split-seeds, the summary says how far the split alone moves coverage."""
    from cover.report.misses import split_sensitivity

    cell = {"study": "coverage", "quantity": "coverage", "target": 0.9, "family": "norm",
            "n_seeds": 100, "min": 0.859, "max": 0.942, "sd": 0.016, "share_inside_band": 0.99}
    got = split_sensitivity({"split-seeds": {"data": {"cells": [cell]}}})
    assert len(got) == 1 and "over 100 unit-level splits" in got[0]
    assert "NORM 0.859 to 0.942 (sd 0.016; 99% of seeds inside their test band)" in got[0]
    assert split_sensitivity({}) == []


def test_several_pairs_claim_only_what_their_studies_said() -> None:
    """Pairs with coverage and groups only (cover validity): no weak-boundary sentence
    (the two-param study did not run) and no column left empty; with a two-param study
    the sentence and its column come back."""
    pairs = [PAIR, {**PAIR, "id": "q", "name": "H"}]
    studies = {"p": _studies(0.80), "q": _studies(0.91)}
    html = summary_html(pairs, studies, [], [])
    assert "Weak boundary" not in html and "weak side" not in html.lower()
    head = html[html.index("<table>"):html.index("</tr>")]
    assert re.findall(r"<th>([^<]*)</th>", head) == ["Grounder", "Dataset", "On target",
                                                     "Coverage at 0.90"]
    assert html.count("<p><b>In short.</b>") == html.count("</p>", html.index("In short."),
                                                            html.index("<table>"))
    two = {"data": {"cells": [{"family": "norm", "target": 0.9, "ratio_start_end": 2.0,
                               "lam_start": 2.0, "lam_end": 1.0}]}}
    html = summary_html(pairs, {"p": {**studies["p"], "two-param": two}, "q": studies["q"]},
                        [], [])
    assert "Weak boundary: G (start) need a clearly larger widening" in html
    assert "<th>Weak side (start/end)</th>" in html and "<td>start (2.00)</td>" in html


def test_pairs_without_a_coverage_study_are_not_said_to_miss_their_target() -> None:
    """`cover study conditional` over two grounders measures no marginal coverage: the
    summary said "consistent with the 90% target on 0 of 2" and "On target: NO" for
    both. It now says coverage was not measured; with one pair measured, the count is
    of that one and the other is named as not measured."""
    pairs = [PAIR, {**PAIR, "id": "q", "name": "H"}]
    bare = {k: v for k, v in _studies(0.80).items() if k != "coverage"}
    html = summary_html(pairs, {"p": bare, "q": dict(bare)}, [], [])
    assert "consistent with" not in html and "<td>NO</td>" not in html
    assert ("Realised coverage over all test queries was not measured in this run (the "
            "coverage study did not run).") in html
    assert html.count("<td>not measured</td>") == 2
    html = summary_html(pairs, {"p": bare, "q": _studies(0.91)}, [], [])
    assert ("consistent with the 90% target on 1 of 1</span> (at or above it, or inside the "
            "test band that a finite calibration set and a finite test set allow); not "
            "measured on 1 (no coverage study).") in html
    assert re.findall(r"<td>(yes|NO|not measured)</td>", html) == ["not measured", "yes"]


def test_the_summary_as_markdown_keeps_its_table_and_folded_titles() -> None:
    """tables.md opens with the report's summary box as Markdown: the overview's HTML
    table becomes a Markdown table (it ran its cells together as one word), and a folded
    part keeps its title."""
    from cover.report.demo_summary import summary_markdown

    pairs = [PAIR, {**PAIR, "id": "q", "name": "H"}]
    md = summary_markdown(summary_html(pairs, {"p": _studies(0.80), "q": _studies(0.91)},
                                       [], []))
    assert md.startswith("**Where the guarantee falls short (")
    lines = md.splitlines()
    at = lines.index("| Grounder | Dataset | On target | Coverage at 0.90 |")
    assert lines[at + 1] == "|---|---|---|---|"
    assert lines[at + 2] == "| G | D | yes | NORM 0.910 |"
    assert lines[at + 3] == "| H | D | yes | NORM 0.910 |"
    assert lines[at - 1] == lines[at + 4] == ""
    assert "The same in sentences, per pair:" in lines


def test_a_grounders_own_uncertainty_is_said_beside_covers_regions() -> None:
    """Study 9 in plain words: the nominal region of the grounder's reported sd at the
    headline target, flagged as overconfident when it falls short by more than the
    study's shading, beside COVER's calibrated regions; nothing without a reported sd."""
    def cell(method: str, cov: float, length: float) -> dict[str, Any]:
        return {"method": method, "target": 0.9, "coverage": cov, "length": length}

    unc = {"data": {"targets": [0.8, 0.9], "cells": [
        {"method": "nominal", "target": 0.8, "coverage": 0.5, "length": 50.0},
        cell("nominal", 0.721, 76.3), cell("COVER (NORM)", 0.923, 130.6),
        cell("COVER (SIGMA)", 0.892, 105.0)]}}
    box = _box({**_studies(0.91), "uncertainty": unc})
    assert ("The grounder's own reported uncertainty, read as a 90% region without "
            "calibration, covers <b>0.721</b> of the test queries at 76.3 s (overconfident: "
            "short of the level it claims); COVER's calibrated regions on the same queries "
            "(mean over calibration resamples): NORM 0.923 at 130.6 s, SIGMA 0.892 at "
            "105.0 s.") in box
    unc["data"]["cells"][1] = cell("nominal", 0.889, 90.0)  # within the shading
    assert "covers <b>0.889</b> of the test queries at 90.0 s; COVER" in _box(
        {**_studies(0.91), "uncertainty": unc})
    none = {"data": {"targets": [0.8, 0.9], "cells": [cell("COVER (NORM)", 0.9, 1.0)]}}
    assert "reported uncertainty" not in _box({**_studies(0.91), "uncertainty": none})
    # a run of this study alone checks nothing that can miss: it says so, not "no miss"
    box = _box({"uncertainty": unc})
    assert "No miss found" not in box and "class='ok' id='misses'" not in box
    assert ("<p id='misses'>No study of this run can find a miss of the guarantee (those "
            "that can: conditional strata, coverage cells against their test band, RCPS "
            "violations, width vs accuracy, calibration/test exchangeability, cross-dataset "
            "transfer).</p>") in box


def _transfer(unweighted: float, n_test: int) -> dict[str, Any]:
    """A transfer study of grounder G between datasets A and B whose NORM regions at the
    0.9 target cover ``unweighted`` of B's ``n_test`` test queries when calibrated on A."""
    cell = {"family": "norm", "target": 0.9, "matched": 0.907, "unweighted": unweighted,
            "gap_unweighted": 0.907 - unweighted, "positivity": {"n_test": n_test}}
    return {"name": "G", "data": {"directions": {"A -> B": [cell]}}}


def test_a_transfer_below_its_noise_floor_is_a_miss_stated_first() -> None:
    """Regions calibrated on one dataset that cover the other's test queries below the
    target by more than the binomial noise of that test split are a miss, named before
    anything else (DisTime calibrated on ActivityNet and tested on Charades-STA: 0.874
    of 2,184 queries); a run whose only check is the transfer and finds none says it
    checked it."""
    from cover.report.summary import misses_html

    floor = stratum_floor(0.9, 2184)
    box = summary_html([PAIR], {"p": {}}, [_transfer(0.874, 2184)], [])
    assert 0.874 < floor < 0.9
    assert ("<b>Transfer A -&gt; B</b> (G, NORM): calibrated on A, the regions cover 0.874 "
            "of B's 2184 test queries at the 0.90 target, 2.6 points short (calibrated on "
            "B's own pool: 0.907). The guarantee holds within one distribution, not across "
            "datasets.") in box
    assert box.index("Where the guarantee falls short (1)") < box.index("Transfer A -&gt; B")
    inside = misses_html([PAIR], {"p": {}}, [_transfer(round(floor + 0.001, 3), 2184)])
    assert inside == ("<p class='ok' id='misses'>No miss found in what this run checked: "
                      "cross-dataset transfer.</p>")
