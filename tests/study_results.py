"""One `cover study all` run on real data, shared by the job and report tests (run once per
test session): QD-DETR and LA-DETR on QVHighlights val, LA-DETR on Charades-STA."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path
from typing import Any

from cover.jobs.study import run_studies
from cover.jobs.study_inputs import command_line, input_pairs
from cover.studies.protocol import Protocol


@functools.lru_cache(maxsize=1)
def study_run(data_dir: Path) -> tuple[Path, dict[str, Any]]:
    q = data_dir / "qvhighlights"
    gt = q / "annotations" / "highlight_val_release.jsonl"
    preds = [q / "qd_detr" / "video_checkpoint_best_hl_val_preds.jsonl",
             q / "la_detr" / "best_hl_val_preds.jsonl",
             data_dir / "charades_sta" / "la_detr" / "hl_test_submission.jsonl"]
    gts = [gt, gt, data_dir / "lighthouse" / "charades_test_release.jsonl"]
    out = Path(tempfile.mkdtemp(prefix="cover-study-")) / "results"
    inputs = input_pairs(preds, gts, None, None)
    protocol = Protocol(n_resamples=20)
    manifest = run_studies(studies=["all"], inputs=inputs, out=out, protocol=protocol,
                           command=command_line("all", inputs, out, protocol,
                                                humans=data_dir),
                           humans_dir=data_dir)
    return out, manifest
