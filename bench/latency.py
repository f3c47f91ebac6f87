"""Single-row certify latency: a service certifying one prediction at a time, in process.

Run from the repository root::

    .venv/bin/python bench/latency.py --calls 20000 --out bench/results-latency.md

Times each call alone (``perf_counter_ns`` around it), contenders interleaved call by
call so load drifts hit them alike, and reports median, p99 and max in microseconds:
``cover.stream.RowCertifier`` (built once) on NORM and SLS, ``certify_row`` (builds
the certifier per call), ``Calibrator.certify`` on a one-row table built per call, and
a plain numpy expression of the same NORM region (``np.clip`` of the widened window)
as the baseline.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import cover
from cover.io.output import write_text
from cover.ragged import Ragged
from cover.stream.row import RowCertifier, certify_row


def _calibrator(score: str) -> cover.Calibrator:
    rng = np.random.default_rng(1)
    k = 10_000
    ts = rng.uniform(0, 110, k)
    rel = Ragged(rng.normal(-10, 2, k * 75), np.arange(k + 1, dtype=np.int64) * 75)
    t = cover.GroundingTable.from_arrays(
        qid=np.arange(k), duration=150.0, pred_start=ts + rng.normal(0, 4, k),
        pred_end=ts + 20 + rng.normal(0, 4, k), truth=(ts, ts + 20), relevance=rel)
    return cover.Calibrator(score=score, alpha=0.1).fit(t)


def contenders() -> dict[str, Callable[[float, float, float, list[float]], object]]:
    norm, sls = _calibrator("norm"), _calibrator("sls")
    fast, slow = RowCertifier(norm), RowCertifier(sls)
    lam, floor = float(norm.threshold_ or 0.0), float(norm.min_scale)

    def numpy_norm(s: float, e: float, t: float, sal: list[float]) -> object:
        w = lam * max(e - s, floor)
        return np.clip(np.array([s - w, e + w]), 0.0, t)

    def table_norm(s: float, e: float, t: float, sal: list[float]) -> object:
        one = cover.GroundingTable.from_arrays(qid=["q"], duration=t, pred_start=[s],
                                               pred_end=[e])
        return norm.certify(one).row(0)

    return {
        "numpy expression (NORM)": numpy_norm,
        "RowCertifier (NORM)": lambda s, e, t, sal: fast(s, e, t),
        "certify_row (NORM, certifier per call)": lambda s, e, t, sal: certify_row(
            norm, s, e, t),
        "Calibrator.certify, one-row table (NORM)": table_norm,
        "RowCertifier (SLS, 75 clips)": lambda s, e, t, sal: slow(s, e, t, saliency=sal),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=20_000)
    ap.add_argument("--out", type=Path, help="also write the Markdown here")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    starts = rng.uniform(0, 110, args.calls).tolist()
    lens = rng.uniform(2, 40, args.calls).tolist()
    sal = rng.normal(-10, 2, 75).tolist()
    fns = contenders()
    times: dict[str, list[int]] = {name: [] for name in fns}
    for s, d in zip(starts, lens, strict=True):
        for name, fn in fns.items():  # interleaved: each call of each contender in turn
            t0 = time.perf_counter_ns()
            fn(s, s + d, 150.0, sal)
            times[name].append(time.perf_counter_ns() - t0)
    base = statistics.median(times["numpy expression (NORM)"])
    load = os.getloadavg()
    lines = [f"Command: `.venv/bin/python bench/latency.py --calls {args.calls}`", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
             f"{platform.python_version()}, numpy {np.__version__}; load average "
             f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min) at the end; "
             f"{args.calls:,} calls per contender, interleaved", "",
             "| contender | median (µs) | p99 (µs) | max (µs) | median / numpy |",
             "|---|---|---|---|---|"]
    for name, ts in times.items():
        q = np.percentile(np.asarray(ts, dtype=np.float64), [50, 99]) / 1e3
        lines.append(f"| {name} | {q[0]:.1f} | {q[1]:.1f} | {max(ts) / 1e3:.0f} | "
                     f"{statistics.median(ts) / base:.2f}x |")
    md = "\n".join(lines) + "\n"
    print(md)
    if args.out:
        write_text(args.out, md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
