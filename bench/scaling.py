"""Scaling table: time and peak memory of each COVER path from 1e4 to 1e7 rows.

Run from the repository root::

    .venv/bin/python bench/scaling.py                        # 1e4 .. 1e7, every path
    .venv/bin/python bench/scaling.py --sizes 1e4 1e5 --out /tmp/scaling.md

Each (path, size) runs in a fresh child process (``--child``) so its peak RSS is its
own. The child builds the synthetic QVHighlights-shaped rows (``workloads.synthetic``),
records its resident size, resets its peak (``/proc/self/clear_refs``), times the path
(median of ``--repeats`` calls) and reports the peak RSS reached while running it (the
whole process: Python, numpy, the inputs and the path) and what the path added on top
of the inputs. The parent also reads the child's lifetime ``ru_maxrss`` (``os.wait4``).
Growth = time(n) / time(n / 10): linear growth is 10×.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from markdown_out import machine_line
from workloads import N_CLIPS, short, synthetic

import cover
from cover.calibrate.mondrian import mondrian_conformal
from cover.io.output import write_text

ALPHA = 0.1
PATHS = {
    "norm": "NORM: scores + split_conformal + build_regions (n_cal = m = n)",
    "sec": "SEC: scores + split_conformal + build_regions (n_cal = m = n)",
    "sls": f"SLS ({N_CLIPS} clips): scores + split_conformal + build_regions (n_cal = m = n)",
    "evaluate": "evaluate(NORM regions) on n rows",
    "mondrian100": "Mondrian, 100 groups (SEC): thresholds + build_regions (n_cal = m = n)",
    "table": "GroundingTable.from_arrays (one table of n rows)",
    "numpy-norm": "numpy baseline: NORM scores + np.partition + widen/clip",
}


def _status_mb(field: str) -> float:
    """``VmRSS`` / ``VmHWM`` (peak) of this process from /proc, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux ``clear_refs`` 5), so the peak seen after
    the path is the path's own, not the data generation's."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def _job(path: str, n: int) -> Callable[[], Any]:
    rng = np.random.default_rng(7)
    d = synthetic(n, rng, clips=N_CLIPS if path == "sls" else 0)
    d.dense = None  # the dense copy is for the numpy SLS baseline only
    t = d.table
    if path in ("norm", "sec", "sls"):
        def run() -> Any:
            q = cover.split_conformal(cover.compute_scores(t, path).values, alpha=ALPHA).value
            return cover.build_regions(t, path, q, alpha=ALPHA)
        return run
    if path == "evaluate":
        q = cover.split_conformal(cover.compute_scores(t, "norm").values, alpha=ALPHA).value
        reg = cover.build_regions(t, "norm", q, alpha=ALPHA)
        return lambda: cover.evaluate(reg, t)
    if path == "mondrian100":
        codes = rng.integers(0, 100, n)

        def run_m() -> Any:
            th = mondrian_conformal(cover.compute_scores(t, "sec").values, codes, 100,
                                    alpha=ALPHA, warn=False)
            return cover.build_regions(t, "sec", th.per_row(codes), alpha=ALPHA)
        return run_m
    if path == "table":
        return lambda: cover.GroundingTable.from_arrays(
            qid=np.arange(n), duration=d.T, pred_start=d.ps, pred_end=d.pe, truth=(d.ts, d.te))
    if path == "numpy-norm":
        def run_np() -> Any:
            scale = np.maximum(d.pe - d.ps, 1.0)
            s = np.maximum((d.ps - d.ts) / scale, (d.te - d.pe) / scale)
            k = int(np.ceil((n + 1) * (1 - ALPHA)))
            q = np.partition(s, k - 1)[k - 1]
            return np.maximum(d.ps - q * scale, 0.0), np.minimum(d.pe + q * scale, d.T)
        return run_np
    raise SystemExit(f"unknown path {path}")


def child(path: str, n: int, repeats: int) -> None:
    fn = _job(path, n)
    inputs_mb = _status_mb("VmRSS")
    reset = _reset_peak()
    faults0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    path_peak = _status_mb("VmHWM") if reset else float("nan")
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults0) / repeats
    print(json.dumps({"best": min(times), "median": statistics.median(times),
                      "inputs_mb": inputs_mb, "path_peak_mb": path_peak, "faults": faults}))


def measure(path: str, n: int, repeats: int) -> dict[str, Any]:
    proc = subprocess.Popen([sys.executable, __file__, "--child", path, str(n),
                             "--repeats", str(repeats)], stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        return {"error": f"exit {proc.returncode}"}
    rec = json.loads(out.strip().splitlines()[-1])
    rec["peak_mb"] = usage.ru_maxrss / 1024
    return rec


def table_md(results: dict[str, dict[int, dict[str, Any]]], sizes: list[int]) -> str:
    head = ["path", *[short(n) for n in sizes]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for path, per in results.items():
        cells, prev = [], None
        for n in sizes:
            r = per.get(n)
            if r is None or "error" in r:
                cells.append("—" if r is None else r["error"])
                prev = None
                continue
            grow = f", ×{r['median'] / prev:.1f}" if prev else ""
            added = max(r["path_peak_mb"] - r["inputs_mb"], 0.0)
            cells.append(f"{r['median'] * 1e3:.1f} ms{grow}; {r['path_peak_mb']:.0f} MB "
                         f"(+{added:.0f}); {r['faults'] / 1e3:.1f}k faults")
            prev = r["median"]
        lines.append(f"| {PATHS[path]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[1e4, 1e5, 1e6, 1e7])
    ap.add_argument("--paths", nargs="+", default=list(PATHS), choices=list(PATHS))
    ap.add_argument("--max-sls-rows", type=float, default=1e6,
                    help="largest n for SLS (75 float64 clips per row: 1e6 rows = 600 MB)")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--child", nargs=2, metavar=("PATH", "N"), help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=None, help="also write the Markdown here")
    args = ap.parse_args(argv)
    if args.child:
        child(args.child[0], int(args.child[1]), args.repeats)
        return 0
    sizes = [int(s) for s in args.sizes]
    load0 = os.getloadavg()[0]
    results: dict[str, dict[int, dict[str, Any]]] = {}
    for path in args.paths:
        for n in sizes:
            if path == "sls" and n > args.max_sls_rows:
                continue
            print(f"[scaling] {path} n={short(n)}", file=sys.stderr, flush=True)
            results.setdefault(path, {})[n] = measure(path, n, args.repeats)
    md = "\n".join([
        f"Command: `{' '.join(['bench/scaling.py', *(sys.argv[1:] if argv is None else argv)])}`"
        f" ({args.repeats} calls per cell, median; child processes one at a time)", "",
        machine_line(load0) + " (the cores are "
        "shared: cells run minutes apart see different loads).", "",
        "Each cell: median time, ×growth over the previous size (10× = linear), the peak "
        "RSS of the child while it ran the path (VmHWM reset after the data was built), "
        "(+) what the path added on top of the resident inputs, and the minor page faults "
        "per call (each is a fresh 4 KiB page the kernel zeroes: new large arrays cost "
        "time that grows with the machine's load).", "",
        table_md(results, sizes)])
    print(md)
    if args.out:
        write_text(args.out, md + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
