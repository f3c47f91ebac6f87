"""One report section per study: what it asks, its tables (stacked across pairs), its
figures with captions that say what to look at, and what could not be filled."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cover.report.layout import esc, img, table_html

#: (title, what the study asks) per study, SPEC §6 order.
INTRO: dict[str, tuple[str, str]] = {
    "overview": ("Overview", "Every grounder at a glance: point metrics vs certified cost."),
    "coverage": ("1. Coverage validity", "Does realised coverage match the requested "
                 "1 - alpha over the whole grid, for every score family?"),
    "efficiency": ("2. Efficiency at matched coverage", "At the same guarantee (0.8, 0.9), "
                   "which family gives the shortest regions?"),
    "margins": ("2b. Uncalibrated fixed margins", "What if the widening is picked by hand "
                "instead of calibrated?"),
    "two-param": ("2c. One parameter or two", "Calibrating start and end separately: does "
                  "it save length, and which boundary carries the error?"),
    "rcps": ("3. Risk control (RCPS)", "A high-probability guarantee over the calibration "
             "draw: does the miss rate stay within alpha, and what does it cost?"),
    "conditional": ("4. Conditional coverage", "Is coverage even across short/long events "
                    "and single/multi-window truth? Does Mondrian calibration fix it?"),
    "transfer": ("5. Cross-dataset transfer", "Calibrate on one dataset, test on another: how "
                 "far does coverage move, and can reweighting repair it?"),
    "calsize": ("6. Calibration-set size", "How many labelled videos are enough, and does "
                "the spread shrink as the Beta law predicts?"),
    "utility": ("7. Downstream utility of the width", "Does a narrow certified region mean a "
                "better prediction? What does a width budget buy?"),
    "exchangeability": ("8. Exchangeability of the split", "Are the calibration pool and the "
                        "test split drawn from the same distribution?"),
    "humans": ("Human grounders", "How far do the annotators themselves disagree, and what "
               "would certifying a person cost?"),
    "uncertainty": ("9. Reported uncertainty vs COVER", "Does a grounder's own boundary "
                    "uncertainty deliver its nominal coverage?"),
    "split-seeds": ("Split-seed spread", "How much does the choice of calibration/test split "
                    "alone move each number? The same studies over many unit-level splits."),
}

#: Figures drawn wide (a legend beside the plot) that need the page's width to be read.
WIDE = frozenset({"conditional.png", "aci_rolling.png", "transfer_ks.png"})

#: Secondary tables longer than this are folded (a click opens them).
FOLD_ROWS = 24

#: Caption per figure file name: what the reader should look at.
CAPTIONS: dict[str, str] = {
    "coverage_vs_target.png": "Realised coverage (mean ± sd over resamples) against the target."
    " Look at whether each family's points sit on the dashed diagonal and inside the grey "
    "test band (the calibration band plus the test split's own noise).",
    "length_vs_target.png": "Mean region length (s) against the target. The dotted line is "
    "the whole video: the closer a curve gets to it, the less the guarantee tells you.",
    "frontier.png": "Coverage-length frontier: lower-right is better (more coverage for less "
    "length). Rings mark the 0.8 and 0.9 targets.",
    "margins.png": "Coverage of hand-picked margins (log scale). Look at how far one round "
                   "number of seconds lands from the dashed targets.",
    "conditional.png": "Coverage per stratum against the target. Bars below the grey strip "
                       "are strata the marginal guarantee leaves behind.",
    "calsize.png": "Coverage spread vs calibration size: the error bars should shrink with "
                   "size and track the grey band, the mean ± sd of Beta(k, n+1-k).",
    "transfer_ks.png": "Cross-dataset KS (orange) against the within-dataset noise floors "
                       "(blue): bars far beyond the floor are real shift.",
    "aci_rolling.png": "Miss rate over the last 100 queries of a stream (full windows "
                       "only). Look at how far and how long each line strays from the dashed "
                       "alpha: ACI moves its level after every miss or hit, the fixed "
                       "threshold never does.",
    "compare_margins.png": "The same hand-picked margins on each grounder and dataset: one "
                           "round number of seconds lands at very different coverage.",
    "compare_coverage.png": "Every grounder at the 0.9 target: each marker should sit inside "
                            "its grey band, near the dashed line.",
    "compare_length.png": "What the 0.9 guarantee costs each grounder, as share of the video; "
                          "100% = the whole video.",
}


def section_html(study: str, tables: list[dict[str, Any]], figures: list[tuple[str, Path]],
                 missing: list[str]) -> str:
    title, ask = INTRO.get(study, (study, ""))
    out = [f'<h2 id="s-{esc(study)}">{esc(title)}</h2><p class="caption"><i>{esc(ask)}</i></p>']
    for i, t in enumerate(tables):
        cap = f'<p class="caption">{esc(t["caption"])}</p>'
        body = table_html(t["header"], t["rows"])
        # The study's main table stays open; long secondary tables fold away.
        if i > 0 and len(t["rows"]) > FOLD_ROWS:
            out.append(f"<details><summary>{esc(t['caption'].split('. ')[0])} "
                       f"({len(t['rows'])} rows)</summary>{cap}{body}</details>")
        else:
            out.append(cap + body)
    labels = list(dict.fromkeys(label for label, _ in figures))
    for i, lab in enumerate(labels):
        figs = "".join(img(path, f"{study}: {label}", f"{label}. {CAPTIONS.get(path.name, '')}",
                           wide=path.name.startswith("compare_") or path.name in WIDE)
                       for label, path in figures if label == lab)
        # With many pairs the first one's figures show; the others fold away.
        out.append(figs if i == 0 else f"<details><summary>Figures: {esc(lab)}</summary>"
                   f"{figs}</details>")
    for m in missing:
        out.append(f'<p class="missing"><b>Not filled.</b> {esc(m)}.</p>')
    return "".join(out)
