"""The summary ``cover evaluate`` prints, misses first: when the coverage lies outside its
95% test band, the line after the header says so in the study's words
(:data:`cover.report.misses.OFF_BAND`: below, fewer true moments covered than promised;
above, more coverage than asked, paid for in length); then coverage and length, the
refused rows, the base grounder's point metrics when the rows carry a predicted window,
the reference (the band and what it is made of), the conditional diagnostics and the
count of every row."""

from __future__ import annotations

from typing import Any

from cover.bands import BETA_BAND
from cover.errors import counted
from cover.grounding_metrics import GroundingMetrics
from cover.metrics import Evaluation
from cover.report.misses import OFF_BAND, band_miss, band_side
from cover.report.tables import field_metrics_text

__all__ = ["summary_lines"]

#: Why the base grounder's IoU is not known: where a predicted window would be read.
NO_WINDOW = ("not known (no row carries a predicted window: Moment-DETR's "
             "pred_relevant_windows, or start and end numbers, which --compact output lacks; "
             "a named layout's rows are read with --format NAME, any other with --columns "
             "windows=SOURCE or start=SOURCE,end=SOURCE)")


def summary_lines(regions: str, ev: Evaluation, field: GroundingMetrics | None,
                  meta: dict[str, Any], counts: dict[str, int], diag: Any = None, *,
                  csv_without_calibrator: bool = False) -> list[str]:
    """The lines of the summary of ``regions`` evaluated (``ev``; ``field``: the base
    grounder's point metrics; ``meta``: the regions' calibrator fields; ``counts``: every
    row's fate; ``diag``: the conditional diagnostics)."""
    m, nr, rows = ev.marginal, ev.non_refused, ev.counts["rows"]
    which = (f"{meta['score']}, alpha={meta.get('alpha')}" if meta.get("score") is not None
             else "calibrator not known")
    dropped = (f"; the marginal counts {m.n} of them (--refusal-policy drop leaves the "
               f"{rows - m.n} refused out)" if m.n != rows else "")
    out = [f"{regions}: {rows} rows evaluated ({which}){dropped}"]
    r = ev.reference
    side = band_side(m.coverage, r["band_lo"], r["band_hi"]) if r is not None and m.n else None
    miss = (band_miss(m.coverage, r["band_lo"], r["band_hi"], digits=4)
            if r is not None and side is not None else None)
    if miss is not None:  # the miss first, in plain words
        out.append(miss)
    if m.n:
        out.append(f"coverage {m.coverage:.4f} (miss rate {m.miss_rate:.4f}); mean length "
                   f"{m.mean_length_s:.1f} s ({m.mean_length_frac:.1%} of the video); IoU "
                   f"{m.mean_iou:.3f}; components {m.mean_components:.2f}")
    else:  # a coverage of no row is no measurement: say so, not "nan"
        out.append("coverage: not measured (every row evaluated was refused, and "
                   "--refusal-policy drop leaves refused rows out)")
    rest = (f"coverage {nr.coverage:.4f}, length {nr.mean_length_s:.1f} s" if nr.n
            else "none (every row evaluated was refused)")
    piou = f"{ev.point_iou:.3f}" if field is not None else NO_WINDOW
    out.append(f"refusal rate {ev.refusal_rate:.3f}; non-refused: {rest}; base grounder "
               f"point-IoU {piou}")
    if ev.selective is not None:
        a = ev.selective["answered"]
        answered = (f"answered-miss rate {a['miss_rate']:.4f}, mean length "
                    f"{a['mean_length_s']:.1f} s" if a["n"] else "none answered")
        out.append(f"selective: abstention rate {ev.selective['abstention_rate']:.4f} "
                   f"({ev.selective['abstained']} abstained, {ev.counts['refused']} refused; "
                   f"their region is the whole video); answered {a['n']}: {answered}")
    if field is not None:
        out.append(f"base grounder, the field's metrics (Moment-DETR eval, percent): "
                   f"{field_metrics_text(field.to_dict())}")
    if r is not None and not m.n:
        out.append("reference: not tested (no row in the marginal coverage)")
    elif r is not None:
        cb = r["calibration_band"]
        out.append(
            f"reference: coverage {m.coverage:.4f} is {_against_band(side)} its 95% test band "
            f"[{r['band_lo']:.4f}, {r['band_hi']:.4f}] around k/(n+1) = {r['expected']:.4f} "
            f"({r['calibration_band_name']} [{cb[0]:.4f}, {cb[1]:.4f}] from n = "
            f"{r['n_calibration']}, Beta sd {r['beta_sd']:.4f}{_unclustered(r)}; this test "
            f"sample's own sd {r['test_sd']:.4f}, clustered by {r['cluster_unit']}: "
            f"{counted(r['test_units'], 'video')}, design effect "
            f"{r['test_design_effect']:.2f}; docs/bands.md)")
    elif csv_without_calibrator:
        out.append("reference: not known (CSV regions carry no calibrator fields; give "
                   "--calibrator, the file certify used, for the band)")
    if diag is not None:
        out.append(f"conditional diagnostics over {', '.join(diag.covariates)} ({diag.rows} "
                   f"rows with them): worst-slab coverage {diag.worst_slab:.4f} (held-out, "
                   f"{diag.slab_rows} rows; in-sample minimum {diag.worst_slab_in_sample:.4f}); "
                   f"coverage gap max {diag.gap_max:.4f} ({diag.worst_bin}), mean "
                   f"{diag.gap_mean:.4f}")
    out.append(f"rows: {counts['rows']} evaluated, {counts['rejected_at_certify']} rejected at "
               f"certify, {counts['rejected_here']} rejected here; "
               f"{counts['ground_truth_not_certified']} ground-truth rows had no region (not "
               "evaluated)")
    return out


def _unclustered(r: dict[str, Any]) -> str:
    """Why the reference gives the Beta band, not the calibration band, when it does
    (:data:`cover.bands.BETA_BAND`): the regions do not say where the calibration rows
    were."""
    return (": the calibration band before its widening for calibration queries that share "
            "a video, which the regions cannot count (cover calibrate prints it)"
            if r["calibration_band_name"] == BETA_BAND else "")


def _against_band(side: str | None) -> str:
    """Where the coverage lies against the test band, in the study's words; above it, one
    cause to look at (the regions alone cannot say which): calibration scores tied at the
    threshold, which ``cover calibrate`` counts."""
    if side == "below":
        return f"BELOW ({OFF_BAND['below']})"
    if side == "above":
        return (f"ABOVE ({OFF_BAND['above']}; e.g. from calibration scores tied at the "
                "threshold, which cover calibrate counts)")
    return "inside"
