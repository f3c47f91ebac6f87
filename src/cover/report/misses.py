"""The bad news of a study run, in plain words, for the top of the report: every stratum,
cell or check where the guarantee falls short, then the headline (target vs achieved
coverage with its calibration band, and the cost in seconds and share of the video).

Rules (stated here and in the report's glossary):

* a **conditional stratum misses** when its test coverage lies below the target by more
  than 1.96 binomial sd of its own size, ``target - 1.96 sqrt(target (1 - target) / n)``
  (sampling noise alone rarely goes further);
* a **coverage cell is out of band** when its mean coverage lies outside its test band
  (``within_band`` of the coverage study); below is a broken promise, above is length
  paid for nothing;
* **RCPS misses** when the share of calibration draws whose miss rate exceeds alpha is
  above delta;
* the **width is uninformative** when the Spearman correlation between certified width
  and the grounder's IoU is above -0.1 (a useful width is clearly negative: narrow
  regions, better predictions);
* the **split is suspect** when a unit-level permutation test gives p < 0.05;
* a **transfer misses** when regions calibrated on one dataset cover the other's test
  queries below the target by more than 1.96 binomial sd of that test split's size (the
  stratum rule): the guarantee holds within one distribution, not across datasets.
"""

from __future__ import annotations

import math
from typing import Any

from cover.report.layout import esc

#: The level the headline and the misses are stated at.
TARGET = 0.9
#: Width-IoU rank correlation above this says the width does not track accuracy.
RHO_USEFUL = -0.1
Z95 = 1.959963984540054

#: What each conditional stratum is, for a reader who has not seen the study.
STRATUM_WORDS = {
    "Short": "Short events (the shortest third of true moment lengths)",
    "Medium": "Medium events (the middle third of true moment lengths)",
    "Long": "Long events (the longest third of true moment lengths)",
    "Single-window": "Single-window queries (one true moment)",
    "Multi-window": "Multi-window queries (several true moments, covered as their envelope)",
}


def _at(cells: list[dict[str, Any]], target: float) -> list[dict[str, Any]]:
    return [c for c in cells if abs(c.get("target", -1.0) - target) < 1e-9]


def stratum_floor(target: float, n: int) -> float:
    """Lowest coverage a stratum of ``n`` test queries reaches by sampling noise alone
    (1.96 binomial sd below ``target``)."""
    return target - Z95 * math.sqrt(target * (1 - target) / max(n, 1))


def conditional_misses(doc: dict[str, Any]) -> list[str]:
    """Strata of the diagnostic half below their noise floor, grouped by stratum (all
    families named), with what Mondrian calibration does about the worst."""
    d = doc["data"]
    target = d["target"]
    diag = [c for c in d["cells"] if c.get("half") == "diagnostic"]
    out = []
    for stratum in dict.fromkeys(c["stratum"] for c in diag):
        cells = [c for c in diag if c["stratum"] == stratum]
        low = [c for c in cells if c["coverage"] < stratum_floor(target, c["n"])]
        if not low:
            continue
        fams = ", ".join(f"{c['family'].upper()} {c['coverage']:.3f}" for c in low)
        gap = max(target - c["coverage"] for c in low)
        out.append(f"<b>{esc(STRATUM_WORDS.get(stratum, stratum))}</b>, {low[0]['n']} test "
                   f"queries: coverage {esc(fams)} at the {target:.2f} target, up to "
                   f"{100 * gap:.1f} points short. The marginal guarantee holds on "
                   "average over all queries, not within this group.")
    return out


def mondrian_note(doc: dict[str, Any] | None) -> str:
    """What Mondrian calibration does about the strata (empty when nothing misses or the
    conditional study was not run)."""
    if doc is None:
        return ""
    d = doc["data"]
    mond = [c for c in d["cells"] if c.get("half") == "mondrian"]
    if not mond or not conditional_misses(doc):
        return ""
    worst = min(mond, key=lambda c: c["coverage"])
    still = [c for c in mond if c["coverage"] < stratum_floor(d["target"], c["n"])]
    how = ("one threshold per tercile of the <i>predicted</i> length (Mondrian calibration, "
           "same target)")
    where = f"{worst['coverage']:.3f} ({esc(worst['stratum'])}, {worst['family'].upper()})"
    if not still:
        return f"A remedy: {how} gives a worst stratum of {where}, inside its noise."
    return (f"No easy remedy: {how} still leaves {len(still)} of its strata below target "
            f"(worst {where}).")


#: What a coverage below or above its test band means, in every message that says it.
OFF_BAND = {"below": "fewer true moments covered than promised",
            "above": "more coverage than asked, paid for in length"}


def band_side(coverage: float, lo: float, hi: float) -> str | None:
    """``"below"`` or ``"above"`` when ``coverage`` lies outside ``[lo, hi]``, else None."""
    return "below" if coverage < lo else "above" if coverage > hi else None


def band_miss(coverage: float, lo: float, hi: float, *, who: str = "", digits: int = 3
              ) -> str | None:
    """The sentence ``cover evaluate`` and ``cover compare`` open with when ``coverage``
    lies outside its 95% test band ``[lo, hi]`` (``who``: whose coverage, before the
    word), in the study's words (:data:`OFF_BAND`); None inside it."""
    side = band_side(coverage, lo, hi)
    if side is None:
        return None
    verdict = "falls short" if side == "below" else "off its band"
    return (f"{verdict}: {who}coverage {coverage:.{digits}f} is {side} its 95% test band "
            f"[{lo:.{digits}f}, {hi:.{digits}f}]: {OFF_BAND[side]}")


def band_misses(doc: dict[str, Any]) -> list[str]:
    """Coverage cells outside their test band: below first, then above."""
    cells = [c for c in doc["data"]["cells"] if not c.get("within_band", True)]
    out = []
    for c in sorted(cells, key=lambda c: c["coverage_mean"] >= c["band_lo"]):
        side = "below" if c["coverage_mean"] < c["band_lo"] else "above"
        what = OFF_BAND[side]
        out.append(f"{c['family'].upper()} at the {c['target']:.2f} target: coverage "
                   f"{c['coverage_mean']:.3f}, {side} its test band [{c['band_lo']:.3f}, "
                   f"{c['band_hi']:.3f}] ({what}).")
    return out


def other_misses(studies: dict[str, dict[str, Any]]) -> list[str]:
    """RCPS violations, an uninformative width, a suspect split."""
    out = []
    rcps = studies.get("rcps")
    if rcps:
        delta = rcps["data"]["delta"]
        for c in rcps["data"]["cells"]:
            if c["violation_fraction"] > delta:
                out.append(f"RCPS ({c['family'].upper()}, {c['bound']} bound): the test "
                           f"miss rate exceeds alpha for {c['violation_fraction']:.0%} of "
                           f"calibration resamples, more than the delta = {delta:g} it "
                           "promises.")
    util = studies.get("utility")
    if util:
        flat = [c for c in util["data"]["cells"] if c["rho"] > RHO_USEFUL]
        if flat:
            rhos = ", ".join(f"{c['family'].upper()} {c['rho']:+.3f}" for c in flat)
            out.append(f"The certified width barely tracks accuracy: Spearman ρ between width "
                       f"and the grounder's IoU is {esc(rhos)} (a width worth reading would "
                       f"be clearly negative). Do not read a narrow region as a confident "
                       "prediction.")
    exch = studies.get("exchangeability")
    if exch:
        low = [c for c in exch["data"]["cells"] if c["p_value"] < 0.05]
        if low:
            out.append("The calibration pool and the test split differ (unit-level "
                       f"permutation p = {min(c['p_value'] for c in low):.3f}); coverage "
                       "may not carry over.")
    return out


def transfer_misses(transfer: dict[str, Any]) -> list[str]:
    """Directions of one grounder's transfer study whose NORM regions, calibrated on the
    source dataset, cover the target's test queries below :func:`stratum_floor` at
    :data:`TARGET`."""
    out = []
    for direction, cells in transfer.get("data", {}).get("directions", {}).items():
        c = next((c for c in cells if c["family"] == "norm"
                  and abs(c["target"] - TARGET) < 1e-9), None)
        if c is None or c["unweighted"] >= stratum_floor(TARGET, c["positivity"]["n_test"]):
            continue
        source, target = direction.split(" -> ")
        out.append(f"<b>Transfer {esc(direction)}</b> ({esc(transfer['name'])}, NORM): "
                   f"calibrated on {esc(source)}, the regions cover {c['unweighted']:.3f} of "
                   f"{esc(target)}'s {c['positivity']['n_test']} test queries at the "
                   f"{TARGET:.2f} target, {100 * (TARGET - c['unweighted']):.1f} points short "
                   f"(calibrated on {esc(target)}'s own pool: {c['matched']:.3f}). The "
                   "guarantee holds within one distribution, not across datasets.")
    return out


def misses(studies: dict[str, dict[str, Any]]) -> list[str]:
    """Every miss of one pair, the most serious first (HTML sentences)."""
    out: list[str] = []
    if "conditional" in studies:
        out += conditional_misses(studies["conditional"])
    if "coverage" in studies:
        out += band_misses(studies["coverage"])
    return out + other_misses(studies)


def headline(studies: dict[str, dict[str, Any]]) -> list[str]:
    """Target vs achieved coverage at :data:`TARGET` with the calibration band, and the
    cost per family in seconds and share of the video."""
    out = []
    cov = studies.get("coverage")
    at = _at(cov["data"]["cells"], TARGET) if cov else []
    if at:
        c0 = at[0]
        fams = ", ".join(f"{c['family'].upper()} {c['coverage_mean']:.3f}" for c in at)
        inside = all(c["within_band"] for c in at)
        out.append(
            f"<b>Target {TARGET:.0%}, achieved</b> {esc(fams)} (mean over calibration "
            f"resamples of {c0['n_calibration']} queries). Expected k/(n+1) = "
            f"{c0['expected']:.3f}; <b>calibration band</b> [{c0['beta_lo']:.3f}, "
            f"{c0['beta_hi']:.3f}], test band [{c0['band_lo']:.3f}, {c0['band_hi']:.3f}]: "
            + ('<span class="ok">every family inside</span>.' if inside else
               '<span class="bad">not every family inside</span>.'))
        cost = ", ".join(f"{c['family'].upper()} {c['length_mean']:.1f} s "
                         f"({c['length_frac_mean']:.0%} of the video)" for c in at)
        out.append(f"<b>Cost at {TARGET:.0%}</b>: {esc(cost)}.")
    out += split_sensitivity(studies)
    return out


def split_sensitivity(studies: dict[str, dict[str, Any]]) -> list[str]:
    """How much the choice of calibration/test split alone moves coverage at
    :data:`TARGET` (``--split-seeds``): range and sd over seeds per family, the share of
    seeds inside their own test band, and where the protocol seed's value falls."""
    spread = studies.get("split-seeds")
    if not spread:
        return []
    cells = [c for c in spread["data"]["cells"] if c["study"] == "coverage"
             and c["quantity"] == "coverage" and abs(c["target"] - TARGET) < 1e-9]
    if not cells:
        return []
    n = cells[0]["n_seeds"]
    parts = ", ".join(
        f"{c['family'].upper()} {c['min']:.3f} to {c['max']:.3f} (sd {c['sd']:.3f}; "
        f"{c['share_inside_band']:.0%} of seeds inside their test band)" for c in cells)
    return [f"<b>Split sensitivity</b> over {n} unit-level splits, coverage at "
            f"{TARGET:.0%} ranges {esc(parts)}: the choice of split alone moves it this "
            "much (the split-seed section has every cell)."]
