"""Where a streamed JSON-lines certify spends its time: the pipeline of
:func:`cover.stream.certify_jsonl` cut after each stage, every prefix run alone.

Run from the repository root (the files of ``bench/stream.py`` are reused)::

    .venv/bin/python bench/stream_stages.py --rows 1e6 --dir /tmp/cover-stream

Per score (NORM, SLS), each prefix in a fresh process, the prefixes taking turns round
by round: ``lines`` reads the file and cuts it into numbered lines
(:func:`cover.io.lines.line_batches`); ``decode`` adds the bulk read of each batch into
checked columns (:func:`cover.io.jsonl_batch.load_batch`); ``stage`` adds the certify
stage (ids, duplicates, durations, the calibrator: ``CertifyStage.run``); ``format`` adds
the output lines (``CertifyKernel.run``, which is the three above and the formatting);
``certify`` is :func:`cover.stream.certify_jsonl` end to end (the output written on the
writer's thread, atomically). Beside them the floors of ``bench/stream.py``: a typed
msgspec parse of each line (``parse-typed``, the saliency read for SLS) and the echo of
every line with a constant block (``echo-typed``). Each stage's cost is the step from the
prefix before it; the last column is the prefix over the parse floor. So the table says
how much of the goal (certify <= 2x the parse for NORM, <= 3x for SLS) each stage takes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from markdown_out import command_line, machine_line, publish
from stream_floors import echo, parse
from stream_inputs import jsonl_calibrator, make_jsonl

PREFIXES = ("lines", "decode", "stage", "format", "certify")
FLOORS = ("parse-typed", "echo-typed")


def child(mode: str, score: str, src: str, batch: int) -> None:
    """One measured run in this process: prints rows, wall seconds."""
    from cover.io.lines import line_batches
    from cover.io.seen import SeenIds
    from cover.stream import certify_jsonl
    from cover.stream.jsonl import CertifyKernel

    cal = jsonl_calibrator(score, Path(src).parent) if mode in PREFIXES else None
    kernel = CertifyKernel.of(cal) if cal is not None else None
    dst = str(Path(src).with_name(f"stages-{score}-{mode}.jsonl"))
    seen = SeenIds()
    n = 0
    t0 = time.perf_counter()
    if mode == "parse-typed":
        n = parse("typed-sls" if score == "sls" else "typed", src)
    elif mode == "echo-typed":
        n = echo(src, dst, batch)
    elif mode == "certify":
        n = certify_jsonl(cal, src, dst, batch_lines=batch)[0].rows
    else:
        from cover.io.jsonl_batch import gc_paused, load_batch

        assert kernel is not None
        with gc_paused():  # as certify_jsonl runs every batch
            for lines in line_batches(src, batch):
                n += len(lines)
                if mode == "decode":
                    load_batch(src, lines, clip=kernel.clip, on_error="reject",
                               keep_records=kernel.keep_records, signal=kernel.signal)
                elif mode == "stage":
                    got = load_batch(src, lines, clip=kernel.clip, on_error="reject",
                                     keep_records=kernel.keep_records, signal=kernel.signal)
                    kernel.stage.run(got.loaded, seen)
                elif mode == "format":
                    kernel.run(src, lines, seen)
    print(json.dumps({"rows": n, "wall_s": time.perf_counter() - t0}))


def _rounds(score: str, src: Path, batch: int, repeats: int) -> dict[str, float]:
    """The median wall seconds of every run, the runs taking turns ``repeats`` rounds."""
    walls: dict[str, list[float]] = {m: [] for m in (*FLOORS, *PREFIXES)}
    for _ in range(repeats):
        for mode in walls:
            out = subprocess.run([sys.executable, __file__, "--child", mode, score, str(src),
                                  "--batch-rows", str(batch)],
                                 capture_output=True, text=True, check=True)
            walls[mode].append(json.loads(out.stdout.strip().splitlines()[-1])["wall_s"])
    return {m: float(np.median(w)) for m, w in walls.items()}


def table(score: str, wall: dict[str, float]) -> list[str]:
    """The Markdown rows of one score: floors, then each prefix and its step."""
    floor = wall["parse-typed"]
    rows = [f"| {m} (floor) | {wall[m]:.2f} | – | {wall[m] / floor:.2f}x |" for m in FLOORS]
    steps, before = {}, 0.0
    for m in PREFIXES:
        steps[m], before = wall[m] - before, wall[m]
        rows.append(f"| {m} | {wall[m]:.2f} | {steps[m]:+.2f} | {wall[m] / floor:.2f}x |")
    big = max(steps, key=steps.__getitem__)
    read = (f"The largest stage is {big}: {steps[big]:.2f} s of the {wall['certify']:.2f} s "
            f"({steps[big] / wall['certify']:.0%}); reading and decoding alone take "
            f"{wall['decode'] / floor:.2f}x the parse floor, and certify as a whole "
            f"{wall['certify'] / floor:.2f}x it ({wall['certify'] / wall['echo-typed']:.2f}x "
            "the echo).")
    return [f"### {score.upper()}", "", "| run | wall (s) | this stage (s) | / parse-typed |",
            "|---|---|---|---|", *rows, "", read, ""]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=1e6)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/cover-stream"))
    ap.add_argument("--batch-rows", type=int, default=16_384)
    ap.add_argument("--scores", nargs="+", default=["norm", "sls"], choices=["norm", "sls"])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--child", nargs=3, metavar=("MODE", "SCORE", "SRC"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        mode, score, src = args.child
        child(mode, score, src, batch=args.batch_rows)
        return 0
    load0 = os.getloadavg()[0]
    rows = int(args.rows)
    args.dir.mkdir(parents=True, exist_ok=True)
    src = args.dir / f"preds_{rows}.jsonl"
    if not src.exists():
        print(f"writing {src} ...", file=sys.stderr)
        make_jsonl(src, rows)
    lines = [command_line("stream_stages.py"), "",
             machine_line(load0, ("numpy", "msgspec")), "",
             f"Moment-DETR JSON lines: {rows:,} rows (10 windows, 75 saliency clips each), "
             f"{src.stat().st_size / 1e6:.0f} MB; batches of {args.batch_rows:,} lines; "
             f"median of {args.repeats} interleaved round(s); each run a fresh process, "
             "imports and the calibrator's fit outside its time. A prefix runs every stage "
             "up to its own; 'this stage' is its step from the prefix above.", ""]
    for score in args.scores:
        lines += table(score, _rounds(score, src, args.batch_rows, args.repeats))
    for p in args.dir.glob("stages-*.jsonl"):
        p.unlink()
    return publish(lines, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
