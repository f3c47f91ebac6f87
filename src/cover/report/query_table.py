"""Searchable per-query table: every test query of every pair; a click draws its timeline
(same renderer as the gallery) in the viewer above the table."""

from __future__ import annotations

from typing import Any

from cover.report.layout import esc


def query_table_html(records: dict[str, dict[str, Any]], labels: dict[str, str]) -> str:
    fams = list(dict.fromkeys(f for r in records.values() for f in r["thresholds"]))
    head = ("<tr><th>pair</th><th>qid</th><th>query</th><th>T (s)</th><th>point-IoU</th>"
            + "".join(f"<th>{f.upper()} len (s)</th><th>{f.upper()} covers</th>" for f in fams)
            + "</tr>")
    body = []
    for pid, rec in records.items():
        for i, q in enumerate(rec["rows"]):
            cells = [esc(labels[pid]), esc(q["qid"]), esc(q["query"]), f"{q['duration']:.0f}",
                     f"{q['point_iou']:.2f}" if q["pred"] is not None else "refused"]
            for f in fams:
                if f in q["regions"]:
                    length = sum(b - a for a, b in q["regions"][f])
                    cells += [f"{length:.0f}", "yes" if q["covered"][f] else "NO"]
                else:
                    cells += ["--", "--"]
            body.append(f'<tr data-pair="{esc(pid)}" data-row="{i}">'
                        + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    first = next(iter(records), None)
    viewer = (f'<div id="qview" class="timeline" data-pair="{esc(first)}" data-row="0"></div>'
              if first else '<div id="qview" class="timeline"></div>')
    return ('<p class="caption">Type to filter by query text, qid or video; click a row to '
            "draw its timeline here.</p>"
            '<input id="qsearch" type="search" placeholder="search queries...">' + viewer
            + f'<table id="qtable"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>')
