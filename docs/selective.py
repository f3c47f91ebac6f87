"""Regenerates the selective-grounding table of docs/calibration-rules.md: the Learn-then-Test
rule (``rule="ltt"``) against split conformal on every QVHighlights val grounder and on
Charades-STA (LA-DETR).

Protocol: for each seed (1000..1004) a split by source video, 40% calibration / 60% test
(``cover.data.splits.split_by_unit``). Split conformal and LTT are fitted on the same
calibration half and certify the same test half. LTT settings: answered-miss target
``alpha``, width budget ``max_share = 0.9`` (abstain when the region would cover more than
90% of the video), abstention budget ``max_abstain = 0.3``, ``delta = 0.1``, binomial
bound; score cutoffs at the 10%, 20% and 30% quantiles of the grounder's scores on the
*test* half (unlabelled; fixed before the calibration rows are looked at, as the rule
requires). Cells are mean ± sd over the seeds; "found" counts the seeds where some
configuration passed (else every test query abstains); the answered-miss, abstention and
answered-length columns are over those seeds, the last column over all seeds.

Usage: python docs/selective.py [DATA_DIR]  (prints the blocks; a couple of minutes)
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from cover.calibrate import Calibrator
from cover.calibrate.ltt import grounder_confidence
from cover.data.join import attach_truth
from cover.data.splits import split_by_unit
from cover.data.table import GroundingTable
from cover.errors import CoverWarning
from cover.intervals import Intervals
from cover.io import read_ground_truth, read_predictions

SEEDS = range(1000, 1005)
ALPHAS = (0.1, 0.3)
FAMILIES = ("norm", "sec")
PARAMS = {"max_share": 0.9, "max_abstain": 0.3, "delta": 0.1}


def grounders(data: Path) -> dict[str, tuple[GroundingTable, str]]:
    """Every QVHighlights val prediction file and Charades-STA, joined with their truth."""
    qvh = read_ground_truth(data / "qvhighlights/annotations/highlight_val_release.jsonl").table
    out = {}
    for f in sorted((data / "qvhighlights").glob("*/*val*.jsonl")):
        if f.parent.name == "annotations":
            continue
        table, _ = attach_truth(read_predictions(f).table, qvh)
        out[f"QVH {f.parent.name}/{f.stem}"] = (table, "QVHighlights val")
    cha = read_ground_truth(data / "lighthouse/charades_test_release.jsonl").table
    table, _ = attach_truth(read_predictions(
        data / "charades_sta/la_detr/hl_test_submission.jsonl").table, cha)
    out["Charades-STA la_detr"] = (table, "Charades-STA test")
    return out


def one_seed(table: GroundingTable, family: str, alpha: float, seed: int) -> dict[str, float]:
    split = split_by_unit(table.units, cal_frac=0.4, seed=seed)
    cal, test = table.take(split.calibration), table.take(split.test)
    truth = Intervals.single(*test.truth_envelope())
    reg = Calibrator(score=family, alpha=alpha).fit(cal).certify(test)
    out = {"split_miss": 1 - float(reg.intervals.contains(truth).mean()),
           "split_len": float(reg.length.mean())}
    conf = grounder_confidence(test)
    cuts = (sorted(set(np.quantile(conf, [0.1, 0.2, 0.3]).tolist()))
            if np.isfinite(conf).all() else [])
    ltt = Calibrator(score=family, alpha=alpha, rule="ltt",
                     params={**PARAMS, "score_cutoffs": cuts}).fit(cal)
    reg = ltt.certify(test)
    answered = ~(reg.abstained | reg.refused)
    covered = reg.intervals.contains(truth)
    out |= {"found": float(ltt.params_["found"]),
            "abstain": 1 - float(answered.mean()),
            "ans_miss": 1 - float(covered[answered].mean()) if answered.any() else np.nan,
            "ans_len": float(reg.length[answered].mean()) if answered.any() else np.nan,
            "all_len": float(reg.length.mean()),
            "cut": float("nan" if ltt.params_["score_cutoff"] is None
                         else ltt.params_["score_cutoff"])}
    return out


def cell(values: np.ndarray, fmt: str = ".3f") -> str:
    v = values[np.isfinite(values)]
    if not v.size:
        return "-"
    return f"{v.mean():{fmt}} ± {v.std(ddof=1) if v.size > 1 else 0.0:{fmt}}"


def measure(data: Path) -> list[dict]:
    """One record per (grounder, family, alpha): the per-seed values as arrays."""
    warnings.simplefilter("ignore", CoverWarning)
    recs = []
    for name, (table, dataset) in grounders(data).items():
        for family in FAMILIES:
            for alpha in ALPHAS:
                runs = [one_seed(table, family, alpha, s) for s in SEEDS]
                r = {k: np.array([x[k] for x in runs]) for k in runs[0]}
                share = r["split_len"] / float(np.mean(table.duration))
                recs.append({"name": name, "dataset": dataset, "family": family,
                             "alpha": alpha, "r": r, "share": share})
    return recs


def table(recs: list[dict]) -> str:
    head = ["grounder", "score", "alpha", "split: miss / length s", "ltt found",
            "ltt answered-miss", "ltt abstention", "ltt answered length s",
            "ltt length s (abstained = whole video)"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for rec in recs:
        r = rec["r"]
        ok = r["found"] == 1  # the answered columns: seeds where a configuration passed
        cells = [rec["name"], rec["family"].upper(), f"{rec['alpha']:g}",
                 f"{cell(r['split_miss'])} / {cell(r['split_len'], '.1f')}",
                 f"{int(r['found'].sum())}/{len(SEEDS)}", cell(r["ans_miss"][ok]),
                 cell(r["abstain"][ok]), cell(r["ans_len"][ok], ".1f"),
                 cell(r["all_len"], ".1f")]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def _span(values: list[float], fmt: str) -> str:
    return f"{min(values):{fmt}}–{max(values):{fmt}}"


def findings(recs: list[dict]) -> str:
    """The sentences that quote the table's numbers."""
    def found(rec: dict) -> int:
        return int(rec["r"]["found"].sum())

    low = [rec for rec in recs if rec["alpha"] == min(ALPHAS)]
    high = [rec for rec in recs if rec["alpha"] == max(ALPHAS)]
    passed_low = sum(found(rec) > 0 for rec in low)
    qvh_share = [float(np.mean(rec["share"])) for rec in low if rec["name"].startswith("QVH")]
    norm_high = [rec for rec in high if rec["family"] == "norm"]
    sec_high = [rec for rec in high if rec["family"] == "sec"]
    ok = [rec for rec in recs if found(rec) > 0]
    ans = [float(np.nanmean(rec["r"]["ans_miss"][rec["r"]["found"] == 1])) for rec in ok]
    abst = [float(np.nanmean(rec["r"]["abstain"][rec["r"]["found"] == 1])) for rec in ok]
    longer = [float(np.nanmean(rec["r"]["ans_len"][rec["r"]["found"] == 1])
                    - np.mean(rec["r"]["split_len"])) for rec in ok]
    lines = [
        f"* **At alpha = {min(ALPHAS):g}, a configuration passes on {passed_low} of "
        f"{len(low)} grounder × score rows.** Split conformal's mean region at that level "
        f"is already {_span(qvh_share, '.0%')} of the mean QVHighlights video, and the width "
        f"budget is {PARAMS['max_share']:.0%} with an abstention budget of "
        f"{PARAMS['max_abstain']:.0%}.",
        f"* At alpha = {max(ALPHAS):g}, NORM passes on "
        f"{sum(found(r) > 0 for r in norm_high)} of {len(norm_high)} rows and SEC on "
        f"{sum(found(r) > 0 for r in sec_high)} of {len(sec_high)}: under NORM the narrow "
        "regions are those of short predictions, which miss most often, so abstaining on "
        "wide regions keeps the worst rows (a narrow region is not a better-localized one); "
        "SEC widens every prediction by the same seconds.",
    ]
    if ok:
        lines.append(
            f"* Where it passes, the test half's answered-miss rate is {_span(ans, '.2f')} and "
            f"its abstention rate {_span(abst, '.2f')} (targets: alpha and "
            f"{PARAMS['max_abstain']:g}); the answered regions are "
            f"{_span(longer, '+.1f')} s longer than split conformal's mean region: the gain is "
            "the guarantee on the answered rows and the named abstentions, not shorter "
            "regions.")
    return "\n".join(lines)


def blocks(data: Path) -> dict[str, str]:
    """The generated blocks of docs/calibration-rules.md's selective section."""
    recs = measure(data)
    return {"selective": table(recs), "selective-findings": findings(recs)}


if __name__ == "__main__":
    import docgen

    docgen.print_blocks(blocks)
