"""Generates docs/results.md's "paper's rows" blocks: every study of SPEC §6 on grounders
the paper's own tables have counterparts for, each next to the paper's number.

* DisTime (InternVL2.5-8B, a trained video-LLM) on Charades-STA test, ActivityNet Captions
  val_2 and QVHighlights val: the counterpart of the paper's video-LLM rows (Qwen2.5-VL-7B,
  InternVL3.5-8B);
* the same DisTime on Charades-STA and ActivityNet: the paper's transfer pair, both
  directions, one grounder on both sides;
* the Shuffling-Videos grounder on ActivityNet-CD test_ood: a trained ActivityNet grounder
  (the counterpart of QD-DETR's ActivityNet row);
* TGN on Charades-STA, SLS from its scored proposals;
* the TimeChat-repo example (a video-LLM with refusals) on Charades-STA, for the
  onset/offset asymmetry;
* ensembles of the best and last-epoch checkpoints of QD-DETR (×3) and of EaTR on
  QVHighlights: grounders that report their own boundary sd (the paper's SRAM row).

ActivityNet follows the paper's protocol: videos of at most 150 s (``--max-duration 150``,
which removes no Charades-STA or QVHighlights video). It runs what a user runs
(`cover ensemble`, then one `cover study all --no-report`) into a temporary folder (or OUT
with --out OUT, kept; a finished results folder already there is read, not rerun) and
reads the JSON it wrote. The paper's numbers are quoted constants in
docs/paper_rows_tables.py, never measured here.

Usage: python docs/paper_rows.py [DATA_DIR] [--out OUT]  (prints the blocks). Most of the
run time is the conditional study's per-row LP on the two ActivityNet pairs (several
minutes on a loaded 2-core machine).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from docgen import wrap
from paper_rows_tables import (
    activitynet_table,
    asymmetry_table,
    tgn_text,
    transfer_table,
    uncertainty_table,
    video_llm_table,
)
from studies import load

Q = "qvhighlights/"
QGT = Q + "annotations/highlight_val_release.jsonl"
CGT = "charades_sta/annotations/charades_sta_test.txt"
AGT = "activitynet_captions/annotations/val_2.json"
#: The paper's ActivityNet protocol (videos of at most this many seconds).
MAX_DURATION = 150
#: Calibration resamples (the paper's 50).
RESAMPLES = 50
#: (name, dataset, prediction file, ground truth); None = an ensemble built below.
PAIRS = [
    ("DisTime-8B", "Charades-STA",
     "charades_sta/distime/DisTime-InternVL2_5-8B_charades_test_results.json", CGT),
    ("DisTime-8B", "ActivityNet-Captions",
     "activitynet_captions/distime/DisTime-InternVL2_5-8B_anet_val2_results.json", AGT),
    ("DisTime-8B", "QVHighlights", Q + "distime/DisTime-InternVL2_5-8B_qvh_val_results.json",
     QGT),
    ("Shuffling-Videos", "ActivityNet-CD",
     "activitynet_cd/shuffling_videos_mdc/prediction_results_test_ood.json",
     "activitynet_cd/momentdiff_repo/anet_test_ood_momentdiff.jsonl"),
    ("TGN", "Charades-STA", "charades_sta/tgn/TGN_predict_proposals_test_nms_0.55.json", CGT),
    ("TimeChat example", "Charades-STA",
     "charades_sta/timechat_repo_example/example_pred_file.json", CGT),
]
#: Ensembles of a best and a last-epoch checkpoint (name -> member files).
ENSEMBLES = {
    "QD-DETR best+last": [Q + "qd_detr/video_checkpoint_best_hl_val_preds.jsonl",
                          Q + "qd_detr/audio_checkpoint_best_hl_val_preds.jsonl",
                          Q + "qd_detr/onlyclip_best_hl_val_preds.jsonl",
                          Q + "latest_epoch/qd_detr_video_checkpoint__latest_hl_val_preds.jsonl",
                          Q + "latest_epoch/qd_detr_audio_checkpoint__latest_hl_val_preds.jsonl",
                          Q + "latest_epoch/qd_detr_onlyclip__latest_hl_val_preds.jsonl"],
    "EaTR best+last": [Q + "eatr/best_hl_val_preds.jsonl",
                       Q + "latest_epoch/eatr__latest_hl_val_preds.jsonl"],
}


def run_studies(data: Path, out: Path) -> None:
    """`cover ensemble` per checkpoint set, then one `cover study all` over every pair (the
    TimeChat example covers 500 of the 3,720 queries: the rest are set aside with
    ``--on-error reject``)."""
    cover = [sys.executable, "-m", "cover"]
    members = out.parent / (out.name + "-ensembles")
    members.mkdir(parents=True, exist_ok=True)
    cmd = [*cover, "study", "all", "--out", str(out), "--no-report", "--on-error", "reject",
           "--max-duration", str(MAX_DURATION), "--resamples", str(RESAMPLES)]
    for name, ds, preds, gt in PAIRS:
        cmd += ["--preds", str(data / preds), "--gt", str(data / gt), "--name", name,
                "--dataset", ds]
    for i, (name, files) in enumerate(ENSEMBLES.items()):
        ens = members / f"ensemble{i}.jsonl"
        subprocess.run([*cover, "ensemble", "-o", str(ens), *(str(data / f) for f in files)],
                       check=True, capture_output=True)
        cmd += ["--preds", str(ens), "--gt", str(data / QGT), "--name", name,
                "--dataset", "QVHighlights"]
    subprocess.run(cmd, check=True, capture_output=True)


def protocol_text(res: dict[str, Any], data: Path) -> str:
    """Which pairs, how many rows, and the protocol."""
    P, p = res["pairs"], res["protocol"]
    anet = json.loads((data / AGT).read_text())
    n_anet = sum(len(v["sentences"]) for v in anet.values())
    parts = ", ".join(f"{k[0]} on {k[1]} ({v['pool_rows']} pool / {v['test_rows']} test "
                      "queries)" for k, v in P.items())
    return wrap(
        f"Protocol: the paper's — source videos split {100 * p['cal_frac']:.0f}/"
        f"{100 * (1 - p['cal_frac']):.0f} into calibration pool / test with seed {p['seed']}, "
        f"{p['n_resamples']} resamples of half the pool's videos, alpha grid {{"
        + ", ".join(f"{a:g}" for a in p["alphas"]) + f"}}; videos of at most {MAX_DURATION} s "
        f"(ActivityNet Captions val_2 keeps {P['DisTime-8B', 'ActivityNet-Captions']['rows']} "
        f"of its {n_anet} queries; no Charades-STA or QVHighlights video is longer). Pairs: "
        f"{parts}. The TimeChat example answers 500 Charades-STA queries; its empty answers "
        "are refusals (the whole video).")


def blocks(data: Path, out: Path | None = None) -> dict[str, str]:
    """Every paper-rows block of docs/results.md."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = out or Path(tmp) / "cover-paper-rows"
        if out is None or not (folder / "manifest.json").exists():
            run_studies(data, folder)
        res = load(folder)
    return {"rows-protocol": protocol_text(res, data), "rows-video-llm": video_llm_table(res),
            "rows-asymmetry": asymmetry_table(res), "rows-activitynet": activitynet_table(res),
            "rows-transfer": transfer_table(res), "rows-tgn": tgn_text(res),
            "rows-uncertainty": uncertainty_table(res)}


if __name__ == "__main__":
    import docgen

    args = sys.argv[1:]
    keep = Path(args[args.index("--out") + 1]) if "--out" in args else None
    rest = [a for i, a in enumerate(args) if a != "--out" and (i == 0 or args[i - 1] != "--out")]
    docgen.print_blocks(lambda d: blocks(d, keep), rest)
