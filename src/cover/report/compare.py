"""``cover compare`` in words: the console table, the line about dropped queries, and a
self-contained HTML page (the study report's layout and summary box)."""

from __future__ import annotations

from typing import Any

from cover.report.glossary import SLOT, fill_glossary
from cover.report.layout import esc, page, table_html
from cover.report.misses import band_miss
from cover.report.tables import render


def _fmt(value: float, unit: str, *, signed: bool = False) -> str:
    """A value in its metric's unit (coverage 3 decimals, seconds 1, shares and percent
    as percent with 1 or 2 decimals)."""
    sign = "+" if signed else ""
    if unit == "s":
        return f"{value:{sign}.1f} s"
    if unit == "share":
        return f"{100 * value:{sign}.1f}%"
    if unit == "%":
        return f"{value:{sign}.2f}"
    return f"{value:{sign}.3f}"


def side_label(side: dict[str, Any]) -> str:
    """``name (NORM, split)``: what was certified on this side."""
    return f"{side['name']} ({side['score'].upper()}, {side['rule']})"


def dropped_line(doc: dict[str, Any]) -> str:
    """How many queries were paired, and which were dropped and why."""
    q = doc["queries"]
    text = (f"paired {q['common']} queries ({q['calibration']} calibrate both sides, "
            f"{q['test']} from {q['videos_test']} videos are compared)")
    drops = []
    for side, key in (("a", "only_a"), ("b", "only_b")):
        if q[key]:
            ex = ", ".join(str(x) for x in q[f"{key}_examples"])
            drops.append(f"{q[key]} only in {doc[side]['preds']} (qid {ex}"
                         f"{', ...' if q[key] > len(q[f'{key}_examples']) else ''})")
    if drops:
        text += "; dropped, as the other file has no prediction for them: " + "; ".join(drops)
    else:
        text += "; no query dropped (both files predict the same labelled queries)"
    return text


def _rows(doc: dict[str, Any]) -> list[list[str]]:
    return [[m["label"], _fmt(m["a"], m["unit"]), _fmt(m["b"], m["unit"]),
             _fmt(m["diff"], m["unit"], signed=True),
             f"[{_fmt(m['ci_lo'], m['unit'], signed=True)}, "
             f"{_fmt(m['ci_hi'], m['unit'], signed=True)}]", m["verdict"]]
            for m in doc["metrics"]]


def _header(doc: dict[str, Any]) -> list[str]:
    return ["metric", "A", "B", "A - B", f"{doc['level']:.0%} CI (videos)", "verdict"]


def _protocol(doc: dict[str, Any]) -> str:
    q = doc["queries"]
    return (f"Both sides are calibrated at alpha = {doc['alpha']} on the same "
            f"{q['calibration']} calibration queries ({q['videos_calibration']} videos, "
            f"split seed {doc['seed']}, {doc['cal_frac']:.0%} of the videos) and compared on "
            f"the same {q['test']} test queries ({q['videos_test']} videos). A - B is the "
            "mean of per-query differences; its interval is the test band of that mean "
            "(normal approximation, sd clustered by source video, clipped to the possible "
            "range) and holds the calibration split fixed. R1 and mIoU are the grounders' "
            "own top-1 predictions (percent, Moment-DETR definitions); they do not depend on "
            "the rule or score family.")


def side_misses(doc: dict[str, Any]) -> list[str]:
    """Each side whose test coverage lies outside its 95% test band, in the words of
    ``cover evaluate`` (:func:`cover.report.misses.band_miss`)."""
    out = []
    for side in ("a", "b"):
        band = doc[side].get("test_band")
        miss = None if band is None else band_miss(
            band["coverage"], band["lo"], band["hi"], who=f"{side_label(doc[side])} ")
        if miss is not None:
            out.append(miss)
    return out


def compare_text(doc: dict[str, Any]) -> str:
    """The console report: a side's coverage outside its test band first, then who is A
    and B, the table, and the protocol in one paragraph."""
    misses = "".join(f"{m}\n" for m in side_misses(doc))
    head = (f"{misses}A = {side_label(doc['a'])}\nB = {side_label(doc['b'])}\n")
    return f"{head}\n{render(_header(doc), _rows(doc), False)}\n\n{_protocol(doc)}"


def _summary(doc: dict[str, Any]) -> str:
    """The box a reader can quote: every clear difference, then what is not clear."""
    clear = [m for m in doc["metrics"] if m["verdict"] != "no clear difference"]
    unclear = [m["label"] for m in doc["metrics"] if m["verdict"] == "no clear difference"]
    items = [f"<li><b>{esc(m['label'])}</b>: {esc(m['verdict'])} "
             f"(A - B = {esc(_fmt(m['diff'], m['unit'], signed=True))}, {doc['level']:.0%} CI "
             f"[{esc(_fmt(m['ci_lo'], m['unit'], signed=True))}, "
             f"{esc(_fmt(m['ci_hi'], m['unit'], signed=True))}])</li>" for m in clear]
    if any(m["metric"] == "coverage" and m["verdict"] != "no clear difference"
           for m in doc["metrics"]):
        items.append("<li>Both sides aim at the same target: higher coverage is not better "
                     "in itself, it is usually paid for in length.</li>")
    if unclear:
        items.append(f"<li>No clear difference (the interval contains 0): "
                     f"{esc(', '.join(unclear))}.</li>")
    bands = []
    for side in ("a", "b"):
        band, test = doc[side].get("calibration_band"), doc[side].get("test_band")
        if band:
            bands.append(f"{esc(doc[side]['name'])}: expected coverage k/(n+1) = "
                         f"{band['expected']:.3f}, {esc(band.get('name', 'calibration band'))} "
                         f"[{band['lo']:.3f}, {band['hi']:.3f}]"
                         + (f", test band [{test['lo']:.3f}, {test['hi']:.3f}] (coverage "
                            f"{test['coverage']:.3f})" if test else ""))
    misses = "".join(f"<li><b>{esc(m.split(': ', 1)[0].capitalize())}</b>: "
                     f"{esc(m.split(': ', 1)[1])}</li>" for m in side_misses(doc))
    return (f"<div class='summary' id='summary'><p><b>In short.</b> A = "
            f"{esc(side_label(doc['a']))}, B = {esc(side_label(doc['b']))}, on "
            f"{doc['queries']['test']} shared test queries.</p>"
            + (f"<ul>{misses}</ul>" if misses else "") + f"<ul>{''.join(items)}</ul>"
            + (f"<p class='caption'>{'; '.join(bands)}.</p>" if bands else "")
            + f"<p class='caption'>{esc(dropped_line(doc).capitalize())}.</p></div>")


def compare_html(doc: dict[str, Any]) -> str:
    """A self-contained page: summary box, the table, the protocol, the calibrators."""
    body = [f"<h1>COVER compare: {esc(doc['a']['name'])} vs {esc(doc['b']['name'])}</h1>",
            _summary(doc), "<h2>Paired differences</h2>",
            f"<p class='caption'>{esc(_protocol(doc))}</p>",
            table_html(_header(doc), _rows(doc)), "<h2>Calibrators</h2>"]
    for side in ("a", "b"):
        s = doc[side]
        body.append(f"<p><b>{side.upper()} = {esc(side_label(s))}</b>, {esc(s['preds'])}, "
                    f"{s['n_calibration']} calibration rows:</p><ul>"
                    + "".join(f"<li>{esc(line)}</li>" for line in s["thresholds"]) + "</ul>")
    body.append(SLOT)  # the glossary of the terms the page uses
    return page("COVER compare", fill_glossary("".join(body)), {})
