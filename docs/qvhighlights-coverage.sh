#!/usr/bin/env bash
# Regenerates the tables of docs/qvhighlights-coverage.md: study 1 on every
# QVHighlights val prediction file. Usage: docs/qvhighlights-coverage.sh [DATA_DIR] [OUT]
set -euo pipefail
data=${1:-../shared/data}
out=${2:-validity-qvhighlights}
q="$data/qvhighlights"
cover validity --gt "$q/annotations/highlight_val_release.jsonl" --out "$out" \
  --preds "$q/moment_detr/sample_val_preds.jsonl" --name "Moment-DETR (sample)" \
  --preds "$q/moment_detr/inference_hl_val_test_code_preds.jsonl" --name "Moment-DETR (CLIP-only)" \
  --preds "$q/qd_detr/video_checkpoint_best_hl_val_preds.jsonl" --name "QD-DETR (video)" \
  --preds "$q/qd_detr/audio_checkpoint_best_hl_val_preds.jsonl" --name "QD-DETR (video+audio)" \
  --preds "$q/qd_detr/onlyclip_best_hl_val_preds.jsonl" --name "QD-DETR (CLIP-only)" \
  --preds "$q/eatr/best_hl_val_preds.jsonl" --name "EaTR" \
  --preds "$q/univtg/univtg_val_preds.jsonl" --name "UniVTG" \
  --preds "$q/vtg_gpt/infer_val.jsonl" --name "VTG-GPT (zero-shot)"
