"""Shared fixtures: where the real data lives (tests that need it skip without it)."""

from __future__ import annotations

import os
from pathlib import Path

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
