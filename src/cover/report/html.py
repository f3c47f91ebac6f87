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
               inputs: Iterable[str | Path | None] = (), lead: str = "") -> Path:
    """Write ``sections`` = (heading, paragraph, markdown table, figure paths), atomically
    (:mod:`cover.io.output`). ``lead`` is HTML placed under the title (a summary box);
    every figure carries the caption :data:`cover.report.sections.CAPTIONS` gives its
    file name."""
    from cover.report.glossary import fill_glossary
    from cover.report.layout import CSS
    from cover.report.sections import CAPTIONS

    parts = [f"<h1>{html.escape(title)}</h1>", lead]
    for heading, para, table, figs in sections:
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        if para:
            parts.append(f"<p>{html.escape(para)}</p>")
        if table:
            parts.append(_table_html(table))
        for fig in figs:
            data = base64.b64encode(Path(fig).read_bytes()).decode()
            cap = CAPTIONS.get(Path(fig).name, "")
            parts.append(f'<figure><img alt="{html.escape(Path(fig).name)}" '
                         f'src="data:image/png;base64,{data}">'
                         + (f"<figcaption>{html.escape(cap)}</figcaption>" if cap else "")
                         + "</figure>")
    style = CSS + "td:nth-child(-n+3),th:nth-child(-n+3){text-align:right}" \
        "td:first-child,th:first-child{text-align:left}"
    doc = (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
           f"</title><style>{style}</style></head><body>{fill_glossary(''.join(parts))}"
           "</body></html>\n")
    write_text(path, doc, inputs=inputs)
    return Path(path)
