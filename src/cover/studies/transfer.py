"""Study 5, cross-dataset transfer (paper Tables 12-13; SPEC §6.5).

One grounder on two datasets A and B. Covariate-shift diagnostic: two-sample KS on
true event length, video duration, predicted length and the NORM / SEC scores, each
against the within-dataset noise floor (KS between each dataset's own calibration pool
and test split); ratio = cross KS / the larger floor. Transfer, both directions:
calibrate on the source pool, evaluate on the target test split, against the matched
baseline calibrated on the target's own pool; gap = matched - transferred coverage.
Weighted, two ways: the paper's duration buckets (two buckets with a hard cut-off,
pooled fallback) and weighted split conformal with logistic likelihood ratios on
duration, each with its positivity report; plus the support of the target's durations
in the source calibration rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.buckets import duration_bucketed
from cover.calibrate.split import split_conformal
from cover.calibrate.weighted import weighted_from_covariate
from cover.studies.common import HEADLINE_TARGETS, alpha_of, ks_statistic
from cover.studies.context import Pair
from cover.studies.result import StudyResult, Table, family_label, fmt

F64 = NDArray[np.float64]


def _features(pair: Pair, part: str) -> dict[str, F64]:
    tab = pair.pool if part == "pool" else pair.test
    ts, te = tab.truth_envelope()
    out = {"True event length": te - ts, "Video duration": tab.duration,
           "Predicted length": (tab.pred_end - tab.pred_start)[tab.has_interval]}
    for fam in ("norm", "sec"):
        if fam in pair.families:
            s = pair.sweep(part, fam).scores
            out[f"Score, {family_label(fam)}"] = s[np.isfinite(s)]
    return out


def covariate_shift(a: Pair, b: Pair) -> list[dict[str, Any]]:
    """KS of each feature within A, within B, and across (A pool vs B test)."""
    fa_p, fa_t, fb_p, fb_t = (_features(a, "pool"), _features(a, "test"),
                              _features(b, "pool"), _features(b, "test"))
    rows = []
    for feat in fa_p:
        if feat not in fb_t:
            continue
        w_a = ks_statistic(fa_p[feat], fa_t[feat])
        w_b = ks_statistic(fb_p[feat], fb_t[feat])
        cross = ks_statistic(fa_p[feat], fb_t[feat])
        floor = max(w_a, w_b)
        rows.append({"feature": feat, "within_source": w_a, "within_target": w_b,
                     "cross": cross, "ratio": cross / floor if floor > 0 else float("inf")})
    return rows


def support(source: Pair, target: Pair) -> dict[str, Any]:
    """How much of the target's duration range the source calibration rows cover:
    target test rows outside the source pool's duration range, and source pool rows
    inside the target's central 98% duration range."""
    src, tgt = source.pool.duration, target.test.duration
    lo, hi = np.quantile(tgt, [0.01, 0.99])
    outside = (tgt < src.min()) | (tgt > src.max())
    inside = (src >= lo) & (src <= hi)
    return {"target_rows_outside_source_range": int(outside.sum()),
            "target_rows": int(tgt.size),
            "source_rows_in_target_range": int(inside.sum()), "source_rows": int(src.size),
            "source_duration_range": [float(src.min()), float(src.max())],
            "target_duration_range_98": [float(lo), float(hi)]}


def bucket_edge(source: Pair, target: Pair) -> float:
    """The hard duration cut-off of the two-bucket correction: midway between the source
    pool's and the target test split's median durations (one bucket per dataset's range)."""
    return 0.5 * float(np.median(source.pool.duration) + np.median(target.test.duration))


def weighted_thresholds(source: Pair, target: Pair, fam: str, alpha: float
                        ) -> tuple[F64, dict[str, Any], F64 | None, dict[str, Any]]:
    """Per-test-row thresholds of the two corrections, with their positivity reports:
    duration buckets (paper; pooled fallback where a bucket is too small) and weighted
    split conformal with logistic likelihood ratios on duration."""
    src = source.sweep("pool", fam).scores
    sd, td = source.pool.duration, target.test.duration
    edge = bucket_edge(source, target)
    th = duration_bucketed(src, sd, alpha=alpha, edges=[edge], warn=False)
    codes = th.grouping.assign(td)
    bucketed = th.per_row(codes)
    b_report = {"edge_s": edge, "buckets": [
        {"label": lab, "source_rows": int(n), "target_rows": int(np.sum(codes == g)),
         "fallback_to_pool": bool(fb), "threshold": float(v)}
        for g, (lab, n, fb, v) in enumerate(zip(th.labels, th.n, th.fallback, th.values,
                                                strict=True))]}
    try:
        wt, _ = weighted_from_covariate(src, sd, td, alpha=alpha)
    except (ValueError, np.linalg.LinAlgError) as exc:
        return bucketed, b_report, None, {"error": str(exc)}
    rep = wt.report
    w_report = {"ess": rep.ess, "n_calibration": rep.n_calibration,
                "unsupported": int(rep.unsupported.sum()), "n_test": int(rep.unsupported.size),
                "outside_range": int(rep.outside.sum()) if rep.outside is not None else None,
                "lines": rep.lines()}
    return bucketed, b_report, wt.values, w_report


def transfer_direction(source: Pair, target: Pair,
                       targets: tuple[float, ...]) -> list[dict[str, Any]]:
    """Matched, unweighted and weighted transfer coverage on the target's test split."""
    cells = []
    for fam in ("norm", "sec"):
        if fam not in source.families or fam not in target.families:
            continue
        tgt_test = target.sweep("test", fam)
        for t in targets:
            a = alpha_of(t)
            lam_m = split_conformal(target.sweep("pool", fam).scores, alpha=a, warn=False).value
            lam_u = split_conformal(source.sweep("pool", fam).scores, alpha=a, warn=False).value
            bucketed, b_rep, weighted, w_rep = weighted_thresholds(source, target, fam, a)
            n = len(tgt_test)
            lams = [np.full(n, lam_m), np.full(n, lam_u), bucketed]
            if weighted is not None:
                lams.append(weighted)
            m = tgt_test.at(np.stack(lams))
            cov = m.coverage()
            length = m.mean("length")
            cell = {"family": fam, "target": t, "matched": float(cov[0]),
                    "unweighted": float(cov[1]), "gap_unweighted": float(cov[0] - cov[1]),
                    "bucketed": float(cov[2]), "gap_bucketed": float(cov[0] - cov[2]),
                    "matched_length": float(length[0]), "unweighted_length": float(length[1]),
                    "bucketed_length": float(length[2]),
                    "threshold_matched": lam_m, "threshold_source": lam_u,
                    "buckets": b_rep, "positivity": w_rep}
            if weighted is not None:
                cell |= {"weighted": float(cov[3]), "gap_weighted": float(cov[0] - cov[3]),
                         "weighted_length": float(length[3])}
            cells.append(cell)
    return cells


def transfer(a: Pair, b: Pair, targets: tuple[float, ...] = HEADLINE_TARGETS) -> StudyResult:
    """Both directions of A <-> B transfer for one grounder."""
    shift = covariate_shift(a, b)
    dirs = {f"{a.dataset} -> {b.dataset}": transfer_direction(a, b, targets),
            f"{b.dataset} -> {a.dataset}": transfer_direction(b, a, targets)}
    supp = {f"{a.dataset} -> {b.dataset}": support(a, b),
            f"{b.dataset} -> {a.dataset}": support(b, a)}
    ks = Table("transfer_ks", f"Covariate-shift diagnostic, {a.name}: two-sample KS within "
               f"{a.dataset} (pool vs test), within {b.dataset}, and across ({a.dataset} pool "
               f"vs {b.dataset} test); ratio = cross / the larger within-dataset KS.",
               ("Grounder", "Feature", f"Within {a.dataset}", f"Within {b.dataset}", "Cross",
                "Ratio (x)"),
               tuple((a.name, r["feature"], fmt(r["within_source"]), fmt(r["within_target"]),
                      fmt(r["cross"]), fmt(r["ratio"], 1)) for r in shift))
    rows = []
    for d, cells in dirs.items():
        for c in cells:
            w = (fmt(c["weighted"]), f"{c['gap_weighted']:+.3f}") if "weighted" in c else (
                "n/a", "n/a")
            rows.append((a.name, d, family_label(c["family"]), f"{c['target']:.2f}",
                         fmt(c["matched"]), fmt(c["unweighted"]), f"{c['gap_unweighted']:+.3f}",
                         fmt(c["bucketed"]), f"{c['gap_bucketed']:+.3f}", *w))
    cov = Table("transfer", "Cross-dataset transfer: matched (calibrated on the target "
                "dataset's own pool), unweighted transfer (calibrated on the source pool), "
                "the paper's weighted correction (two duration buckets, pooled fallback) and "
                "weighted split conformal with logistic likelihood ratios on duration; "
                "gap = matched - transferred coverage.",
                ("Grounder", "Direction", "Family", "Target", "Matched", "Unweighted cov.",
                 "Unweighted gap", "Bucketed cov.", "Bucketed gap", "LR-weighted cov.",
                 "LR-weighted gap"), tuple(rows))
    pos_rows = []
    for d, cells in dirs.items():
        pick = [c for c in cells if c["family"] == "norm" and abs(c["target"] - 0.9) < 1e-9]
        if not pick and not cells:
            continue
        c = (pick or cells)[0]
        bk = "; ".join(f"{b['label']} s: {b['source_rows']} source / {b['target_rows']} "
                       f"target rows{' -> pooled fallback' if b['fallback_to_pool'] else ''}"
                       for b in c["buckets"]["buckets"])
        p = c["positivity"]
        lr = (f"{p['unsupported']} of {p['n_test']} target rows unsupported; ESS "
              f"{p['ess']:.1f} of {p['n_calibration']}" if "ess" in p else p.get("error", ""))
        pos_rows.append((a.name, d, bk, lr))
    positivity = Table("transfer_positivity", "Positivity report (NORM, target 0.90): how "
                       "many source calibration rows each duration bucket draws on (a bucket "
                       "too small falls back to the whole pool), and which target rows the "
                       "likelihood-ratio weights leave unsupported (threshold +inf: whole "
                       "video).", ("Grounder", "Direction", "Duration buckets",
                                   "Likelihood-ratio weights"), tuple(pos_rows))
    sup_rows = tuple(
        (a.name, d, f"{s['target_rows_outside_source_range']} / {s['target_rows']}",
         f"{s['source_rows_in_target_range']} / {s['source_rows']}",
         f"{s['source_duration_range'][0]:.0f}-{s['source_duration_range'][1]:.0f} s",
         f"{s['target_duration_range_98'][0]:.0f}-{s['target_duration_range_98'][1]:.0f} s")
        for d, s in supp.items())
    sup = Table("transfer_support", "Duration support: target test rows outside the source "
                "calibration durations, and source calibration rows inside the target's "
                "central 98% duration range (zero means no reweighting on duration can "
                "repair the shift: a positivity failure).",
                ("Grounder", "Direction", "Target rows outside source range",
                 "Source rows in target range", "Source durations", "Target durations (98%)"),
                sup_rows)
    data = {"datasets": [a.dataset, b.dataset], "grounder": a.name, "shift": shift,
            "directions": dirs, "support": supp, "targets": list(targets)}
    return StudyResult("transfer", "Cross-dataset transfer", f"{a.name}: {a.dataset} <-> "
                       f"{b.dataset}", data, [ks, cov, positivity, sup])
