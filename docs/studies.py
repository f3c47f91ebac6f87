"""Generates docs/results.md's measurements: every study of SPEC §6 on every QVHighlights
val grounder, LA-DETR on Charades-STA (the transfer pair) and an ensemble of the three
QD-DETR checkpoints (a grounder that reports its own boundary uncertainty), with the human
re-annotators, then each finding next to the paper's number.

It runs what a user runs (`cover ensemble`, then one `cover study all`, with
`python -m cover`) into a temporary folder (or OUT with --out OUT, keeping report.html)
and reads the JSON it wrote. The paper's numbers are quoted in PAPER below, never
measured here.

Usage: python docs/studies.py [DATA_DIR] [--out OUT]  (prints the blocks; about a
minute of wall time on a loaded 2-core machine)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from docgen import wrap
from studies_findings import findings
from studies_seeds import seeds_table

Q = "qvhighlights/"
GT = Q + "annotations/highlight_val_release.jsonl"
QVH = [("Moment-DETR", "moment_detr/sample_val_preds.jsonl"),
       ("Moment-DETR (CLIP)", "moment_detr/inference_hl_val_test_code_preds.jsonl"),
       ("QD-DETR", "qd_detr/video_checkpoint_best_hl_val_preds.jsonl"),
       ("QD-DETR (audio)", "qd_detr/audio_checkpoint_best_hl_val_preds.jsonl"),
       ("QD-DETR (CLIP)", "qd_detr/onlyclip_best_hl_val_preds.jsonl"),
       ("EaTR", "eatr/best_hl_val_preds.jsonl"), ("UniVTG", "univtg/univtg_val_preds.jsonl"),
       ("VTG-GPT", "vtg_gpt/infer_val.jsonl"), ("LA-DETR", "la_detr/best_hl_val_preds.jsonl")]
#: Unit-level splits behind the split-seed block (``cover study all --split-seeds``).
SPLIT_SEEDS = 100
ENSEMBLE = ["qd_detr/video_checkpoint_best_hl_val_preds.jsonl",
            "qd_detr/audio_checkpoint_best_hl_val_preds.jsonl",
            "qd_detr/onlyclip_best_hl_val_preds.jsonl"]


def run_studies(data: Path, out: Path) -> None:
    """`cover ensemble` of the QD-DETR checkpoints, then `cover study all` on every pair."""
    cover = [sys.executable, "-m", "cover"]
    # Beside the results folder, not in it: `cover study` replaces its --out folder whole
    # and refuses one holding other files.
    out.parent.mkdir(parents=True, exist_ok=True)
    ens = out.parent / (out.name + "-qd_detr_ensemble.jsonl")
    subprocess.run([*cover, "ensemble", "-o", str(ens), *(str(data / Q / f) for f in ENSEMBLE)],
                   check=True, capture_output=True)
    cmd = [*cover, "study", "all", "--out", str(out)]
    for name, rel in QVH:
        cmd += ["--preds", str(data / Q / rel), "--gt", str(data / GT), "--name", name]
    cmd += ["--preds", str(data / "charades_sta/la_detr/hl_test_submission.jsonl"),
            "--gt", str(data / "lighthouse/charades_test_release.jsonl"), "--name", "LA-DETR",
            "--preds", str(ens), "--gt", str(data / GT), "--name", "QD-DETR ensemble",
            "--humans", str(data), "--split-seeds", str(SPLIT_SEEDS)]
    subprocess.run(cmd, check=True, capture_output=True)


def load(out: Path) -> dict[str, Any]:
    """Every study's data by pair (name, dataset), the transfer and the human tables (None
    when the run had no ``--humans``); docs/paper_rows.py reads its run with it too."""
    m = json.loads((out / "manifest.json").read_text())
    pairs = {}
    for p in m["pairs"]:
        pairs[p["name"], p["dataset"]] = p | {
            s: json.loads((out / f).read_text())["data"] for s, f in p["studies"].items()}
    transfer = json.loads((out / m["transfers"][0]["json"]).read_text())["data"]
    humans_json = out / "humans" / "humans.json"  # only with --humans
    humans = json.loads(humans_json.read_text())["data"] if humans_json.is_file() else None
    return {"pairs": pairs, "transfer": transfer, "humans": humans, "protocol": m["protocol"]}


def protocol_text(res: dict[str, Any]) -> str:
    q, c = res["pairs"]["QD-DETR", "QVHighlights"], res["pairs"]["LA-DETR", "Charades-STA"]
    p = res["protocol"]
    return wrap(
        "Protocol: the paper's — source videos split "
        f"{100 * p['cal_frac']:.0f}/{100 * (1 - p['cal_frac']):.0f} into calibration pool / "
        f"test with seed {p['seed']} (QVHighlights: {q['pool_rows']} pool / {q['test_rows']} "
        f"test queries, {q['pool_units']} / {q['test_units']} videos; Charades-STA: "
        f"{c['pool_rows']} / {c['test_rows']} queries), {p['n_resamples']} resamples of half "
        "the pool's videos, alpha grid {" + ", ".join(f"{a:g}" for a in p["alphas"]) + "}.")


def blocks(data: Path, out: Path | None = None) -> dict[str, str]:
    """The protocol sentence and the findings table of docs/results.md."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = out or Path(tmp) / "cover-studies"
        run_studies(data, folder)
        res = load(folder)
    return {"protocol": protocol_text(res), "findings": findings(res),
            "split-seeds": seeds_table(res)}


if __name__ == "__main__":
    import docgen

    args = sys.argv[1:]
    keep = Path(args[args.index("--out") + 1]) if "--out" in args else None
    rest = [a for i, a in enumerate(args) if a != "--out" and (i == 0 or args[i - 1] != "--out")]
    docgen.print_blocks(lambda d: blocks(d, keep), rest)
