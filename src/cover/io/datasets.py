"""Where the real data lives, and the known QVHighlights validation prediction files.

COVER never ships data. It looks for a folder laid out like the project's shared
data (``qvhighlights/annotations/...``): ``--data-dir``, then ``$COVER_DATA_DIR``,
then ``./shared/data`` and ``../shared/data`` from the working directory and from
the source checkout.
"""

from __future__ import annotations

import os
from pathlib import Path

from cover.errors import InputError

QVH_VAL_GT = "qvhighlights/annotations/highlight_val_release.jsonl"

#: Real QVHighlights val predictions of 5 grounders (8 checkpoints): name -> path.
QVH_VAL_PREDICTIONS: dict[str, str] = {
    "Moment-DETR (sample)": "qvhighlights/moment_detr/sample_val_preds.jsonl",
    "Moment-DETR (CLIP-only)": "qvhighlights/moment_detr/inference_hl_val_test_code_preds.jsonl",
    "QD-DETR (video)": "qvhighlights/qd_detr/video_checkpoint_best_hl_val_preds.jsonl",
    "QD-DETR (video+audio)": "qvhighlights/qd_detr/audio_checkpoint_best_hl_val_preds.jsonl",
    "QD-DETR (CLIP-only)": "qvhighlights/qd_detr/onlyclip_best_hl_val_preds.jsonl",
    "EaTR": "qvhighlights/eatr/best_hl_val_preds.jsonl",
    "UniVTG": "qvhighlights/univtg/univtg_val_preds.jsonl",
    "VTG-GPT (zero-shot)": "qvhighlights/vtg_gpt/infer_val.jsonl",
}
DEMO_GROUNDER = "QD-DETR (video)"


def candidate_dirs(explicit: str | Path | None = None) -> list[Path]:
    out: list[Path] = []
    if explicit is not None:
        return [Path(explicit)]
    env = os.environ.get("COVER_DATA_DIR")
    if env:
        out.append(Path(env))
    here = Path.cwd()
    src_root = Path(__file__).resolve().parents[3]
    for base in (here, here.parent, src_root, src_root.parent):
        out.append(base / "shared" / "data")
    return list(dict.fromkeys(p.resolve() for p in out))


def find_data_dir(explicit: str | Path | None = None, need: tuple[str, ...] = (QVH_VAL_GT,)
                  ) -> Path:
    """The first candidate folder that holds every file in ``need``; else an error
    that lists where it looked and what to do."""
    tried = candidate_dirs(explicit)
    for d in tried:
        if all((d / rel).is_file() for rel in need):
            return d
    looked = "\n".join(f"  {d}" for d in tried)
    files = "\n".join(f"  <DIR>/{rel}" for rel in need)
    raise InputError(
        "could not find the real QVHighlights data. Looked in:\n"
        f"{looked}\nPass --data-dir DIR (or set COVER_DATA_DIR) to a folder holding:\n"
        f"{files}\nThe ground truth is QVHighlights' highlight_val_release.jsonl "
        "(jayleicn/moment_detr, data/); predictions are any grounder's Moment-DETR-style "
        "val output, e.g. QD-DETR's results/video_checkpoint/best_hl_val_preds.jsonl "
        "(wjun0830/QD-DETR)."
    )
