"""Searchable per-query table: every test query of every pair; a click draws its timeline
(same renderer as the gallery) in the viewer above the table. The rows are built by the
page's script from the embedded query records (the HTML stays small)."""

from __future__ import annotations

from typing import Any

from cover.report.layout import esc


def query_table_html(records: dict[str, dict[str, Any]]) -> str:
    fams = list(dict.fromkeys(f for r in records.values() for f in r["thresholds"]))
    head = ("<tr><th>pair</th><th>qid</th><th>query</th><th>T (s)</th><th>point-IoU</th>"
            + "".join(f"<th>{f.upper()} len (s)</th><th>{f.upper()} covers</th>" for f in fams)
            + "</tr>")
    first = next(iter(records), None)
    viewer = (f'<div id="qview" class="timeline" data-pair="{esc(first)}" data-row="0"></div>'
              if first else '<div id="qview" class="timeline"></div>')
    n = sum(len(r["rows"]) for r in records.values())
    return (f'<p class="caption">{n} test queries. Type to filter by query text, qid or '
            "video; click a row to draw its timeline here.</p>"
            '<input id="qsearch" type="search" placeholder="search queries...">' + viewer
            + f'<table id="qtable" data-families="{esc(",".join(fams))}"><thead>{head}'
            "</thead><tbody></tbody></table>")
