"""Where the real data lives, and the known QVHighlights validation prediction files.

COVER never ships data. It looks for a folder laid out like the project's shared
data (``qvhighlights/annotations/...``): ``--data-dir``, then ``$COVER_DATA_DIR``,
then ``./shared/data`` and ``../shared/data`` from the working directory and from
the source checkout (skipped when ``$COVER_NO_SIBLING_DATA`` is set), then the
platform cache that ``cover data fetch`` fills. :func:`data_dir_for` downloads what
is missing (:mod:`cover.io.fetch`) when no folder was given explicitly.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from cover.errors import InputError

QVH_VAL_GT = "qvhighlights/annotations/highlight_val_release.jsonl"
#: QVHighlights' test ground truth (public since the benchmark server closed; with the
#: highlight labels): `cover data fetch qvh-test-gt`.
QVH_TEST_GT = "qvhighlights/annotations/highlight_test_with_gt.jsonl"

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
    if not os.environ.get("COVER_NO_SIBLING_DATA"):
        here = Path.cwd()
        src_root = Path(__file__).resolve().parents[3]
        for base in (here, here.parent, src_root, src_root.parent):
            out.append(base / "shared" / "data")
    try:
        import pooch
    except ImportError:  # without the fetch extra there is no download cache
        pass
    else:
        out.append(Path(pooch.os_cache("cover")))
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
        "(wjun0830/QD-DETR). `cover data fetch all` downloads them (pip install "
        "'cover-grounding[fetch]')."
    )


def data_dir_for(need: tuple[str, ...], explicit: str | Path | None = None) -> Path:
    """A folder holding every file in ``need``: found (:func:`find_data_dir`) or, when no
    folder was given explicitly, downloaded and verified into the data cache."""
    try:
        return find_data_dir(explicit, need=need)
    except InputError as missing:
        if explicit is not None:
            raise
        from cover.io.fetch import FetchError, by_path, cache_dir, fetch

        try:
            entries = by_path(need)
            folder = cache_dir()
        except FetchError as exc:
            raise InputError(f"{missing}\n{exc}") from None
        print(f"cover: fetching {len(entries)} public file(s) into {folder}", file=sys.stderr,
              flush=True)
        return fetch(entries, folder)
