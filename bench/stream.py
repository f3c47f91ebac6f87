"""Files end to end: certify a large Parquet file in bounded memory.

Run from the repository root::

    .venv/bin/python bench/stream.py --rows 1e7 --dir /tmp/cover-stream

Writes a QVHighlights-shaped prediction file of ``--rows`` rows (once; reused), then
runs, each in a fresh process so peak memory is its own: (1) merely reading the file
batch by batch into numpy (the floor: the fastest parse of the same bytes), (2)
``cover.stream.certify_parquet`` end to end. Reports wall seconds, rows/s and peak
RSS, plus this machine's memory bandwidth (a large ``np.copyto``) for scale.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from cover.io.output import write_text

COLUMNS = "qid=qid,vid=vid,duration=duration,start=start,end=end"


def make_file(path: Path, rows: int, seed: int = 0) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    chunk = 1_000_000
    schema = pa.schema([("qid", pa.int64()), ("vid", pa.string()), ("duration", pa.float64()),
                        ("start", pa.float64()), ("end", pa.float64())])
    with pq.ParquetWriter(path, schema) as w:
        for a in range(0, rows, chunk):
            m = min(chunk, rows - a)
            T = np.full(m, 150.0)
            s = rng.uniform(0, 110, m)
            e = s + rng.uniform(2, 40, m)
            vid = np.char.add("v", (np.arange(a, a + m) // 3).astype(str))
            w.write_table(pa.table({"qid": np.arange(a, a + m), "vid": vid, "duration": T,
                                    "start": s, "end": e}, schema=schema))


def child(mode: str, src: str, dst: str, batch_rows: int) -> None:
    """One measured run (in its own process)."""
    import pyarrow.parquet as pq

    t0 = time.perf_counter()
    if mode == "read":
        n = 0
        for b in pq.ParquetFile(src).iter_batches(batch_size=batch_rows):
            cols = [np.asarray(c.to_numpy(zero_copy_only=False)) for c in b.columns]
            n += len(cols[0])
    else:
        import cover
        from cover.stream import certify_parquet

        rng = np.random.default_rng(1)
        k = 10_000
        ts = rng.uniform(0, 110, k)
        cal_t = cover.GroundingTable.from_arrays(
            qid=np.arange(k), duration=150.0, pred_start=ts + rng.normal(0, 4, k),
            pred_end=ts + 20 + rng.normal(0, 4, k), truth=(ts, ts + 20))
        cal = cover.Calibrator(score="norm", alpha=0.1).fit(cal_t)
        counts = certify_parquet(cal, src, dst, columns=COLUMNS, batch_rows=batch_rows)
        n = counts.rows
    wall = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"mode": mode, "rows": n, "wall_s": wall, "peak_rss_mb": rss_mb}))


def bandwidth_gbs() -> float:
    a = np.ones(2**26)  # 512 MB
    b = np.empty_like(a)
    best = min(_timed(lambda: np.copyto(b, a)) for _ in range(5))
    return 2 * a.nbytes / best / 1e9  # read + write


def _timed(fn: object) -> float:
    t0 = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/cover-stream"))
    ap.add_argument("--batch-rows", type=int, default=131_072)
    ap.add_argument("--out", type=Path, default=None, help="also write the Markdown here")
    ap.add_argument("--child", nargs=3, metavar=("MODE", "SRC", "DST"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child, batch_rows=args.batch_rows)
        return 0
    rows = int(args.rows)
    args.dir.mkdir(parents=True, exist_ok=True)
    src = args.dir / f"preds_{rows}.parquet"
    if not src.exists():
        print(f"writing {src} ...", file=sys.stderr)
        make_file(src, rows)
    res = {}
    for mode in ("read", "certify"):
        out = subprocess.run([sys.executable, __file__, "--batch-rows", str(args.batch_rows),
                              "--child", mode, str(src), str(args.dir / "certified.parquet")],
                             capture_output=True, text=True, check=True)
        res[mode] = json.loads(out.stdout.strip().splitlines()[-1])
    bw = bandwidth_gbs()
    size_mb = src.stat().st_size / 1e6
    lines = [f"Parquet file: {rows:,} rows, {size_mb:.0f} MB on disk; batches of "
             f"{args.batch_rows:,} rows; memory bandwidth (np.copyto, read+write) "
             f"{bw:.1f} GB/s", "",
             "| run | wall (s) | rows/s | peak RSS (MB) |", "|---|---|---|---|"]
    for mode, r in res.items():
        lines.append(f"| {mode} | {r['wall_s']:.1f} | {r['rows'] / r['wall_s']:,.0f} | "
                     f"{r['peak_rss_mb']:.0f} |")
    ratio = res["certify"]["wall_s"] / res["read"]["wall_s"]
    lines += ["", f"certify / read-only = {ratio:.1f}x"]
    md = "\n".join(lines) + "\n"
    print(md)
    if args.out:
        write_text(args.out, md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
