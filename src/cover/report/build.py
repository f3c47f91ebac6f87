"""``cover report``: a results folder of ``cover study`` in, one self-contained HTML out.

Order: the command that reproduces every number, the plain-language summary, the
overview across pairs, one section per study, the gallery, the per-query table.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import msgspec

from cover.errors import InputError
from cover.io.output import write_text
from cover.report.gallery import gallery_html
from cover.report.glossary import fill_glossary
from cover.report.layout import esc, img, page, table_html
from cover.report.query_table import query_table_html
from cover.report.sections import CAPTIONS, INTRO, section_html
from cover.report.summary import summary_html


class _Pair(msgspec.Struct):
    """What the report reads of each grounder-dataset pair of the manifest."""

    id: str
    name: str
    dataset: str
    studies: dict[str, str]
    figures: dict[str, list[str]] = {}
    queries: str | None = None


class _Protocol(msgspec.Struct):
    cal_frac: float
    seed: int
    n_resamples: int
    resample_frac: float
    alphas: list[float]


class _Manifest(msgspec.Struct):
    """The fields of ``manifest.json`` the report reads first (the rest it reads where
    present): checked before any is read, so another JSON file is named as such."""

    #: at least one: a report of no pair would be an empty page said to be written
    pairs: Annotated[list[_Pair], msgspec.Meta(min_length=1)]
    protocol: _Protocol
    studies: list[str]


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: not found; is this a `cover study` results folder?") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at "
                         f"offset {exc.start}); is this a `cover study` results folder?"
                         ) from None
    except OSError as exc:  # a file for a folder, a folder for a file, no permission
        raise InputError(f"{path}: cannot be read ({exc.strerror or exc}); is this a "
                         "`cover study` results folder?") from None


def _manifest(path: Path) -> Any:
    """``manifest.json`` of a results folder, its shape checked (:class:`_Manifest`)."""
    man = _load(path)
    try:
        msgspec.convert(man, _Manifest)
    except msgspec.ValidationError as exc:
        raise InputError(f"{path}: not the manifest `cover study` writes ({exc})") from None
    return man


def _folder(results: str | Path) -> tuple[Path, Any, dict[str, dict[str, dict[str, Any]]],
                                         list[dict[str, Any]]]:
    """The results folder: its path, manifest, every pair's studies and the transfers."""
    root = Path(results)
    if root.exists() and not root.is_dir():
        raise InputError(f"{root}: is a file, not a `cover study` results folder")
    man = _manifest(root / "manifest.json")
    studies: dict[str, dict[str, dict[str, Any]]] = {
        p["id"]: {s: _load(root / rel) for s, rel in p["studies"].items()}
        for p in man["pairs"]}
    transfers = []
    for t in man.get("transfers", []):
        doc = _load(root / t["json"])
        transfers.append({**t, "data": doc["data"], "doc": doc})
    return root, man, studies, transfers


def summary_of(results: str | Path) -> str:
    """The report's summary box (:func:`cover.report.summary.summary_html`, misses first)
    of the results folder ``results``."""
    return _summary(*_folder(results))


def _summary(root: Path, man: Any, studies: dict[str, dict[str, dict[str, Any]]],
             transfers: list[dict[str, Any]]) -> str:
    humans_doc = _load(root / "humans" / "humans.json") if "humans" in man["studies"] else None
    return summary_html(man["pairs"], studies, transfers, man.get("missing", []), humans_doc)


def build_report(results: str | Path, out: str | Path) -> Path:
    """Write the HTML report of the results folder ``results`` to ``out``."""
    root, man, studies, transfers = _folder(results)
    pairs = man["pairs"]
    records = {p["id"]: _load(root / p["queries"]) for p in pairs if p.get("queries")}
    labels = {p["id"]: f"{p['name']} on {p['dataset']}" for p in pairs}
    for pid, rec in records.items():
        rec["label"] = labels[pid]

    body = ["<h1>COVER: certified regions for video temporal grounding</h1>"]
    if man.get("command"):
        body.append("<p class='caption'>Every number on this page is reproduced by:</p>"
                    f"<div class='cmd' id='command'>{esc(man['command'])}</div>")
    proto = man["protocol"]
    body.append(
        f"<p class='caption'>Protocol: source videos split {proto['cal_frac']:.0%}/"
        f"{1 - proto['cal_frac']:.0%} into calibration pool / test (seed {proto['seed']}); "
        f"variability from {proto['n_resamples']} resamples of {proto['resample_frac']:.0%} "
        f"of the pool's videos; alpha grid {', '.join(str(a) for a in proto['alphas'])}. "
        f"A <b>certified region</b> is the grounder's prediction widened (NORM: by a multiple "
        f"of its own length; SEC: by seconds) or the part of its relevance signal above a "
        f"calibrated cut (SLS), so that it contains the true moment with the requested "
        f"probability. COVER {esc(str(man.get('cover_version', '')))}.</p>")
    body.append("<h2 id='summary-h'>Summary</h2>")
    body.append(_summary(root, man, studies, transfers))
    nav = "".join(f"<a href='#s-{s}'>{esc(INTRO.get(s, (s, ''))[0])}</a>"
                  for s in man["studies"])
    body.append(f"<nav>{nav}<a href='#gallery'>Gallery</a><a href='#queries'>All queries</a>"
                "</nav>")
    tables = man.get("tables", [])
    over = [t for t in tables if t["key"] == "overview"]
    if over or any(c["study"] == "overview" for c in man.get("comparisons", [])):
        body.append("<h2 id='overview'>Overview across grounders</h2>")
        for t in over:
            body.append(f"<p class='caption'>{esc(t['caption'])}</p>"
                        + table_html(t["header"], t["rows"]))
        for c in man.get("comparisons", []):
            if c["study"] == "overview":
                path = root / c["path"]
                body.append(img(path, path.stem, CAPTIONS.get(path.name, ""), wide=True))
    for study in man["studies"]:
        stem = study.replace("-", "_")
        keys = [t for t in tables if t["key"] == stem or t["key"].startswith(stem + "_")]
        figs: list[tuple[str, Path]] = []
        miss: list[str] = []
        if study == "transfer":
            for t in transfers:
                figs += [(f"{t['name']}: {' <-> '.join(t['datasets'])}", root / f)
                         for f in t["figures"]]
                miss += [f"{m['part']}: needs {m['needs']}, not available"
                         for m in t["doc"]["missing"]]
            if not transfers:
                miss.append("Cross-dataset transfer: needs one grounder (same --name) on two "
                            "datasets, not available")
        else:
            figs += [("Every grounder", root / c["path"]) for c in man.get("comparisons", [])
                     if c["study"] == study]
            for p in pairs:
                figs += [(labels[p["id"]], root / f) for f in p["figures"].get(study, [])]
                doc = studies[p["id"]].get(study)
                if doc:
                    miss += [f"{m['part']}: needs {m['needs']}, not available"
                             for m in doc["missing"]]
        body.append(section_html(study, keys, figs, list(dict.fromkeys(miss))))
    body.append("<h2 id='gallery'>Gallery</h2><p class='caption'>Timelines at the "
                f"{1 - man.get('gallery_alpha', 0.1):.0%} target: truth (black), the "
                "grounder's prediction (pink), the certified region of each family, and the "
                "relevance signal with the calibrated SLS cut (dashed). Time in seconds.</p>")
    for p in pairs:
        if p["id"] in records:
            body.append(gallery_html(p["id"], labels[p["id"]], records[p["id"]]))
    body.append("<h2 id='queries'>All test queries</h2>")
    body.append(query_table_html(records))
    doc_html = page("COVER report", fill_glossary("".join(body)), records)
    target = Path(out)
    write_text(target, doc_html)
    return target
