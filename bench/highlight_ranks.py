"""HL-mAP's ranking of clips against the video's length: time per call, one long video
or many short ones, COVER's blocked scan against a scan that steps once per rank.

Run from the repository root::

    .venv/bin/python bench/highlight_ranks.py --clips 1800 12600 50000 \
        --out bench/results-highlight-ranks.md

HL-mAP ranks each video's clips by the predicted saliency and scans the ranks for the
running count of positives, the tie groups that hold one and the best precision at or
after each rank (:func:`cover.highlight_metrics.highlight_rows`). Many short videos lie
side by side (one scan step covers every video's rank k); one long video is cut into
blocks laid side by side (:func:`cover.scans.accumulate_ranks`). The reference here is
the same AP with one vector step per rank (the kernel before the blocks), whose time
grows with the ranks: an hour-long video has 1,800 label clips, a 28-hour one 50,000.
Each case runs both, interleaved, in one process, and checks that they give the same
bits. With the real QVHighlights val files found, their 1,550 rows are a case too.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
from markdown_out import command_line, machine_line, publish

from cover import highlight_metrics as hm
from cover.data.table import GroundingTable
from cover.errors import InputError
from cover.intervals import Intervals
from cover.io.datasets import find_data_dir
from cover.io.labelled import load_labelled
from cover.ragged import Ragged

PREDS = "qvhighlights/qd_detr/video_checkpoint_best_hl_val_preds.jsonl"
GT = "qvhighlights/annotations/highlight_val_release.jsonl"


def step_per_rank(positive: np.ndarray, ends: np.ndarray, starts: np.ndarray,
                  n_clips: np.ndarray) -> np.ndarray:
    """The reference: :func:`cover.highlight_metrics._ranked_ap` with one vector step
    per rank for the running counts and the best precision after each rank (the AP
    from them is COVER's own, :func:`cover.highlight_metrics.ap_of_ranks`)."""
    width = positive.shape[0]
    tp = np.empty(positive.shape, dtype=np.int64)
    grouped = np.empty(positive.shape, dtype=bool)
    tp[0], grouped[0] = positive[0], positive[0]
    for k in range(1, width):
        np.add(tp[k - 1], positive[k], out=tp[k])
        np.logical_or(positive[k], grouped[k - 1] & ~starts[k], out=grouped[k])
    precision = np.where(ends, tp / np.arange(1.0, width + 1)[:, None], -np.inf)
    best_later = np.empty(positive.shape)
    best_later[-1] = precision[-1]
    for k in range(width - 2, -1, -1):
        np.maximum(precision[k], best_later[k + 1], out=best_later[k])
    return hm.ap_of_ranks(ends & grouped, best_later, tp[-1], n_clips)


def long_video(clips: int, seed: int = 0) -> GroundingTable:
    """One video of ``clips`` label clips (2 s each), a third of them labelled, with a
    saliency of tied half-steps over every clip."""
    rng = np.random.default_rng(seed)
    ids = np.sort(rng.choice(clips, size=max(clips // 3, 1), replace=False))
    labels = np.column_stack([ids, rng.integers(0, 5, size=(ids.size, 3))]).astype(float)
    t = np.array([2.0 * clips])
    return GroundingTable(
        qid=np.array(["long"]), vid=np.array(["long"]), duration=t,
        pred_start=np.array([np.nan]), pred_end=np.array([np.nan]),
        relevance=Ragged(rng.integers(-4, 5, size=clips) / 2, np.array([0, clips])),
        clip=2.0, truth=Intervals.single(np.zeros(1), t),
        truth_saliency=Ragged(labels, np.array([0, ids.size])))


def timed(table: GroundingTable, repeats: int) -> tuple[float, float]:
    """Median seconds of :func:`cover.highlight_metrics.highlight_rows` with COVER's scan
    and with the reference, interleaved; the two give the same bits."""
    real = hm._ranked_ap
    times: dict[bool, list[float]] = {True: [], False: []}
    got: dict[bool, bytes] = {}
    try:
        for _ in range(repeats):
            for ours in (True, False):
                hm._ranked_ap = real if ours else step_per_rank  # type: ignore[assignment]
                t0 = time.perf_counter()
                _, _, ap = hm.highlight_rows(table)
                times[ours].append(time.perf_counter() - t0)
                got[ours] = b"".join(v.tobytes() for v in ap.values())
    finally:
        hm._ranked_ap = real
    if got[True] != got[False]:
        raise SystemExit("the blocked scan and the reference differ")
    return float(np.median(times[True])), float(np.median(times[False]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clips", type=int, nargs="+", default=[1800, 12600, 50000])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--data-dir", type=Path, default=None)
    ap.add_argument("--out", type=Path, help="also write the Markdown here")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    cases = [(f"one video of {c:,} label clips ({c * 2 / 3600:.1f} h)", long_video(c))
             for c in args.clips]
    try:
        data = find_data_dir(args.data_dir, need=(PREDS, GT))
        table, _ = load_labelled(data / PREDS, data / GT)
        cases.insert(0, (f"QD-DETR on QVHighlights val ({len(table):,} videos of 150 s)",
                         table))
    except InputError:
        pass  # no real data here: the synthetic videos only
    rows = []
    for name, table in cases:
        ours, ref = timed(table, args.repeats)
        rows.append(f"| {name} | {ours * 1e3:.1f} | {ref * 1e3:.1f} | {ours / ref:.2f}x |")
    lines = [command_line("highlight_ranks.py"), "", machine_line(load0) + f"; median of "
             f"{args.repeats} interleaved rounds, in one process; both scans give the same "
             "bits in every case.", "",
             "| case | COVER (ms) | one step per rank (ms) | COVER / reference |",
             "|---|---|---|---|", *rows]
    return publish(lines, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
