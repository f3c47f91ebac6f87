"""Scaling of the Parquet streaming path: certify time and peak RSS from 1e4 to 1e7 rows.

Run from the repository root::

    .venv/bin/python bench/stream_scaling.py --sizes 1e4,1e5,1e6,1e7 --dir /tmp/cover-stream

Each size runs ``cover.stream.certify_parquet`` (NORM, the file of ``bench/stream.py``)
in a fresh process, ``--repeats`` times; the time is the certify call alone (imports
and the calibrator fit excluded), the peak is the process's ``VmHWM``. Growth is the
ratio to the previous size of time and of peak RSS, against the ratio of rows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from markdown_out import publish
from stream_inputs import COLUMNS, make_file, parquet_calibrator


def child(src: str, dst: str, batch_rows: int) -> None:
    from cover.stream import certify_parquet

    cal = parquet_calibrator()
    t0 = time.perf_counter()
    counts = certify_parquet(cal, src, dst, columns=COLUMNS, batch_rows=batch_rows)
    wall = time.perf_counter() - t0
    peak = next(int(x.split()[1]) / 1024 for x in Path("/proc/self/status").read_text()
                .splitlines() if x.startswith("VmHWM:"))
    print(json.dumps({"rows": counts.rows, "wall_s": wall, "peak_rss_mb": peak}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e4,1e5,1e6,1e7")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/cover-stream"))
    ap.add_argument("--batch-rows", type=int, default=131_072)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, help="also write the Markdown here")
    ap.add_argument("--child", nargs=2, metavar=("SRC", "DST"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child, batch_rows=args.batch_rows)
        return 0
    args.dir.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()
    lines = [f"Command: `.venv/bin/python bench/stream_scaling.py --sizes {args.sizes} "
             f"--repeats {args.repeats}`", "",
             f"certify_parquet (NORM), batches of {args.batch_rows:,} rows; {os.cpu_count()} "
             f"cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the start; "
             f"median of {args.repeats} fresh processes", "",
             "| rows | certify (s) | rows/s | peak RSS (MB) | x rows | x time | x peak |",
             "|---|---|---|---|---|---|---|"]
    prev: tuple[int, float, float] | None = None
    for size in (int(float(x)) for x in args.sizes.split(",")):
        src = args.dir / f"preds_{size}.parquet"
        if not src.exists():
            make_file(src, size)
        runs = []
        for _ in range(args.repeats):
            out = subprocess.run([sys.executable, __file__, "--batch-rows", str(args.batch_rows),
                                  "--child", str(src), str(args.dir / "scaled.parquet")],
                                 capture_output=True, text=True, check=True)
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        wall = statistics.median(r["wall_s"] for r in runs)
        peak = statistics.median(r["peak_rss_mb"] for r in runs)
        grow = ("| – | – | – |" if prev is None else
                f"| {size / prev[0]:.0f} | {wall / prev[1]:.1f} | {peak / prev[2]:.2f} |")
        lines.append(f"| {size:,} | {wall:.2f} | {size / wall:,.0f} | {peak:.0f} {grow}")
        prev = (size, wall, peak)
    return publish(lines, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
