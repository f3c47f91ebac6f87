"""The report's opening, in plain words, computed from the study JSON: is the target met,
what does the region cost (seconds and share of the video), which boundary is the
grounder's weak side, and what hand-picked padding would have done."""

from __future__ import annotations

from typing import Any

from cover.report.layout import esc

TARGET = 0.9


def _cell(cells: list[dict[str, Any]], family: str, target: float) -> dict[str, Any] | None:
    return next((c for c in cells if c.get("family") == family
                 and abs(c.get("target", -1) - target) < 1e-9), None)


def pair_sentences(studies: dict[str, dict[str, Any]]) -> list[str]:
    """Plain sentences (HTML-escaped, with light markup) about one pair."""
    out: list[str] = []
    cov = studies.get("coverage")
    if cov:
        cells = cov["data"]["cells"]
        at = [c for c in cells if abs(c["target"] - TARGET) < 1e-9]
        inside = sum(1 for c in cells if c["within_band"])
        if at:
            met = all(c["within_band"] or c["coverage_mean"] >= c["target"] for c in at)
            fams = ", ".join(f"{c['family'].upper()} {c['coverage_mean']:.3f}" for c in at)
            verdict = ('<span class="ok">target met</span>' if met
                       else '<span class="bad">target missed</span>')
            out.append(f"Asked for {TARGET:.0%} coverage, the certified regions contain the "
                       f"true moment in {esc(fams)} of test queries: {verdict} "
                       f"({inside} of {len(cells)} cells of the whole grid inside their "
                       "finite-sample band).")
    eff = studies.get("efficiency")
    if eff:
        at = [c for c in eff["data"]["cells"] if abs(c["target"] - TARGET) < 1e-9]
        if at:
            best = min(at, key=lambda c: c["length_mean"])
            dur = eff["data"]["mean_duration"]
            out.append(f"The guarantee costs {best['length_mean']:.1f} s per query with the "
                       f"shortest family ({best['family'].upper()}), "
                       f"{best['length_frac_mean']:.0%} of the video on average "
                       f"(videos average {dur:.0f} s).")
    two = studies.get("two-param")
    if two:
        c = _cell(two["data"]["cells"], "norm", TARGET) or _cell(two["data"]["cells"], "sec",
                                                                   TARGET)
        if c:
            r = c["ratio_start_end"]
            if 0.8 <= r <= 1.25:
                out.append(f"Neither boundary is a clear weak side: calibrated start and end "
                           f"widenings are comparable (start/end ratio {r:.2f}).")
            else:
                weak = "end" if r < 1 else "start"
                out.append(f"The grounder's weak side is the <b>{weak}</b> boundary: it needs "
                           f"a widening of {max(c['lam_start'], c['lam_end']):.2f} against "
                           f"{min(c['lam_start'], c['lam_end']):.2f} for the other side "
                           f"(start/end ratio {r:.2f}).")
    mar = studies.get("margins")
    if mar:
        d = mar["data"]
        lo, hi = min(d["coverage"]), max(d["coverage"])
        out.append(f"Hand-picked padding is a gamble: fixed margins of "
                   f"{d['lams'][0]:g}-{d['lams'][-1]:g} s give coverage from {lo:.3f} to "
                   f"{hi:.3f} (a swing of {hi - lo:.3f}); only calibration lands on the "
                   "target you ask for.")
    exch = studies.get("exchangeability")
    if exch:
        ps = [c["p_value"] for c in exch["data"]["cells"]]
        if ps:
            out.append(f"The calibration/test split looks exchangeable (unit-level "
                       f"permutation p from {min(ps):.2f} to {max(ps):.2f})."
                       if min(ps) >= 0.05 else
                       f"The split shows a calibration/test difference (smallest permutation "
                       f"p = {min(ps):.3f}); read coverage with that in mind.")
    return out


def summary_html(pairs: list[dict[str, Any]], studies: dict[str, dict[str, dict[str, Any]]],
                 transfers: list[dict[str, Any]], missing: list[str]) -> str:
    """The summary box: one list per (grounder, dataset) pair, then transfer and gaps."""
    parts = ['<div class="summary" id="summary">']
    if len(pairs) > 1:
        met = 0
        for p in pairs:
            cov = studies[p["id"]].get("coverage")
            if cov and all(c["within_band"] or c["coverage_mean"] >= c["target"]
                           for c in cov["data"]["cells"] if abs(c["target"] - TARGET) < 1e-9):
                met += 1
        parts.append(f"<p><b>In short.</b> {len(pairs)} grounder/dataset pairs were "
                     f"certified; the {TARGET:.0%} target is met on {met} of them.</p>")
    for p in pairs:
        sents = pair_sentences(studies[p["id"]])
        parts.append(f"<p><b>{esc(p['name'])} on {esc(p['dataset'])}</b> "
                     f"({p['rows']} queries, {p['test_rows']} in the test split).</p>"
                     "<ul>" + "".join(f"<li>{s}</li>" for s in sents) + "</ul>")
    for t in transfers:
        d = t.get("data", {})
        for direction, cells in d.get("directions", {}).items():
            c = next((c for c in cells if c["family"] == "norm"
                      and abs(c["target"] - TARGET) < 1e-9), None)
            if c:
                parts.append(f"<p>Transfer {esc(direction)} ({esc(t['name'])}, NORM, "
                             f"{TARGET:.0%} target): calibrated on the other dataset the "
                             f"regions cover {c['unweighted']:.3f} instead of "
                             f"{c['matched']:.3f} (gap {c['gap_unweighted']:+.3f}).</p>")
    if missing:
        parts.append("<p>Not filled in this run: " + "; ".join(esc(m) for m in missing)
                     + ".</p>")
    parts.append("</div>")
    return "".join(parts)
