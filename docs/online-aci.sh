#!/usr/bin/env bash
# Regenerates the ACI figures and numbers of docs/calibration-rules.md ("Online ACI
# under an injected shift"). Usage: docs/online-aci.sh [DATA_DIR] [OUT]
set -euo pipefail
data=${1:-../shared/data}
out=${2:-online-aci}
q="$data/qvhighlights"
gt="$q/annotations/highlight_val_release.jsonl"
# 1. a drifting stream: QD-DETR's test rows sorted by predicted length (NORM)
cover online --preds "$q/qd_detr/video_checkpoint_best_hl_val_preds.jsonl" --gt "$gt" \
  --name "QD-DETR (video)" --order pred_length --gamma 0.02 --out-dir "$out/pred-length"
# 2. a switched stream: Moment-DETR's SLS stream replaced by QD-DETR's half way
cover online --preds "$q/moment_detr/sample_val_preds.jsonl" --gt "$gt" --score sls \
  --name "Moment-DETR" --switch-preds "$q/qd_detr/video_checkpoint_best_hl_val_preds.jsonl" \
  --switch-name "QD-DETR" --gamma 0.02 --out-dir "$out/switch"
cp "$out/pred-length/online_miss_rate.png" docs/online-aci-pred-length.png
cp "$out/switch/online_miss_rate.png" docs/online-aci-switch.png
