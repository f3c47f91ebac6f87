"""A single self-contained HTML report (figures embedded as base64 PNG)."""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Sequence
from pathlib import Path

from cover.io.output import write_text


def _table_html(markdown_table: str) -> str:
    lines = [ln for ln in markdown_table.strip().splitlines() if ln.startswith("|")]
    if len(lines) < 2:
        return f"<pre>{html.escape(markdown_table)}</pre>"

    def cells(ln: str) -> list[str]:
        return [html.escape(c.strip()) for c in ln.strip().strip("|").split("|")]

    head = "".join(f"<th>{c}</th>" for c in cells(lines[0]))
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in cells(ln)) + "</tr>"
                   for ln in lines[2:])
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def write_html(path: str | Path, title: str,
               sections: Sequence[tuple[str, str, str, Sequence[Path]]], *,
               inputs: Iterable[str | Path | None] = ()) -> Path:
    """Write ``sections`` = (heading, paragraph, markdown table, figure paths), atomically
    (:mod:`cover.io.output`)."""
    parts = [f"<h1>{html.escape(title)}</h1>"]
    for heading, para, table, figs in sections:
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        if para:
            parts.append(f"<p>{html.escape(para)}</p>")
        if table:
            parts.append(_table_html(table))
        for fig in figs:
            data = base64.b64encode(Path(fig).read_bytes()).decode()
            parts.append(f'<figure><img alt="{html.escape(fig.name)}" '
                         f'src="data:image/png;base64,{data}"></figure>')
    style = ("body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;"
             "color:#222}table{border-collapse:collapse;margin:1em 0;font-size:14px}"
             "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}"
             "td:first-child,th:first-child{text-align:left}th{background:#f3f3f3}"
             "figure{display:inline-block;margin:0.5em}img{width:480px}")
    doc = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
           f"</title><style>{style}</style></head><body>{''.join(parts)}</body></html>\n")
    write_text(path, doc, inputs=inputs)
    return Path(path)
