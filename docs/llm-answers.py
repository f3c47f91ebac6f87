"""Regenerates the tables of docs/llm-answers.md: the four UAG-OOPS video-LLM answer files
parsed by cover.grounders.parse (classes per model), agreement with the authors' own
parsed times, the disagreement classes, and COVER's coverage on the parsed predictions
with refusals as whole-video regions.

Usage: python docs/llm-answers.py [DATA_DIR]  (prints Markdown; about a minute)
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from cover.data.join import index_of
from cover.grounders.parse import STATUSES, ParsedColumns, parse_answers
from cover.io.lmms_eval import first_span
from cover.io.uag_oops import read_uag_answers, read_uag_ground_truth
from cover.metrics import point_iou
from cover.studies.coverage_validity import coverage_validity
from cover.studies.protocol import Protocol

UAG = "oops_uag/"
MODELS = {
    "VideoChat2 (zero-shot)": "videochat2_pred_uag_oops_dataset_v1_null_fixed.json",
    "Video-LLaMA2 (zero-shot)": "video_llama2_pred_uag_oops_dataset_v1_null_fixed.json",
    "fine-tuned Video-LLaMA": "finetuned_videollama_pred_x_uag_oops_dataset_v1_null_fixed.json",
    "LLaMA-3 over BLIP-2 captions": "llama3_pred_x_blip2_text_rep_x_uag_oops_dataset_v1_null"
                                    "_fixed.json",
}
ALPHAS = (0.1, 0.2, 0.3)


def disagreement_class(pc: ParsedColumns, i: int, ours: tuple[float, float],
                       theirs: tuple[float, float]) -> str:
    """Why our top-1 differs from the authors' parse of answer ``i``."""
    (s, e), (a, b) = ours, theirs
    mine, authors = np.isfinite(s), np.isfinite(a) and np.isfinite(b)
    status, reason = str(pc.status[i]), str(pc.reason[i])
    if not authors:
        return "authors: null; ours: a time"
    if not mine:
        return {"out_of_range": "starts at/after the clip's end: we refuse, authors keep it",
                "start_only": "start only: we refuse, authors fill an end",
                "failure": "end only: we refuse, authors fill a start"}.get(
            status, f"{status}: we refuse, authors keep a time")
    if "swapped" in reason and (a, b) == (e, s):
        return "start after end: we swap, authors keep it reversed"
    if "midpoint" in reason and (np.floor(s), np.floor(e)) == (a, b):
        return "start/end given as ranges: midpoint; authors floor it to whole seconds"
    if (np.floor(s), np.floor(e)) == (a, b):
        return "fractions of a second: authors drop them (0:00:06.5 -> 6)"
    return "other reading of the text (see examples)"


def main(data: Path) -> None:
    gt = read_uag_ground_truth(data / UAG / "annotations/uag_oops_dataset_v1_start_time_fixed"
                                             ".json").table
    rates: list[str] = []
    agree_rows: list[str] = []
    classes: dict[str, dict[str, int]] = {}
    examples: dict[str, tuple[str, str, str]] = {}
    cover_rows: list[str] = []
    harness_rows: list[str] = []
    for model, name in MODELS.items():
        ans = read_uag_answers(data / UAG / "hasnat79_uag" / name)
        j, found = index_of(gt.qid, ans.clip)
        assert found.all()
        T = gt.duration[j]
        pc = parse_answers(list(ans.text), T)
        c = pc.counts()
        n = len(pc)
        rates.append(f"| {model} | {n} | " + " | ".join(
            f"{c[s]} ({100 * c[s] / n:.1f}%)" for s in STATUSES) + " |")
        ps, pe = pc.top1()
        au = np.isfinite(ans.authors_start) & np.isfinite(ans.authors_end)
        both = au & np.isfinite(ps)
        same = both & (np.abs(ps - ans.authors_start) < 1e-9) & (
            np.abs(pe - ans.authors_end) < 1e-9)
        near = both & (np.abs(ps - ans.authors_start) <= 1) & (np.abs(pe - ans.authors_end) <= 1)
        agree_rows.append(
            f"| {model} | {int(au.sum())} | {int(np.isfinite(ps).sum())} | {int(both.sum())} | "
            f"{int(same.sum())} ({100 * same.sum() / max(both.sum(), 1):.1f}%) | "
            f"{int(near.sum())} | {int((np.isfinite(ps) & ~au).sum())} |")
        for i in np.flatnonzero(~same & (au | np.isfinite(ps))).tolist():
            k = disagreement_class(pc, i, (ps[i], pe[i]),
                                   (ans.authors_start[i], ans.authors_end[i]))
            classes.setdefault(k, {}).setdefault(model, 0)
            classes[k][model] += 1
            examples.setdefault(k, (" ".join(str(ans.text[i]).split())[:220],
                                    f"{ans.authors_raw[i]}",
                                    f"{pc.intervals.row(i) or pc.status[i]}"))
        table = replace(gt.take(j), pred_start=ps, pred_end=pe)
        spans = [first_span(t) for t in ans.text]
        ls = np.array([np.nan if x is None else x[0] for x in spans])
        le = np.array([np.nan if x is None else x[1] for x in spans])
        harness = replace(table, pred_start=ls, pred_end=le)
        agree = np.isfinite(ls) & (np.abs(ls - ps) < 1e-9) & (np.abs(le - pe) < 1e-9)
        ours_iou = np.nan_to_num(point_iou(table))
        lmms_iou = np.nan_to_num(point_iou(harness))
        harness_rows.append(
            f"| {model} | {int(table.has_interval.sum())} | {int(np.isfinite(ls).sum())} | "
            f"{int(agree.sum())} | {ours_iou.mean():.3f} | {lmms_iou.mean():.3f} | "
            f"{np.mean(ours_iou >= 0.5):.3f} | {np.mean(lmms_iou >= 0.5):.3f} |")
        refused = float(np.mean(~table.has_interval))
        miou = float(np.mean(point_iou(table)))
        res = coverage_validity(table, name=model, families=("norm", "sec"),
                                protocol=Protocol(alphas=ALPHAS))
        for cell in res.cells:
            cover_rows.append(
                f"| {model} | {refused:.1%} | {miou:.3f} | {cell.family} | {cell.target:.2f} | "
                f"{cell.coverage_mean:.3f} ± {cell.coverage_sd:.3f} | "
                f"[{cell.band_lo:.3f}, {cell.band_hi:.3f}]{'' if cell.within_band else ' *'} | "
                f"{cell.nonrefused_coverage_mean:.3f} | {cell.length_mean:.2f} s "
                f"({cell.length_frac_mean:.0%}) |")
    print("### Classes per model\n")
    print("| model | answers | " + " | ".join(STATUSES) + " |")
    print("|---|---:|" + "---:|" * len(STATUSES))
    print("\n".join(rates))
    print("\n### Agreement with the authors' parsed times\n")
    print("| model | authors parsed | we parsed | both | identical | within 1 s | "
          "only we |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(agree_rows))
    print("\n### The harness reading of the same answers\n")
    print("| model | we read | lmms-eval span found | same top-1 | mIoU (ours) | "
          "mIoU (lmms-eval) | R1@0.5 (ours) | R1@0.5 (lmms-eval) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(harness_rows))
    print("\n### Disagreement classes\n")
    print("| class | " + " | ".join(MODELS) + " | example (answer -> authors / ours) |")
    print("|---|" + "---:|" * len(MODELS) + "---|")
    for k, per in sorted(classes.items(), key=lambda kv: -sum(kv[1].values())):
        text, theirs, ours = examples[k]
        ex = f"{text!r} -> {theirs} / {ours}".replace("|", "\\|")
        print(f"| {k} | " + " | ".join(str(per.get(m, 0)) for m in MODELS) + f" | {ex} |")
    print("\n### COVER on the parsed predictions (refusals = whole video)\n")
    print("| model | refused | point mIoU | family | target | coverage (mean ± sd) | "
          "95% band | non-refused coverage | region length |")
    print("|---|---:|---:|---|---:|---:|---|---:|---:|")
    print("\n".join(cover_rows))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("../shared/data"))
