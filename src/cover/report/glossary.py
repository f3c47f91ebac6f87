"""The short glossary under a report's summary box: every term the page uses, in one
sentence each. A box leaves :data:`SLOT` where the glossary goes; once the whole page is
written, :func:`fill_glossary` puts there the terms its text uses (:data:`USES`)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable

from cover.report.layout import esc
from cover.report.misses import OFF_BAND

#: Term -> one plain sentence (report order).
GLOSSARY: dict[str, str] = {
    "target (1 - alpha)": "the share of queries whose true moment the certified region must "
    "contain; alpha is the allowed miss rate.",
    "certified region": "the grounder's prediction widened, or cut from its relevance "
    "signal, by a threshold calibrated on labelled queries so that it meets the target.",
    "NORM": "widen the predicted interval on each side by λ times its own predicted "
    "length (a threshold like \"± 4.3 × pred. length\").",
    "SEC": "widen the predicted interval on each side by λ seconds.",
    "SLS": "keep every clip whose relevance score (the grounder's per-clip saliency) is "
    "at least a calibrated cut c; the region may have several pieces.",
    "relevance ≥ c": "the SLS threshold: clips scoring at least c are in the region (c is "
    "on the grounder's own score scale, often negative).",
    "share of T": "region length divided by the video's duration T; 100% is the whole "
    "video, i.e. the guarantee then says nothing about where the moment is.",
    "components": "number of separate pieces of a region (1 for NORM and SEC; SLS can "
    "give several).",
    "k/(n+1)": "the coverage split conformal calibration delivers on average, with n "
    "calibration queries and the k-th smallest score as threshold.",
    "calibration band": "95% range of the realised coverage over calibration sets of this "
    "size (the central interval of Beta(k, n+1-k), widened when calibration queries "
    "cluster in source videos): how far one calibration set alone can move coverage.",
    "Beta band": "the calibration band's Beta(k, n+1-k) interval alone, not widened for "
    "calibration queries that share a video, where those queries were not counted (e.g. "
    "a rule of several thresholds in cover compare): narrower than the calibration band "
    "when queries cluster.",
    "test band": "the calibration band widened by the test sample's own noise (sd of "
    "the test mean, clustered by source video; docs/bands.md); a coverage outside it is "
    f"a real finding: below it, {OFF_BAND['below']}; above it, {OFF_BAND['above']}.",
    "resamples": "random halves of the calibration pool's videos; a mean ± sd over them "
    "shows how much the choice of calibration set moves coverage and length.",
    "IoU": "of a certified region: overlap with the true moment divided by their union "
    "(low when the region is wide); of a grounder (R1@t, mIoU): its own top-1 "
    "prediction's IoU, before certification.",
    "refused": "a query without a usable prediction; it is certified as the whole video.",
    "R1@t, mIoU": "the field's point metrics of a grounder's top-1 prediction: percent of "
    "queries with IoU ≥ t, and mean IoU in percent (Moment-DETR's evaluator).",
    "paired difference": "A - B computed query by query on the same test queries, then "
    "averaged; its 95% CI clusters queries by source video and holds the calibration "
    "split fixed.",
    "stratum": "a group of test queries: Short / Medium / Long thirds of the true moment "
    "length (cut points from the calibration pool), or single- vs multi-window truth. A "
    "stratum misses when its coverage is more than 1.96 binomial sd below the target.",
    "Mondrian": "calibration with one threshold per group (here terciles of the "
    "predicted length, known before the answer).",
    "source video (unit)": "queries of one video are dependent; splits, resamples and "
    "clustered intervals all work on whole videos.",
}


#: Where a page's glossary goes (:func:`fill_glossary` fills it with the terms it uses).
SLOT = "<!--cover:glossary-->"

#: How a page's text shows it uses each term (a regular expression).
USES: dict[str, str] = {
    "target (1 - alpha)": r"\btarget\b|\balpha\b",
    "certified region": r"\bcertified\b",
    "NORM": r"\bNORM\b",
    "SEC": r"\bSEC\b",
    "SLS": r"\bSLS\b",
    "relevance ≥ c": r"relevance ≥|≥ c\b|\bcut\b",
    "share of T": r"share of T|% of the video",
    "components": r"\bcomponents?\b",
    "k/(n+1)": r"k/\(n\+1\)",
    "calibration band": r"calibration band",
    "Beta band": r"Beta band",
    "test band": r"test band",
    "resamples": r"\bresampl",
    "IoU": r"IoU",
    "refused": r"\brefus",
    "R1@t, mIoU": r"R1@|mIoU",
    "paired difference": r"paired difference|\bA - B\b",
    "stratum": r"\bstrat",
    "Mondrian": r"Mondrian",
    "source video (unit)": r"source video",
}


def glossary_html(terms: Iterable[str]) -> str:
    """A compact definition list of ``terms`` (in :data:`GLOSSARY`'s order), folded under
    the summary."""
    wanted = set(terms)
    items = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in GLOSSARY.items()
                    if k in wanted)
    return (f"<details class='glossary' id='glossary' open><summary>Glossary: the terms on "
            f"this page</summary><dl>{items}</dl></details>")


def terms_on(page: str) -> list[str]:
    """The terms of :data:`GLOSSARY` the text of HTML ``page`` uses (its scripts, styles
    and tags left out)."""
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    return [t for t, used in USES.items() if re.search(used, text)]


def fill_glossary(page: str) -> str:
    """``page`` with its :data:`SLOT` (if any) replaced by the glossary of the terms the
    rest of the page uses."""
    if SLOT not in page:
        return page
    return page.replace(SLOT, glossary_html(terms_on(page.replace(SLOT, ""))), 1)
