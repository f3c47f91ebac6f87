"""The page around the report: one self-contained HTML document (inline CSS, a small inline
script, figures as base64 PNG), readable offline with no external file."""

from __future__ import annotations

import base64
import html
import json
from importlib import resources
from pathlib import Path
from typing import Any

from cover.report.style import FAMILY_STYLE, PRED_COLOR, TRUTH_COLOR

CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;max-width:1180px;margin:1.5em auto;
 padding:0 1em;color:#1d1d1d;line-height:1.45}
h1{font-size:1.7em;margin-bottom:.2em}h2{margin-top:1.8em;border-bottom:2px solid #e3e3e3;
 padding-bottom:.2em}h3{margin-top:1.3em}
.cmd{background:#f5f5f5;border:1px solid #ddd;padding:.6em .8em;font-family:ui-monospace,monospace;
 font-size:12px;white-space:pre-wrap;word-break:break-all}
.summary{background:#f4f8fb;border-left:4px solid #0072B2;padding:.8em 1.1em;font-size:1.02em}
.summary li{margin:.25em 0}.ok{color:#006d4f;font-weight:600}.bad{color:#b34700;font-weight:600}
table{border-collapse:collapse;margin:.8em 0;font-size:13px}
td,th{border:1px solid #d4d4d4;padding:3px 7px;text-align:right;vertical-align:top}
td:nth-child(-n+3),th:nth-child(-n+3){text-align:left}th{background:#f1f1f1}
figure{display:inline-block;margin:.4em .6em .8em 0;vertical-align:top;max-width:560px}
figure img{width:100%;max-width:560px;border:1px solid #eee}
figcaption{font-size:12.5px;color:#444;margin-top:.3em}
figure.wide{display:block;max-width:900px}figure.wide img{max-width:900px}
.summary td,.summary th{text-align:left!important}
.missing{background:#fff4e5;border-left:4px solid #E69F00;padding:.4em .8em;font-size:13px}
.caption{font-size:13px;color:#333}
.timeline{margin:.5em 0 1.2em}.timeline svg{max-width:100%;height:auto}
.tl-head{font-size:13px}.tl-head b{font-weight:600}
#qsearch{width:60%;padding:5px;font-size:14px}
#qtable{max-height:420px;overflow-y:auto;display:block;border:1px solid #ddd}
#qtable tr{cursor:pointer}#qtable tr:hover td{background:#eef5fb}
.tag{display:inline-block;font-size:11px;padding:0 5px;border-radius:3px;background:#eee;
 margin-left:4px}
nav a{margin-right:.8em;font-size:13px}
.misses li{margin:.3em 0}
.glossary{font-size:13px;margin:.6em 0 1em;background:#fafafa;border:1px solid #e3e3e3;
 padding:.4em .9em}.glossary dl{display:grid;grid-template-columns:max-content 1fr;
 gap:.15em 1em;margin:.5em 0}.glossary dt{font-weight:600}.glossary dd{margin:0}
"""



def script() -> str:
    """The page's script (``timeline.js`` beside this module) with the palette filled in."""
    fam = {f: {"color": st["color"], "label": f.upper()} for f, st in FAMILY_STYLE.items()}
    src = resources.files("cover.report").joinpath("timeline.js").read_text(encoding="utf-8")
    return (src.replace("{fam}", json.dumps(fam)).replace("{truth}", TRUTH_COLOR)
            .replace("{pred}", PRED_COLOR))


def esc(text: str) -> str:
    return html.escape(text, quote=True)


def img(path: Path, alt: str, caption: str, *, wide: bool = False) -> str:
    """A figure embedded as base64 PNG, with its caption (``wide``: the page's width)."""
    data = base64.b64encode(path.read_bytes()).decode()
    cls = ' class="wide"' if wide else ""
    return (f'<figure{cls}><img alt="{esc(alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{esc(caption)}</figcaption></figure>")


def table_html(header: list[str], rows: list[list[str]]) -> str:
    """A table; ``**x**`` cells are bold (the shortest family)."""
    def cell(c: str, tag: str) -> str:
        if c.startswith("**") and c.endswith("**"):
            return f"<{tag}><b>{esc(c[2:-2])}</b></{tag}>"
        return f"<{tag}>{esc(c)}</{tag}>"

    head = "".join(cell(h, "th") for h in header)
    body = "".join("<tr>" + "".join(cell(c, "td") for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def page(title: str, body: str, data: dict[str, Any]) -> str:
    """The whole document; ``data`` (per-pair query records) is embedded as JSON."""
    blob = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<meta name='viewport' content='width=device-width,initial-scale=1'>"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>{body}"
            f"<script>const DATA={blob};</script><script>{script()}</script></body></html>\n")
