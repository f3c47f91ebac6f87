"""Qualitative gallery: a few chosen queries per pair drawn as timelines (truth,
prediction, certified region per family, relevance signal with the calibrated cut).

Chosen: best (covered by every family, narrowest regions relative to the video), worst
(missed by the most families, lowest point-IoU), a refused query and a multi-window
query when the split has them. The timelines are inline SVG drawn by the page's script
from the embedded JSON.
"""

from __future__ import annotations

from typing import Any

from cover.report.layout import esc


def choose(rows: list[dict[str, Any]]) -> list[tuple[str, int]]:
    """``(why, row index)`` of the queries to show."""
    if not rows:
        return []
    picks: list[tuple[str, int]] = []

    def n_cov(i: int) -> int:
        return sum(rows[i]["covered"].values())

    def width(i: int) -> float:
        regs = rows[i]["regions"].values()
        return sum(b - a for r in regs for a, b in r) / max(len(regs), 1) / rows[i]["duration"]

    idx = range(len(rows))
    # Best: covered by every family with the narrowest certified regions (the certificate
    # says the most); worst: missed by the most families, least accurate prediction.
    best = min(idx, key=lambda i: (-n_cov(i), width(i), -rows[i]["point_iou"]))
    worst = min(idx, key=lambda i: (n_cov(i), rows[i]["point_iou"]))
    picks += [("best: covered by every family, with the narrowest certified regions", best),
              ("worst: missed by the most families, least accurate prediction", worst)]
    refused = [i for i in idx if rows[i]["pred"] is None]
    if refused:
        picks.append(("refused: no usable prediction, certified as the whole video", refused[0]))
    multi = [i for i in idx if len(rows[i]["truth"]) > 1]
    if multi:
        m = max(multi, key=lambda i: (len(rows[i]["truth"]), rows[i]["point_iou"]))
        picks.append(("multi-window truth: the region must cover the envelope", m))
    return picks


def gallery_html(pair_id: str, label: str, records: dict[str, Any]) -> str:
    out = [f"<h3>{esc(label)}</h3>"]
    for why, i in choose(records["rows"]):
        out.append(f'<p class="caption"><b>{esc(why)}</b></p>'
                   f'<div class="timeline" data-pair="{esc(pair_id)}" data-row="{i}"></div>')
    return "".join(out)
