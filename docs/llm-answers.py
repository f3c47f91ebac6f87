"""Regenerates the tables of docs/llm-answers.md: the four UAG-OOPS video-LLM answer files
parsed by cover.grounders.parse (classes per model), agreement with the authors' own
parsed times, the disagreement classes, and COVER's coverage on the parsed predictions
with refusals as whole-video regions.

Usage: python docs/llm-answers.py [DATA_DIR]  (prints the blocks; seconds)
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from docgen import bullets, wrap

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


def blocks(data: Path) -> dict[str, str]:
    """Every table of docs/llm-answers.md and the sentences quoting their numbers."""
    gt = read_uag_ground_truth(data / UAG / "annotations/uag_oops_dataset_v1_start_time_fixed"
                                             ".json").table
    rates: list[str] = []
    agree_rows: list[str] = []
    classes: dict[str, dict[str, int]] = {}
    examples: dict[str, tuple[str, str, str]] = {}
    cover_rows: list[str] = []
    harness_rows: list[str] = []
    counts: dict[str, dict[str, int]] = {}
    spans_found: dict[str, int] = {}
    r1_authors: dict[str, float] = {}
    span_iou: list[float] = []
    results: dict[str, Any] = {}
    for model, name in MODELS.items():
        ans = read_uag_answers(data / UAG / "hasnat79_uag" / name)
        j, found = index_of(gt.qid, ans.clip)
        assert found.all()
        T = gt.duration[j]
        pc = parse_answers(list(ans.text), T)
        c = counts[model] = pc.counts()
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
        spans_found[model] = int(np.isfinite(ls).sum())
        authors = replace(table, pred_start=ans.authors_start, pred_end=ans.authors_end)
        r1_authors[model] = 100 * float(np.mean(np.nan_to_num(point_iou(authors)) >= 0.5))
        if model == "LLaMA-3 over BLIP-2 captions":
            span_iou += np.nan_to_num(point_iou(harness))[np.isfinite(ls)].tolist()
        ours_iou = np.nan_to_num(point_iou(table))
        lmms_iou = np.nan_to_num(point_iou(harness))
        harness_rows.append(
            f"| {model} | {int(table.has_interval.sum())} | {int(np.isfinite(ls).sum())} | "
            f"{int(agree.sum())} | {ours_iou.mean():.3f} | {lmms_iou.mean():.3f} | "
            f"{np.mean(ours_iou >= 0.5):.3f} | {np.mean(lmms_iou >= 0.5):.3f} |")
        refused = float(np.mean(~table.has_interval))
        miou = float(np.mean(point_iou(table)))
        results[model + ' miou'] = (refused, miou)
        res = results[model] = coverage_validity(
            table, name=model, families=("norm", "sec"), protocol=Protocol(alphas=ALPHAS))
        for cell in res.cells:
            cover_rows.append(
                f"| {model} | {refused:.1%} | {miou:.3f} | {cell.family} | {cell.target:.2f} | "
                f"{cell.coverage_mean:.3f} ± {cell.coverage_sd:.3f} | "
                f"[{cell.band_lo:.3f}, {cell.band_hi:.3f}]{'' if cell.within_band else ' *'} | "
                f"{cell.nonrefused_coverage_mean:.3f} | {cell.length_mean:.2f} s "
                f"({cell.length_frac_mean:.0%}) |")
    out = {
        "classes": _table(["model", "answers", *STATUSES], rates, "|---|---:|"),
        "agreement": _table(["model", "authors parsed", "we parsed", "both", "identical",
                             "within 1 s", "only we"], agree_rows),
        "harness": _table(["model", "we read", "lmms-eval span found", "same top-1",
                           "mIoU (ours)", "mIoU (lmms-eval)", "R1@0.5 (ours)",
                           "R1@0.5 (lmms-eval)"], harness_rows),
        "cover": _table(["model", "refused", "point mIoU", "family", "target",
                         "coverage (mean ± sd)", "95% band", "non-refused coverage",
                         "region length"], cover_rows, "|---|---:|---:|---|---:|---:|---|"),
    }
    order = sorted(classes.items(), key=lambda kv: -sum(kv[1].values()))
    dis = ["| class | " + " | ".join(MODELS) + " | example (answer -> authors / ours) |",
           "|---|" + "---:|" * len(MODELS) + "---|"]
    for k, per in order:
        text, theirs, ours = examples[k]
        ex = f"{text!r} -> {theirs} / {ours}".replace("|", "\\|")
        dis.append(f"| {k} | " + " | ".join(str(per.get(m, 0)) for m in MODELS) + f" | {ex} |")
    out["disagreement"] = "\n".join(dis)
    out["classes-text"] = _classes_text(counts)
    out["disagreement-text"] = "\n".join(
        f"* **{CLASS_TEXT[k][0]}** ({sum(per.values())}{CLASS_TEXT[k][1]}" for k, per in order)
    out["harness-text"] = _harness_text(counts, spans_found, span_iou, r1_authors)
    out["cover-text"] = _cover_text(results)
    return out


def _table(head: list[str], rows: list[str], rule: str | None = None) -> str:
    rule = rule or "|---|" + "---:|" * (len(head) - 1)
    rule += "---:|" * (len(head) + 1 - rule.count("|"))
    return "\n".join(["| " + " | ".join(head) + " |", rule, *rows])


#: The prose of each disagreement class: bold title, then the rest after the count.
CLASS_TEXT = {
    "starts at/after the clip's end: we refuse, authors keep it": (
        "Starts at/after the clip's end", " rows): the authors keep such intervals (they\n"
        "  score IoU 0); we classify them `out_of_range` and refuse. They are not readings of\n"
        "  the video, so certifying the whole clip is the honest output."),
    "start/end given as ranges: midpoint; authors floor it to whole seconds": (
        "Ranges as start and end", "): \"start ... approximately 0:00 - 0:03, end ...\n"
        "  0:04 - 0:06\". Both take midpoints; the authors then drop the fraction\n"
        "  (1.5 s -> \"00:01\"), we keep it."),
    "start after end: we swap, authors keep it reversed": (
        "Reversed bounds", "): \"Start time: 4.0s, End time: 3.0s\". We swap\n"
        "  (and say so in the reason); the authors keep a reversed interval (IoU 0)."),
    "fractions of a second: authors drop them (0:00:06.5 -> 6)": (
        "Fractions of a second", "): \"0:00:06.5\"; the authors' regex reads whole\n"
        "  seconds only."),
    "start only: we refuse, authors fill an end": (
        "Start only", "): the authors filled an end by hand; we refuse (or `[start, T]`\n"
        "  with `--start-only to_end`)."),
    "other reading of the text (see examples)": (
        "Other readings", "): answers that state two different intervals. Compound\n"
        "  queries answered per sentence (\"... 'Dancing on the coffee table' is at 0:00:00 "
        "to\n  0:00:05. The query 'Falls off the coffee table' starts at 0:00:06 and ends at\n"
        "  0:00:10\") — the authors take the envelope, we the first stated pair; answers that\n"
        "  state the interval twice, differently (approximate ranges in prose, then exact\n"
        "  \"Start time: / End time:\" fields or a JSON block) — we take explicit fields "
        "first,\n  the authors sometimes the other statement; and authors' misreadings:\n"
        "  \"0.3 seconds and ... 0.5 seconds\" read as 0:00-0:05, and the midpoint of\n"
        "  \"0:45-1:00\" read as 22 s."),
}
VC2, VL2, FT, L3 = MODELS


def _classes_text(c: dict[str, dict[str, int]]) -> str:
    oor = c[FT]["out_of_range"]
    n_ft = sum(c[FT].values())
    return wrap(
        "No answer file holds the prompt, so no echo can be detected here (echo detection "
        "needs the prompt's example: `--prompt-example`). Refusals are real: Video-LLaMA2's "
        "\"I apologize, but I cannot provide you with the start and end time of the query as "
        f"it is not appropriate or ethical ...\" ({c[VL2]['refusal']}), LLaMA-3's \"I cannot "
        "provide a response that contains explicit content\" and the like "
        f"({c[L3]['refusal']}, one of them a JSON block of nulls), VideoChat2's \"The answer "
        f"is not related to the video\" / \"not provided in the video\" ({c[VC2]['refusal']}). "
        f"VideoChat2's {c[VC2]['failure']} failures are templates with no time at all (\"The "
        "start and end timestamps for the query \"...\" are in JSON format.\") and an "
        "answer that gives only an end time. Out-of-range answers are the largest class after "
        f"`ok` for two models: {c[VL2]['out_of_range']} of Video-LLaMA2's intervals start "
        f"after the clip ends, and so do {oor} ({100 * oor / n_ft:.0f}%) of the fine-tuned "
        "model's.")


def _harness_text(c: dict[str, dict[str, int]], found: dict[str, int], span_iou: list[float],
                  r1: dict[str, float]) -> str:
    n = max(sum(v.values()) for v in c.values())
    return wrap(
        "lmms-eval's temporal-grounding tasks read an answer as its first `a - b` / `a to b` "
        "number pair in seconds (`cover.io.lmms_eval.first_span` reproduces that reading) and "
        f"score anything else as a miss. On these answers it finds a span in at most "
        f"{max(found.values())} of {n}; all {found[VC2] + found[VL2]} spans it finds in the "
        "two zero-shot files misread clock notation (\"0:00 - 0:03\" gives \"00 - 0\", the "
        "interval [0, 0]), and the LLaMA-3 span" + ("s" if len(span_iou) > 1 else "")
        + " (\"around 0-2 seconds\" in a reasoning line) ha" + ("ve" if len(span_iou) > 1
                                                                 else "s")
        + f" IoU {', '.join(f'{v:.2f}' for v in span_iou)}: mIoU and R1@0.5 are 0 for all "
        "four models. The authors' own parse, scored the same way (refusals 0), gives R1@0.5 "
        + " / ".join(f"{r1[m]:.2f}" for m in MODELS) + " (the numbers of `PROVENANCE.md`).")


def _cover_text(results: dict[str, Any]) -> str:
    cells = [(m, c) for m in MODELS for c in results[m].cells]
    out = [(m, c) for m, c in cells if not c.within_band]
    refused = {m: results[m + " miou"][0] for m in MODELS}
    mious = [results[m + " miou"][1] for m in MODELS]
    worst = min((c for m, c in cells if abs(c.target - 0.7) < 1e-9),
                key=lambda c: c.nonrefused_coverage_mean)
    frac90 = [c.length_frac_mean for _, c in cells if abs(c.target - 0.9) < 1e-9]
    sds = [c.coverage_sd for _, c in cells]
    first = (f"Marginal coverage tracks the target for all four models and both families: "
             f"{len(cells) - len(out)} of {len(cells)} cells are inside the 95% band"
             + ("." if not out else "; outside: " + "; ".join(
                 f"{m.split(' (')[0]}, {c.family.upper()}, {c.target:.2f}: "
                 f"{c.coverage_mean:.3f} vs band "
                 + (f"from {c.band_lo:.3f}" if c.coverage_mean < c.band_lo
                    else f"to {c.band_hi:.3f}") for m, c in out)
                 + f", against {0.05 * len(cells):.1f} expected misses in {len(cells)} at 95%, "
                 "on a split with few pool units, where resamples of half the compilations "
                 f"move coverage by up to ±{max(sds):.3f}."))
    hi = sorted(refused, key=refused.get)[-2:]
    return bullets([
        first,
        "Refusals always cover, so the non-refused rows carry less than the target when "
        f"the refusal rate is high ({hi[0].split(' (')[0]} {100 * refused[hi[0]]:.1f}%, "
        f"{hi[1].split(' (')[0]} {100 * refused[hi[1]]:.1f}%: down to "
        f"{worst.nonrefused_coverage_mean:.2f} non-refused at target 0.70). That is the price "
        "of not dropping the rows a harness would silently discard or count as misses "
        "(`cover evaluate --refusal-policy miss|drop` shows those readings).",
        f"These grounders are weak on UAG-OOPS (point mIoU {min(mious):.2f}–"
        f"{max(mious):.2f}; the truth covers the clip from the onset to its end): a 90% "
        f"region is {100 * min(frac90):.0f}–{100 * max(frac90):.0f}% of the clip. COVER "
        "says so instead of pretending otherwise.",
    ])


if __name__ == "__main__":
    import docgen

    docgen.print_blocks(blocks)
