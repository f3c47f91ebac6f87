"""The summary box that opens the ``cover demo`` report: the misses first (conditional
strata below target, coverage cells outside their test band), then target vs achieved
coverage at alpha = 0.1 with its calibration band, and the cost in seconds and share of
the video; the glossary under it."""

from __future__ import annotations

from typing import Any

from cover.report.glossary import SLOT
from cover.report.layout import esc
from cover.report.misses import band_misses, conditional_misses, mondrian_note


def _headline(evaluation: dict[str, Any], target: float, mean_duration: float) -> list[str]:
    """Target vs achieved (calibration and test band) and the cost, per family."""
    first = next(iter(evaluation.values()))
    ref = first["reference"]
    achieved = ", ".join(f"{f.upper()} {ev['marginal']['coverage']:.3f}"
                         for f, ev in evaluation.items())
    inside = all(ev["reference"]["band_lo"] <= ev["marginal"]["coverage"]
                 <= ev["reference"]["band_hi"] for ev in evaluation.values())
    cost = ", ".join(f"{f.upper()} {ev['marginal']['mean_length_s']:.1f} s "
                     f"({ev['marginal']['mean_length_frac']:.0%} of the video)"
                     for f, ev in evaluation.items())
    best = min(ev["marginal"]["mean_length_frac"] for ev in evaluation.values())
    cal_lo, cal_hi = ref["calibration_band"]
    return [
        f"<b>Target {target:.0%}, achieved</b> {esc(achieved)} on "
        f"{first['marginal']['n']} test queries. Expected k/(n+1) = {ref['expected']:.3f} "
        f"with n = {ref['n_calibration']}; <b>{esc(ref['calibration_band_name'])}</b> "
        f"[{cal_lo:.3f}, "
        f"{cal_hi:.3f}], test band [{ref['band_lo']:.3f}, {ref['band_hi']:.3f}]: "
        + ('<span class="ok">every family inside</span>.' if inside else
           '<span class="bad">not every family inside</span>.'),
        f"<b>Cost</b>: {esc(cost)}; videos average {mean_duration:.0f} s. Even the shortest "
        f"family keeps {best:.0%} of the video: the guarantee holds, but says little about "
        "<i>where</i> in the video the moment is.",
    ]


def demo_summary_html(title: str | None, evaluation: dict[str, Any],
                      validity: dict[str, Any], conditional: dict[str, Any] | None, *,
                      target: float, mean_duration: float) -> str:
    """The box (misses, headline) and the glossary, as HTML; ``title`` (the pair) opens
    it, None where the page's own title names the pair already.

    ``evaluation``: family -> ``Evaluation.to_dict()`` (with ``reference``) of the test
    split certified at ``target``; ``validity``: ``ValidityResult.to_dict()``;
    ``conditional``: the conditional study's ``StudyResult.to_dict()`` (or None).
    """
    items = (conditional_misses(conditional) if conditional else [])
    items += band_misses({"data": validity})
    for fam, ev in evaluation.items():
        ref, cov = ev["reference"], ev["marginal"]["coverage"]
        if not ref["band_lo"] <= cov <= ref["band_hi"]:
            side = "below" if cov < ref["band_lo"] else "above"
            items.append(f"{fam.upper()} certified on the test split: coverage {cov:.3f}, "
                         f"{side} its test band [{ref['band_lo']:.3f}, {ref['band_hi']:.3f}].")
    named = "" if title is None else f": {esc(title)}"
    parts = [f"<div class='summary' id='summary'><p><b>In short{named}</b></p>"]
    if items:
        parts.append(f"<p id='misses'><b class='bad'>Where the guarantee falls short "
                     f"({len(items)})</b></p><ul class='misses'>"
                     + "".join(f"<li>{m}</li>" for m in items) + "</ul>")
        note = mondrian_note(conditional)
        if note:
            parts.append(f"<p class='caption'>{note}</p>")
    else:
        parts.append("<p class='ok' id='misses'>No miss found: every conditional stratum "
                     "and every coverage cell is within its noise.</p>")
    parts.append("<p><b>What holds, and what it costs</b></p><ul>"
                 + "".join(f"<li>{s}</li>" for s in _headline(evaluation, target, mean_duration))
                 + "</ul></div>")
    parts.append(SLOT)  # the glossary of the terms the whole page uses
    return "".join(parts)


def summary_markdown(html_box: str, *, plain: bool = False) -> str:
    """The summary box of :func:`demo_summary_html` (without the glossary) as Markdown,
    for report.md: the same sentences, misses first; ``plain``: without emphasis marks,
    for the console."""
    import html
    import re

    box = html_box.split("</div>", 1)[0]
    box = re.sub(r"<table>(.*?)</table>", lambda m: _markdown_table(m.group(1)), box,
                 flags=re.S)
    box = re.sub(r"<summary>(.*?)</summary>", r"<p>\1:</p>", box)  # a folded part's title
    text = re.sub(r"<li>", "\n* ", box)
    text = re.sub(r"</?b[^>]*>", "" if plain else "**", text)
    text = re.sub(r"</?i>", "" if plain else "*", text)
    text = re.sub(r"<p[^>]*>", "\n\n", text)
    text = re.sub(r"<[^>]+>", "", text)
    return html.unescape(re.sub(r"\n{3,}", "\n\n", text)).strip() + "\n"


def _markdown_table(rows_html: str) -> str:
    """An HTML table's rows (``<tr>`` of ``<th>``/``<td>``) as a Markdown table, the
    first row its header, set off by blank lines."""
    import re

    rows = [re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", r, flags=re.S)
            for r in re.findall(r"<tr[^>]*>(.*?)</tr>", rows_html, flags=re.S)]
    if not rows:
        return ""
    lines = ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    lines.insert(1, "|" + "---|" * len(rows[0]))
    return "\n\n" + "\n".join(lines) + "\n\n"
