#!/usr/bin/env bash
# Regenerates docs/results.md's measurements: every study of SPEC §6 on every QVHighlights
# val grounder, LA-DETR on Charades-STA (the transfer pair) and an ensemble of the three
# QD-DETR checkpoints (a grounder that reports its own boundary uncertainty), then the
# HTML report. Usage: docs/studies.sh [DATA_DIR] [OUT]   (needs `cover` on the path)
set -euo pipefail
data=${1:-../shared/data}
out=${2:-cover-studies}
q="$data/qvhighlights"
gt="$q/annotations/highlight_val_release.jsonl"
mkdir -p "$out"
cover ensemble -o "$out/qd_detr_ensemble.jsonl" \
  "$q/qd_detr/video_checkpoint_best_hl_val_preds.jsonl" \
  "$q/qd_detr/audio_checkpoint_best_hl_val_preds.jsonl" \
  "$q/qd_detr/onlyclip_best_hl_val_preds.jsonl"
cover study all --out "$out" \
  --preds "$q/moment_detr/sample_val_preds.jsonl" --gt "$gt" --name "Moment-DETR" \
  --preds "$q/moment_detr/inference_hl_val_test_code_preds.jsonl" --gt "$gt" \
    --name "Moment-DETR (CLIP)" \
  --preds "$q/qd_detr/video_checkpoint_best_hl_val_preds.jsonl" --gt "$gt" --name "QD-DETR" \
  --preds "$q/qd_detr/audio_checkpoint_best_hl_val_preds.jsonl" --gt "$gt" \
    --name "QD-DETR (audio)" \
  --preds "$q/qd_detr/onlyclip_best_hl_val_preds.jsonl" --gt "$gt" --name "QD-DETR (CLIP)" \
  --preds "$q/eatr/best_hl_val_preds.jsonl" --gt "$gt" --name "EaTR" \
  --preds "$q/univtg/univtg_val_preds.jsonl" --gt "$gt" --name "UniVTG" \
  --preds "$q/vtg_gpt/infer_val.jsonl" --gt "$gt" --name "VTG-GPT" \
  --preds "$q/la_detr/best_hl_val_preds.jsonl" --gt "$gt" --name "LA-DETR" \
  --preds "$data/charades_sta/la_detr/hl_test_submission.jsonl" \
    --gt "$data/lighthouse/charades_test_release.jsonl" --name "LA-DETR" \
  --preds "$out/qd_detr_ensemble.jsonl" --gt "$gt" --name "QD-DETR ensemble" \
  --humans "$data"
