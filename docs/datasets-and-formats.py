"""Regenerates the results table of docs/datasets-and-formats.md: coverage vs target for
LA-DETR on Charades-STA (Lighthouse ground truth and the original text + charades.json),
the TimeChat example files, and a Parquet copy of a QVHighlights prediction file, each
read through format detection exactly as ``cover validity`` reads it.

Usage: python docs/datasets-and-formats.py [DATA_DIR]  (prints Markdown; about a minute)
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from cover.io import formats
from cover.io.labelled import load_labelled
from cover.studies.coverage_validity import ValidityResult, coverage_validity
from cover.studies.protocol import Protocol

ALPHAS = (0.1, 0.3)
CS = "charades_sta/"
QVH = "qvhighlights/"


def parquet_copy(src: Path, out: Path) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
    pq.write_table(pa.table({"query_id": [r["qid"] for r in rows],
                             "video": [r["vid"] for r in rows],
                             "windows": [r["pred_relevant_windows"] for r in rows],
                             "saliency": [r["pred_saliency_scores"] for r in rows]}), out)
    return out


def runs(data: Path, tmp: Path) -> list[tuple[str, Path, Path, tuple[str, ...], dict[str, Any]]]:
    charades_json = data / CS / "annotations/charades.json"
    return [
        ("LA-DETR, Charades-STA test", data / CS / "la_detr/hl_test_submission.jsonl",
         data / "lighthouse/charades_test_release.jsonl", ("norm", "sec"), {}),
        ("LA-DETR, Charades-STA test", data / CS / "la_detr/hl_test_submission.jsonl",
         data / CS / "annotations/charades_sta_test.txt", ("norm", "sec"),
         {"gt_durations": charades_json}),
        ("TimeChat example (500 queries)",
         data / CS / "timechat_repo_example/example_pred_file.json",
         data / CS / "annotations/charades_sta_test.txt", ("norm", "sec"),
         {"on_error": "reject"}),
        ("TimeChat VHD example (saliency only)",
         data / QVH / "timechat_repo_example_vhd/example_pred_file.json",
         data / QVH / "annotations/highlight_val_release.jsonl", ("sls",), {"on_error": "reject"}),
        ("QD-DETR (video), QVHighlights val",
         parquet_copy(data / QVH / "qd_detr/video_checkpoint_best_hl_val_preds.jsonl",
                      tmp / "qd_detr_val.parquet"),
         data / QVH / "annotations/highlight_val_release.jsonl", ("norm", "sec", "sls"),
         {"columns": "qid=query_id,vid=video,windows=windows,saliency=saliency"}),
    ]


def fmt_name(path: Path, role: formats.Role, opts: dict[str, Any]) -> str:
    if role == "predictions" and "columns" in opts:
        return "columns (Parquet)"
    return formats.detect(path, role)[0].name


def pct(r: ValidityResult, key: str) -> str:
    v = r.field_metrics.get("full", {}).get(key) if r.field_metrics else None
    return "" if v is None else f"{v:.2f}"


def main(data: Path) -> None:
    protocol = Protocol(alphas=ALPHAS)
    print("| grounder | --preds format | --gt format | rows | R1@0.5 | mIoU | score | "
          + " | ".join(f"cov. @{1 - a:g} [band] | len. (s)" for a in ALPHAS) + " |")
    print("|" + "---|" * (7 + 2 * len(ALPHAS)))
    with tempfile.TemporaryDirectory() as tmpdir:
        for name, preds, gt, fams, opts in runs(data, Path(tmpdir)):
            table, _ = load_labelled(preds, gt, **opts)
            res = coverage_validity(table, name=name, families=fams, protocol=protocol)
            head = (f"| {name} | {fmt_name(preds, 'predictions', opts)} | "
                    f"{fmt_name(gt, 'ground_truth', opts)} | {len(table)} | "
                    f"{pct(res, 'R1@0.5')} | {pct(res, 'mIoU')}")
            for f in fams:
                cells = [res.cell(f, a) for a in ALPHAS]
                print(head + f" | {f.upper()} | " + " | ".join(
                    f"{c.coverage_mean:.3f}{'' if c.within_band else ' *'} "
                    f"[{c.band_lo:.3f}, {c.band_hi:.3f}] | {c.length_mean:.1f}" for c in cells)
                    + " |")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2]
         / "shared" / "data")
