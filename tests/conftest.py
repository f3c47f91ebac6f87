"""Shared fixtures: where the real data lives (tests that need it skip without it)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

settings.register_profile("default", max_examples=200, deadline=None)
settings.register_profile("ci", max_examples=200, deadline=None, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path | None:
    env = os.environ.get("COVER_DATA_DIR")
    for d in ([Path(env)] if env else []) + [REPO.parent / "shared" / "data"]:
        if (d / "qvhighlights" / "annotations" / "highlight_val_release.jsonl").is_file():
            return d
    return None


@pytest.fixture(scope="session")
def data_dir() -> Path:
    d = shared_data_dir()
    if d is None:
        pytest.skip("real data not found (../shared/data or $COVER_DATA_DIR)")
    return d


@pytest.fixture(scope="session")
def qvh_gt(data_dir: Path) -> Path:
    return data_dir / "qvhighlights" / "annotations" / "highlight_val_release.jsonl"


@pytest.fixture(scope="session")
def qdetr_preds(data_dir: Path) -> Path:
    return data_dir / "qvhighlights" / "qd_detr" / "video_checkpoint_best_hl_val_preds.jsonl"


@pytest.fixture(scope="session")
def qdetr_columns(qdetr_preds: Path, qvh_gt: Path) -> dict[str, list[Any]]:
    """QD-DETR's real predictions as columns (qid, vid, the video duration joined from the
    ground truth, windows, saliency): what the Parquet, Ray and Dask tests write."""
    recs = [json.loads(line) for line in qdetr_preds.read_text().splitlines()]
    dur = {json.loads(x)["qid"]: json.loads(x)["duration"]
           for x in qvh_gt.read_text().splitlines()}
    return {"qid": [r["qid"] for r in recs], "vid": [r["vid"] for r in recs],
            "duration": [float(dur[r["qid"]]) for r in recs],
            "pred_relevant_windows": [r["pred_relevant_windows"] for r in recs],
            "pred_saliency_scores": [r["pred_saliency_scores"] for r in recs]}
