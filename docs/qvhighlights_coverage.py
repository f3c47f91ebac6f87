"""Generates docs/qvhighlights-coverage.md: study 1 (`cover validity`) on every QVHighlights
val prediction file, its per-grounder sections and every finding that quotes a number.

It runs the command a user runs (`python -m cover validity ...` over the eight files,
into a temporary folder, or into OUT with --out OUT to keep the JSON, figures and
report), then reads what it wrote. The VTG-GPT split diagnosis (KS of the pool against
the test split, and the same cell over split seeds 0-19) is computed here from the
library.

Usage: python docs/qvhighlights_coverage.py [DATA_DIR] [--out OUT]  (prints the blocks;
about ten seconds)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from docgen import bullets

from cover.data.splits import split_by_unit
from cover.io import load_labelled
from cover.scores import compute_scores
from cover.studies.coverage_validity import coverage_validity
from cover.studies.protocol import Protocol

Q = "qvhighlights/"
GT = Q + "annotations/highlight_val_release.jsonl"
FILES = {
    "Moment-DETR (sample)": "moment_detr/sample_val_preds.jsonl",
    "Moment-DETR (CLIP-only)": "moment_detr/inference_hl_val_test_code_preds.jsonl",
    "QD-DETR (video)": "qd_detr/video_checkpoint_best_hl_val_preds.jsonl",
    "QD-DETR (video+audio)": "qd_detr/audio_checkpoint_best_hl_val_preds.jsonl",
    "QD-DETR (CLIP-only)": "qd_detr/onlyclip_best_hl_val_preds.jsonl",
    "EaTR": "eatr/best_hl_val_preds.jsonl",
    "UniVTG": "univtg/univtg_val_preds.jsonl",
    "VTG-GPT (zero-shot)": "vtg_gpt/infer_val.jsonl",
}
#: The paper's numbers (quoted, not measured here): QD-DETR NORM coverage at 0.90 and the
#: SLS / NORM / SEC lengths at 0.90 on QVHighlights.
PAPER_QD_COVERAGE = "0.879 ± 0.016"
PAPER_QD_LENGTHS = "111.6 / 129.1 / 128.6 s"
SEEDS = range(20)


def run_validity(data: Path, out: Path) -> tuple[dict[str, dict[str, Any]], dict[str, str],
                                                  str]:
    """`cover validity` over the eight files: each grounder's JSON and Markdown, and the
    command's stderr (the clipped-row notes)."""
    cmd = [sys.executable, "-m", "cover", "validity", "--gt", str(data / GT), "--out", str(out)]
    for name, rel in FILES.items():
        cmd += ["--preds", str(data / Q / rel), "--name", name]
    done = subprocess.run(cmd, check=True, capture_output=True, text=True)
    js, mds = {}, {}
    for folder in sorted(p for p in out.iterdir() if (p / "validity.json").is_file()):
        d = json.loads((folder / "validity.json").read_text())
        js[d["name"]] = d
        mds[d["name"]] = (folder / "validity.md").read_text()
    return {n: js[n] for n in FILES}, {n: mds[n] for n in FILES}, done.stderr


def section(name: str, md: str) -> str:
    """A grounder's section: the summary line and table `cover validity` wrote."""
    summary = next(ln for ln in md.splitlines() if ln.startswith(f"{name}: "))
    table = re.search(r"^\| 1-alpha.*?(?=\n\n|\Z)", md, flags=re.S | re.M)
    assert table
    return f"## {name}\n\n{summary}\n\n{table.group(0)}"


def cells(js: dict[str, Any], fam: str | None = None) -> list[dict[str, Any]]:
    return [c for c in js["cells"] if fam is None or c["family"] == fam]


def cell(js: dict[str, Any], fam: str, target: float) -> dict[str, Any]:
    return next(c for c in js["cells"] if c["family"] == fam and abs(c["target"] - target) < 1e-9)


def vtg_diagnosis(data: Path, target: float) -> dict[str, Any]:
    """Why VTG-GPT's NORM cell at ``target`` is high: pool vs test scores on the seed-42
    split, and the same cell's excess coverage over split seeds 0-19 (and 42)."""
    from scipy import stats

    table, _ = load_labelled(data / Q / FILES["VTG-GPT (zero-shot)"], data / GT)
    split = split_by_unit(table.units, cal_frac=0.4, seed=42)
    pool = compute_scores(table.take(split.calibration), "norm").values
    test = compute_scores(table.take(split.test), "norm").values
    ks = stats.ks_2samp(pool, test)
    alpha = round(1 - target, 10)
    excess = {}
    for seed in [*SEEDS, 42]:
        c = coverage_validity(table, name="VTG-GPT", families=("norm",),
                              protocol=Protocol(alphas=(alpha,), seed=seed)).cell("norm", alpha)
        excess[seed] = c.coverage_mean - c.expected
    th = float(np.quantile(pool, target, method="inverted_cdf"))
    return {"ks": float(ks.statistic), "p": float(ks.pvalue), "pool_cdf": float(np.mean(
        pool <= th)), "test_cdf": float(np.mean(test <= th)),
        "mean": float(np.mean([excess[s] for s in SEEDS])),
        "sd": float(np.std([excess[s] for s in SEEDS], ddof=1)),
        "easiest": sorted(excess, key=excess.get)[-2:][::-1]}


def per_video(js: dict[str, Any]) -> float:
    """Queries per source video of one grounder's split."""
    return js["rows"]["total"] / (js["units"]["pool"] + js["units"]["test"])


def span(xs: list[float], fmt: str = ".1f") -> str:
    lo, hi = format(min(xs), fmt), format(max(xs), fmt)
    return lo if lo == hi else f"{lo}-{hi}"


def findings(js: dict[str, dict[str, Any]], stderr: str, diag: dict[str, Any] | None,
             diag_target: float | None) -> str:
    every = [(n, c) for n in FILES for c in cells(js[n])]
    out = [(n, c) for n, c in every if not c["within_band"]]
    above = all(c["coverage_mean"] > c["band_hi"] for _, c in out)
    who = sorted({n for n, _ in out})
    items = [f"**Coverage tracks the target for every grounder, family and level.** "
             f"{len(every) - len(out)} of the {len(every)} cells lie inside their reference "
             "band."]
    if out:
        ex = max(out, key=lambda nc: nc[1]["coverage_mean"] - nc[1]["band_hi"])[1]
        text = (f"**The {len(out)} cells outside are "
                + ("all " + who[0] if len(who) == 1 else ", ".join(who))
                + (", and all on the high side**" if above else "**") + " ("
                + ", ".join(f"{c['family'].upper()} at 1-alpha = {c['target']:.2f}"
                            for _, c in out)
                + f"; e.g. {ex['coverage_mean']:.3f} against a band of "
                f"[{ex['band_lo']:.3f}, {ex['band_hi']:.3f}]).")
        if diag is not None:
            text += (
                f" For VTG-GPT they are a property of the frozen seed-42 split, not of the "
                "method: its calibration pool and test split differ more than usual "
                f"(row-level KS of the NORM score {diag['ks']:.3f}, p = {diag['p']:.2f}; at "
                f"the pool's {diag_target:.2f} quantile the pool's empirical CDF is "
                f"{diag['pool_cdf']:.3f} and the test split's {diag['test_cdf']:.3f}). "
                f"Re-running the NORM cell at {diag_target:.2f} with split seeds "
                f"{SEEDS[0]}-{SEEDS[-1]} gives a mean excess coverage of {diag['mean']:+.3f} "
                f"(sd {diag['sd']:.3f} across seeds); of these and seed 42, seeds "
                f"{diag['easiest'][0]} and {diag['easiest'][1]} give the two easiest test "
                "splits. The band treats the calibration rows as i.i.d.; QVHighlights has "
                f"≈{per_video(js['VTG-GPT (zero-shot)']):.1f} queries per source "
                "video, which makes split-to-split variation somewhat larger than the Beta law.")
        items.append(text)
    qd = [n for n in FILES if n.startswith("QD-DETR")]
    qd_cells = [cell(js[n], "norm", 0.9) for n in qd]
    items.append(
        f"**The paper's QD-DETR undercoverage** ({PAPER_QD_COVERAGE} at 0.90 in the paper) "
        + ("**is not seen here**" if all(c["within_band"] and c["coverage_mean"] >= 0.9 - 0.01
                                          for c in qd_cells) else "is partly seen here")
        + ". The paper ran a different QD-DETR (trained via Lighthouse) with its own split; "
        "the three QD-DETR checkpoints here give "
        + ", ".join(f"{c['coverage_mean']:.3f}" for c in qd_cells)
        + " (NORM) at the 0.90 target, "
        + ("inside their bands." if all(c["within_band"] for c in qd_cells)
           else "not all inside their bands."))
    trained = [n for n in FILES if not n.startswith("VTG-GPT")]
    sls_short = [n for n in trained if all(
        cell(js[n], "sls", t)["length_mean"] < min(cell(js[n], f, t)["length_mean"]
                                                   for f in ("norm", "sec")) for t in (0.9, 0.8))]
    comps = [cell(js[n], "sls", t)["components_mean"] for n in trained if n != "UniVTG"
             for t in (0.9, 0.8)]
    uni = [cell(js["UniVTG"], "sls", t)["components_mean"] for t in (0.9, 0.8)]
    v = {f: cell(js["QD-DETR (video)"], f, 0.9)["length_mean"] for f in ("sls", "norm", "sec")}
    items.append(
        f"**SLS is the shortest family at 0.80 and 0.90 for {len(sls_short)} of the "
        f"{len(trained)} trained localizers** (e.g. QD-DETR video at 0.90: SLS "
        f"{v['sls']:.1f} s vs NORM {v['norm']:.1f} s vs SEC {v['sec']:.1f} s, against the "
        f"paper's {PAPER_QD_LENGTHS}), with {span(comps)} connected "
        "components on average (UniVTG's saliency is much more fragmented: "
        f"{span(uni)} components).")
    g = cell(js["VTG-GPT (zero-shot)"], "sls", 0.9)
    items.append(
        f"**VTG-GPT's SLS regions are nearly the whole video** ({g['length_mean']:.0f} s of "
        f"{g['length_mean'] / g['length_frac_mean']:.0f} at 0.90): its saliency is min-max "
        "normalised per video and carries little ranking information, so the super-level set "
        "has to keep almost everything.")
    refused = sum(v for n in FILES for fam in js[n]["counts"].values()
                  for k, v in fam.items() if k.endswith("_refused"))
    floored = sum(v for n in FILES for fam in js[n]["counts"].values()
                  for k, v in fam.items() if k.endswith("min_scale_floored"))
    clipped = {Path(f).parts[-2] + "/" + Path(f).name: int(k) for k, f in
               re.findall(r"cover: (\d+) row\(s\) clipped in (\S+):", stderr)}
    name_of = {rel: n for n, rel in FILES.items()}
    items.append(
        ("No row is refused" if not refused else f"{refused} rows are refused")
        + (", no NORM scale is floored" if not floored else f", {floored} scales are floored")
        + (", and predictions ending past the video are clipped to `[0, T]` (rows per file: "
           + ", ".join(f"{name_of.get(f, f)} {k}" for f, k in clipped.items()) + ")."
           if clipped else ", and no prediction is clipped."))
    return bullets(items)


def blocks(data: Path, out: Path | None = None) -> dict[str, str]:
    """The findings and the per-grounder sections of docs/qvhighlights-coverage.md."""
    with tempfile.TemporaryDirectory() as tmp:
        js, mds, stderr = run_validity(data, out or Path(tmp) / "validity")
    vtg_out = [c for c in cells(js["VTG-GPT (zero-shot)"], "norm") if not c["within_band"]]
    target = vtg_out[0]["target"] if vtg_out else None
    diag = vtg_diagnosis(data, target) if target is not None else None
    return {"findings": findings(js, stderr, diag, target),
            "grounders": "\n\n\n".join(section(n, mds[n]) for n in FILES)}


if __name__ == "__main__":
    import docgen

    args = sys.argv[1:]
    keep = Path(args[args.index("--out") + 1]) if "--out" in args else None
    rest = [a for i, a in enumerate(args) if a != "--out" and (i == 0 or args[i - 1] != "--out")]
    docgen.print_blocks(lambda d: blocks(d, keep), rest)
