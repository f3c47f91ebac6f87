"""The report's opening, in plain words, computed from the study JSON: first every place
the guarantee falls short (:mod:`cover.report.misses`), then whether the target is met
(with its calibration band), what the region costs (seconds and share of the video),
which boundary is the grounder's weak side, and what hand-picked padding would have done;
then the glossary (:mod:`cover.report.glossary`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cover.report.glossary import SLOT
from cover.report.layout import esc
from cover.report.misses import TARGET, headline, misses, mondrian_note, transfer_misses


def _cell(cells: list[dict[str, Any]], family: str, target: float) -> dict[str, Any] | None:
    return next((c for c in cells if c.get("family") == family
                 and abs(c.get("target", -1) - target) < 1e-9), None)


def pair_sentences(studies: dict[str, dict[str, Any]]) -> list[str]:
    """Plain sentences (HTML-escaped, with light markup) about one pair beyond the headline
    (:func:`cover.report.misses.headline`): weak side, hand-picked margins, the split."""
    out: list[str] = []
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
    unc = studies.get("uncertainty")
    if unc:
        out += _uncertainty_sentences(unc["data"])
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


def _uncertainty_sentences(data: dict[str, Any]) -> list[str]:
    """The grounder's own reported uncertainty at :data:`TARGET` (study 9): what its
    nominal region covers and costs, beside COVER's calibrated regions on the same test
    queries; nothing when the grounder reports none."""
    at = {c["method"]: c for c in data.get("cells", []) if abs(c["target"] - TARGET) < 1e-9}
    nominal = at.pop("nominal", None)
    if nominal is None:
        return []
    from cover.studies.uncertainty import SHADE_GAP

    short = nominal["coverage"] < TARGET - SHADE_GAP  # the study's shading
    cover = ", ".join(f"{m.removeprefix('COVER (').rstrip(')')} {c['coverage']:.3f} at "
                      f"{c['length']:.1f} s" for m, c in at.items())
    return [f"The grounder's own reported uncertainty, read as a {TARGET:.0%} region "
            f"without calibration, covers <b>{nominal['coverage']:.3f}</b> of the test "
            f"queries at {nominal['length']:.1f} s"
            + (" (overconfident: short of the level it claims)" if short else "")
            + (f"; COVER's calibrated regions on the same queries (mean over calibration "
               f"resamples): {cover}." if cover else ".")]


def _facts(studies: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The headline numbers of one pair (what the overview sentences and row need)."""
    out: dict[str, Any] = {}
    cov = studies.get("coverage")
    if cov:
        at = [c for c in cov["data"]["cells"] if abs(c["target"] - TARGET) < 1e-9]
        out["met"] = bool(at) and all(c["within_band"] or c["coverage_mean"] >= c["target"]
                                      for c in at)
        out["coverage"] = ", ".join(f"{c['family'].upper()} {c['coverage_mean']:.3f}"
                                    for c in at)
    eff = studies.get("efficiency")
    if eff:
        at = [c for c in eff["data"]["cells"] if abs(c["target"] - TARGET) < 1e-9]
        if at:
            best = min(at, key=lambda c: c["length_mean"])
            out["cost"] = (best["length_mean"], best["length_frac_mean"], best["family"])
    two = studies.get("two-param")
    if two:
        c = _cell(two["data"]["cells"], "norm", TARGET)
        if c:
            r = c["ratio_start_end"]
            out["weak"] = "neither" if 0.8 <= r <= 1.25 else ("end" if r < 1 else "start")
            out["ratio"] = r
    mar = studies.get("margins")
    if mar:
        out["swing"] = max(mar["data"]["coverage"]) - min(mar["data"]["coverage"])
    exch = studies.get("exchangeability")
    if exch and exch["data"]["cells"]:
        out["p_min"] = min(c["p_value"] for c in exch["data"]["cells"])
    return out


def _overview(pairs: list[dict[str, Any]], facts: dict[str, dict[str, Any]]) -> str:
    """Plain words across all pairs, then one compact row per pair."""
    n = len(pairs)
    measured = [p for p in pairs if "met" in facts[p["id"]]]  # the coverage study ran
    met = [p for p in measured if facts[p["id"]]["met"]]
    costs = [facts[p["id"]]["cost"] for p in pairs if "cost" in facts[p["id"]]]
    weak = [f"{p['name']} ({facts[p['id']]['weak']})" for p in pairs
            if facts[p["id"]].get("weak") not in (None, "neither")]
    swings = [facts[p["id"]]["swing"] for p in pairs if "swing" in facts[p["id"]]]
    parts = [f"<p><b>In short.</b> {n} grounder/dataset pairs were certified. "]
    if measured:
        parts.append(f"Realised coverage over all test queries is "
                     f"<span class='{'ok' if len(met) == len(measured) else 'bad'}'>"
                     f"consistent with the {TARGET:.0%} target on {len(met)} of "
                     f"{len(measured)}</span> (at or above it, or inside the test band that "
                     "a finite calibration set and a finite test set allow)"
                     + (f"; not measured on {n - len(measured)} (no coverage study)."
                        if len(measured) < n else "."))
    else:
        parts.append("Realised coverage over all test queries was not measured in this run "
                     "(the coverage study did not run).")
    if costs:
        lo, hi = min(c[1] for c in costs), max(c[1] for c in costs)
        parts.append(f" What it costs: the shortest certified region covers {lo:.0%} to "
                     f"{hi:.0%} of the video on average, so a {TARGET:.0%} guarantee is "
                     "nearly as wide as the whole video on these benchmarks (see the table "
                     "below for seconds).")
    if any("weak" in facts[p["id"]] for p in pairs):  # only what the two-param study said
        parts.append(" Weak boundary: " + (", ".join(weak) + " need a clearly larger "
                                           "widening on that side; the others are balanced."
                                           if weak else "no grounder has a clear weak side: "
                                           "start and end widenings are comparable."))
    if swings:
        parts.append(f" Hand-picked padding: fixed margins of 5-160 s swing coverage by "
                     f"{min(swings):.2f}-{max(swings):.2f} across these grounders; only "
                     "calibration lands on the level you ask for.")
    parts.append("</p>")

    def cost(f: dict[str, Any]) -> str:
        c = f["cost"]
        return f"{c[0]:.1f} s, {c[1]:.0%} ({c[2].upper()})"

    def weak_side(f: dict[str, Any]) -> str:
        return f["weak"] + ("" if "ratio" not in f else f" ({f['ratio']:.2f})")

    # A column only where some pair has its number (its study ran): no empty columns.
    columns: list[tuple[str, str, Any]] = [
        ("Cost (shortest family)", "cost", cost),
        ("Weak side (start/end)", "weak", weak_side),
        ("Margin swing", "swing", lambda f: format(f["swing"], ".3f")),
        ("Split p (min)", "p_min", lambda f: format(f["p_min"], ".2f"))]
    columns = [c for c in columns if any(c[1] in facts[p["id"]] for p in pairs)]
    head = ("<tr><th>Grounder</th><th>Dataset</th><th>On target</th><th>Coverage at 0.90"
            "</th>" + "".join(f"<th>{h}</th>" for h, _, _ in columns) + "</tr>")
    rows = []
    for p in pairs:
        f = facts[p["id"]]
        rows.append(
            f"<tr><td>{esc(p['name'])}</td><td>{esc(p['dataset'])}</td>"
            f"<td>{_on_target(f)}</td><td>{esc(f.get('coverage', ''))}</td>"
            + "".join(f"<td>{'' if key not in f else show(f)}</td>"
                      for _, key, show in columns) + "</tr>")
    return "".join(parts) + f"<table>{head}{''.join(rows)}</table>"


def _on_target(f: dict[str, Any]) -> str:
    """A pair's On-target cell: yes, NO, or not measured (its coverage study did not run:
    no coverage is no miss)."""
    return "not measured" if "met" not in f else "yes" if f["met"] else "NO"


def humans_sentence(humans: dict[str, Any] | None, pairs: list[dict[str, Any]],
                    facts: dict[str, dict[str, Any]]) -> str:
    """How the annotators' own certified cost compares with the grounders' on a dataset."""
    if not humans:
        return ""
    out = []
    cells = humans["data"]["cells"]
    for dataset in dict.fromkeys(c["dataset"] for c in cells):
        shares = [c["norm"]["share"] for c in cells if c["dataset"] == dataset and "norm" in c
                  and c["annotator"] != "worker 1"]
        if not shares:
            continue
        text = (f"A human annotator of {esc(dataset)}, certified against the official labels, "
                f"needs {min(shares):.0%}-{max(shares):.0%} of the video for the same "
                f"{TARGET:.0%} guarantee")
        same = [(p, facts[p["id"]]["cost"]) for p in pairs
                if p["dataset"] == dataset and "cost" in facts[p["id"]]]
        if same:
            text += "; " + ", ".join(f"{esc(p['name'])} needs {c[1]:.0%}" for p, c in same)
        out.append(text + ".")
    if not out:
        return ""
    return ("<p><b>The label noise floor.</b> " + " ".join(out) + " No grounder trained on "
            "these labels can be certified much tighter than the annotators agree.</p>")


def summary_html(pairs: list[dict[str, Any]], studies: dict[str, dict[str, dict[str, Any]]],
                 transfers: list[dict[str, Any]], missing: list[str],
                 humans: dict[str, Any] | None = None) -> str:
    """The summary box: plain words (across pairs when there are several, with one compact
    row each and the full sentences folded away), then transfer and what is missing."""
    parts = ['<div class="summary" id="summary">']
    facts = {p["id"]: _facts(studies[p["id"]]) for p in pairs}
    if len(pairs) == 1:
        parts.append(_pair_title(pairs[0]))
    parts.append(misses_html(pairs, studies, transfers))
    if len(pairs) > 1:
        parts.append(_overview(pairs, facts))
        parts.append("<details><summary>The same in sentences, per pair</summary>")
    for p in pairs:
        sents = headline(studies[p["id"]]) + pair_sentences(studies[p["id"]])
        if len(pairs) == 1 and not sents:
            continue  # no cell at the headline's target: nothing to say under the heading
        parts.append(("<p><b>What holds, and what it costs</b></p>" if len(pairs) == 1
                      else _pair_title(p))
                     + "<ul>" + "".join(f"<li>{s}</li>" for s in sents) + "</ul>")
    if len(pairs) > 1:
        parts.append("</details>")
    parts.append(humans_sentence(humans, pairs, facts))
    for t in transfers:
        d = t.get("data", {})
        for direction, cells in d.get("directions", {}).items():
            c = next((c for c in cells if c["family"] == "norm"
                      and abs(c["target"] - TARGET) < 1e-9), None)
            if c:
                text = (f"<p>Transfer {esc(direction)} ({esc(t['name'])}, NORM, "
                        f"{TARGET:.0%} target): calibrated on the other dataset the regions "
                        f"cover {c['unweighted']:.3f} instead of {c['matched']:.3f} (gap "
                        f"{c['gap_unweighted']:+.3f}).")
                sup = d.get("support", {}).get(direction, {})
                if sup.get("source_rows_in_target_range") == 0:
                    text += (" Reweighting on duration cannot repair it: no calibration video "
                             "of the source dataset has a duration in the target's range "
                             "(a positivity failure).")
                parts.append(text + "</p>")
    if missing:
        parts.append("<p>Not filled in this run: " + "; ".join(esc(m) for m in missing)
                     + ".</p>")
    parts.append("</div>")
    parts.append(SLOT)  # the glossary of the terms the whole page uses
    return "".join(parts)


def _pair_title(p: dict[str, Any]) -> str:
    return (f"<p><b>{esc(p['name'])} on {esc(p['dataset'])}</b> ({p['rows']} queries, "
            f"{p['test_rows']} in the test split).</p>")


#: What :func:`cover.report.misses.misses` looks at, per study, in words.
CHECKED = {"conditional": "conditional strata", "coverage": "coverage cells against their "
           "test band", "rcps": "RCPS violations", "utility": "width vs accuracy",
           "exchangeability": "calibration/test exchangeability"}
#: What :func:`cover.report.misses.transfer_misses` looks at.
TRANSFER_CHECKED = "cross-dataset transfer"


def misses_html(pairs: list[dict[str, Any]], studies: dict[str, dict[str, dict[str, Any]]],
                transfers: Sequence[dict[str, Any]] = ()) -> str:
    """Where the guarantee falls short, every pair (named when there are several), then
    every transfer direction, before anything else; or one line saying nothing did."""
    many = len(pairs) > 1
    items = [f"{esc(p['name'])} on {esc(p['dataset'])}: {m}" if many else m
             for p in pairs for m in misses(studies[p["id"]])]
    items += [m for t in transfers for m in transfer_misses(t)]
    if not items:
        checked = [w for key, w in CHECKED.items() if any(key in studies[p["id"]]
                                                          for p in pairs)]
        checked += [TRANSFER_CHECKED] if transfers else []
        if not checked:  # green "no miss" would claim a check that did not run
            return ("<p id='misses'>No study of this run can find a miss of the guarantee "
                    f"(those that can: {esc(', '.join([*CHECKED.values(), TRANSFER_CHECKED]))})"
                    ".</p>")
        return ("<p class='ok' id='misses'>No miss found in what this run checked: "
                f"{esc(', '.join(checked))}.</p>")
    notes = [f"{esc(p['name'])}: {n}" if many else n for p in pairs
             if (n := mondrian_note(studies[p["id"]].get("conditional")))]
    return (f"<p id='misses'><b class='bad'>Where the guarantee falls short ({len(items)})"
            "</b></p><ul class='misses'>" + "".join(f"<li>{m}</li>" for m in items)
            + "</ul>" + "".join(f"<p class='caption'>{n}</p>" for n in notes))
