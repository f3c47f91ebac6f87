"""Tables of study results: plain text for the console, Markdown for files."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cover.studies.coverage_validity import ValidityResult
from cover.studies.result import TIES_MARK, TIES_MEANING, cell_marks, family_label


def render(header: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> str:
    """A Markdown table, or an aligned plain-text one for the console."""
    if markdown:
        lines = ["| " + " | ".join(header) + " |",
                 "|" + "|".join("---:" if i else "---" for i in range(len(header))) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    fmt = "  ".join(f"{{:>{w}}}" if i else f"{{:<{w}}}" for i, w in enumerate(widths))
    out = [fmt.format(*header), "  ".join("-" * w for w in widths)]
    out += [fmt.format(*r) for r in rows]
    return "\n".join(out)


def validity_table(result: ValidityResult, *, markdown: bool = False) -> str:
    """Target vs realised coverage and length per family (mean ± sd over resamples).

    A ``*`` marks a mean coverage outside its 95% test band
    ``k/(n+1) ± 1.96 sqrt(sd_Beta^2 + sd_test^2)``; a ``†`` a cell whose calibration
    scores are tied at the threshold (:data:`TIES_LEGEND`, stated in
    :func:`validity_summary`).
    """
    fams = result.families
    header = ["1-alpha", "k/(n+1) [95% test band]"]
    for f in fams:
        header += [f"{family_label(f)} coverage", f"{family_label(f)} length (s)"]
    rows = []
    for alpha in result.protocol.alphas:
        first = result.cell(fams[0], alpha)
        row = [f"{1 - alpha:.2f}",
               f"{first.expected:.3f} [{first.band_lo:.3f}, {first.band_hi:.3f}]"]
        for f in fams:
            c = result.cell(f, alpha)
            row += [f"{c.coverage_mean:.3f} ± {c.coverage_sd:.3f}{cell_marks(c)}",
                    f"{c.length_mean:.1f} ± {c.length_sd:.1f}"]
        rows.append(row)
    return render(header, rows, markdown)


def validity_summary(result: ValidityResult) -> str:
    """One paragraph: split sizes and what the band flags say."""
    outside = [c for c in result.cells if not c.within_band]
    p = result.protocol
    # The misses first, in plain words; then how the numbers were made.
    if outside:
        text = (f"{result.name}: {len(outside)} of {len(result.cells)} cells lie outside "
                "their 95% test band: " + ", ".join(
                    f"{family_label(c.family)} at 1-alpha={c.target:.2f} ({c.coverage_mean:.3f} "
                    f"vs [{c.band_lo:.3f}, {c.band_hi:.3f}])" for c in outside) + ". ")
    else:
        text = (f"{result.name}: every cell's mean coverage lies inside its 95% test band "
                f"({len(result.cells)} cells). ")
    text += (f"{result.n_rows} queries; unit-level split {p.cal_frac:.0%}/"
             f"{1 - p.cal_frac:.0%} (seed {p.seed}) -> pool {result.n_pool} rows / "
             f"{result.n_units_pool} videos, test {result.n_test} rows / {result.n_units_test} "
             f"videos; {p.n_resamples} resamples of {p.resample_frac:.0%} of the pool "
             f"(n ≈ {result.cells[0].n_calibration} rows). Base grounder point-IoU on test: "
             f"{result.point_iou:.3f}. ")
    if result.field_metrics:
        text += f"The field's metrics on test: {field_metrics_text(result.field_metrics)}. "
    tied = [c for c in result.cells if not c.upper_bound_applies]
    if tied:
        text += (f"{len(tied)} of {len(result.cells)} cells are marked {TIES_MARK}, "
                 f"{TIES_MEANING}. ")
    refused = {f: c.get("pool_refused", 0) + c.get("test_refused", 0)
               for f, c in result.counts.items()}
    if any(refused.values()):
        text += "Refused rows (certified as the whole video): " + ", ".join(
            f"{family_label(f)} {n}" for f, n in refused.items() if n) + ". "
    return text


def field_metrics_text(metrics: dict[str, Any]) -> str:
    """``R1@0.3 .. / R1@0.5 .. / R1@0.7 .. / mIoU .. / mAP ..`` from
    :meth:`cover.grounding_metrics.GroundingMetrics.to_dict` (percent), then
    ``HL-mAP .. / HIT@1 ..`` (VeryGood) when highlight labels were there, and how many
    rows were ranked by score first (:func:`cover.window_matching.rank_by_score`)."""
    full = metrics["full"]
    keys = ("R1@0.3", "R1@0.5", "R1@0.7", "mIoU", "mAP")
    parts = [f"{k} {full[k]:.2f}" for k in keys if full.get(k) is not None]
    hl = highlight_values(metrics)
    if hl is not None:
        parts += [f"HL-mAP {hl[0]:.2f}", f"HIT@1 {hl[1]:.2f} (VeryGood, {hl[2]} rows)"]
    text = ", ".join(parts)
    if metrics.get("rows_reordered_by_score"):
        # eval.py would score these rows on their first listed windows, not their best.
        text += (f" ({metrics['rows_reordered_by_score']} of {full['n']} rows listed their "
                 "windows out of score order; they are ranked by score first)")
    return text


def highlight_values(metrics: dict[str, Any]) -> tuple[float, float, int] | None:
    """``(HL-mAP, HIT@1, rows)`` at the VeryGood level from a field-metrics dict, or None
    when it has no highlight detection (no labels or no saliency)."""
    from cover.highlight_metrics import HL_HEADLINE

    hl = metrics.get("highlight")
    if not hl:
        return None
    level = hl[f"HL-min-{HL_HEADLINE}"]
    return level["HL-mAP"], level["HL-Hit1"], hl["n"]


def _pct(metrics: dict[str, Any], key: str) -> str:
    v = metrics.get("full", {}).get(key)
    return "n/a" if v is None else f"{v:.2f}"


def _hl_cells(metrics: dict[str, Any]) -> list[str]:
    hl = highlight_values(metrics)
    return ["n/a", "n/a"] if hl is None else [f"{hl[0]:.2f}", f"{hl[1]:.2f}"]


def multi_validity_table(results: Sequence[ValidityResult], alpha: float, *,
                         markdown: bool = True) -> str:
    """One row per grounder at one alpha: coverage and length per family."""
    fams = results[0].families
    # HL columns only where some grounder has them: other tables keep their bytes.
    hl = any(highlight_values(r.field_metrics or {}) for r in results)
    header = ["grounder", "R1@0.5", "mIoU"] + (["HL-mAP", "HIT@1"] if hl else [])
    header += ["point-IoU"]
    for f in fams:
        header += [f"{family_label(f)} cov", f"{family_label(f)} len (s)"]
    rows = []
    for r in results:
        row = [r.name, _pct(r.field_metrics, "R1@0.5"), _pct(r.field_metrics, "mIoU")]
        row += _hl_cells(r.field_metrics or {}) if hl else []
        row += [f"{r.point_iou:.3f}"]
        for f in fams:
            c = r.cell(f, alpha)
            row += [f"{c.coverage_mean:.3f}{cell_marks(c)}",
                    f"{c.length_mean:.1f}"]
        rows.append(row)
    return render(header, rows, markdown)
