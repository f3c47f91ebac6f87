"""Scaling of every file command: wall time and peak RSS at 1e5, 1e6 and 1e7 rows.

Run from the repository root (on a quiet machine; 1e7 takes about an hour and ~30 GB of
disk: the 11 GB prediction file and at most two certified copies of it, each removed once
no later command reads it)::

    .venv/bin/python bench/scaling_files.py --sizes 1e5,1e6,1e7 --dir /tmp/cover-scaling \\
        --out bench/results-scaling-files.md

Each size writes (once; reused) a QD-DETR-shaped Moment-DETR JSON-lines prediction file and
its ground truth (``bench/stream_inputs.py``), and the same rows as a Parquet file.
Calibrators for certify are fitted once on 10,000 rows drawn alike (not timed). Every
command then runs as the user types it (``python -m cover ...``), each in a fresh process:
``calibrate`` (JSON lines, Parquet), ``certify`` (JSON lines NORM, JSON lines SLS,
Parquet NORM, JSON lines with ``--videos``) and ``evaluate`` (the NORM regions against
the truth); ``--only`` names the commands to run instead (the in-memory ``calibrate`` and
the ``all clipped`` runs are run only so).
The time is the whole command (imports included); the peak is the process's
``VmHWM``, read as the command ends. The Markdown lists the exact commands and, per
command, the growth of time and peak from one size to the next, and whether each goal of
the performance issue it measures (:data:`PEAK_GOALS`, time x10-11 per tenfold rows: of the median
times, with ``--repeats`` rounds) is met. The ``all clipped`` commands run the same rows with every
window ending past its video: every row is a row problem, which must not make the peak
grow (problems are counted, not kept).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import runpy
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from markdown_out import command_line, machine_line, publish, verdicts
from stream_inputs import COLUMNS, make_gt, make_jsonl

#: name -> the cover arguments, with {p} (predictions stem), {d} (folder) filled in.
COMMANDS: dict[str, str] = {
    "calibrate jsonl": "calibrate --preds {p}.jsonl --gt {p}_gt.jsonl -o {d}/cal-jsonl.json",
    "calibrate jsonl in memory": "calibrate --preds {p}.jsonl --gt {p}_gt.jsonl --in-memory "
                                 "-o {d}/cal-inmem.json",
    "calibrate parquet": f"calibrate --preds {{p}}.parquet --columns {COLUMNS} "
                         "--gt {p}_gt.jsonl -o {d}/cal-parquet.json",
    "certify jsonl NORM": "certify --calibrator {d}/cal-norm.json --preds {p}.jsonl "
                          "-o {d}/out-norm.jsonl",
    "certify jsonl SLS": "certify --calibrator {d}/cal-sls.json --preds {p}.jsonl "
                         "-o {d}/out-sls.jsonl",
    "certify parquet NORM": f"certify --calibrator {{d}}/cal-norm.json --preds {{p}}.parquet "
                            f"--columns {COLUMNS} -o {{d}}/out-norm.parquet",
    "certify jsonl --videos": "certify --calibrator {d}/cal-norm.json --preds {p}.jsonl "
                              "--videos {p}_gt.jsonl -o {d}/out-videos.jsonl",
    "evaluate jsonl": "evaluate --regions {d}/out-norm.jsonl --gt {p}_gt.jsonl "
                      "--json {d}/eval.json",
    # The same rows with every window (prediction and truth) ending past the video: each
    # row is clipped, so each is a row problem (counted, not kept: memory stays bounded).
    "calibrate jsonl all clipped": "calibrate --preds {p}_past.jsonl --gt {p}_past_gt.jsonl "
                                    "-o {d}/cal-past.json",
    "certify jsonl NORM all clipped": "certify --calibrator {d}/cal-norm.json --preds "
                                       "{p}_past.jsonl -o {d}/out-past.jsonl",
    "evaluate jsonl all clipped": "evaluate --regions {d}/out-past.jsonl --gt "
                                   "{p}_past_gt.jsonl --json {d}/eval-past.json",
}
#: The commands run when ``--only`` is not given: every file command on clean rows.
MAIN = ("calibrate jsonl", "calibrate parquet", "certify jsonl NORM", "certify jsonl SLS",
        "certify parquet NORM", "certify jsonl --videos", "evaluate jsonl")
#: (command, rows, MB): the peak RSS the performance issue bounds it to at that size.
PEAK_GOALS = (("calibrate jsonl", 10**6, 300), ("calibrate parquet", 10**6, 300),
              ("calibrate jsonl", 10**7, 600), ("calibrate parquet", 10**7, 600),
              ("evaluate jsonl", 10**7, 600), ("certify jsonl --videos", 10**7, 600))
#: Time per tenfold rows: at most this growth (linear time; less is a fixed start-up).
TIME_GROWTH = 11.0
#: Every row a problem (``all clipped``): the peak stays within this factor of the clean
#: rows' (problems are counted, not kept).
PROBLEM_GROWTH = 1.1


def make_parquet(src: Path, dst: Path) -> None:
    """The top-1 window of each line of ``src`` as a Parquet row (qid, vid, duration,
    start, end): the same queries, so the same ground truth joins."""
    import orjson
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([("qid", pa.int64()), ("vid", pa.string()), ("duration", pa.float64()),
                        ("start", pa.float64()), ("end", pa.float64())])
    with pq.ParquetWriter(dst, schema) as w, src.open("rb") as fh:
        while chunk := fh.readlines(1 << 26):
            recs = [orjson.loads(line) for line in chunk]
            top = [r["pred_relevant_windows"][0] for r in recs]
            w.write_table(pa.table({
                "qid": [r["qid"] for r in recs], "vid": [r["vid"] for r in recs],
                "duration": [float(r["duration"]) for r in recs],
                "start": [t[0] for t in top], "end": [t[1] for t in top]}, schema=schema))


def prepare(where: Path, size: int, past_end: bool) -> Path:
    """The files of one size (written once; ``past_end``: also the all-clipped ones) and
    the certify calibrators; returns the predictions' stem."""
    stem = where / f"preds_{size}"
    if past_end and not Path(f"{stem}_past.jsonl").exists():
        make_jsonl(Path(f"{stem}_past.jsonl"), size, past_end=True)
        make_gt(Path(f"{stem}_past_gt.jsonl"), size, past_end=True)
    if not stem.with_suffix(".jsonl").exists():
        print(f"writing {stem}.jsonl ...", file=sys.stderr)
        make_jsonl(stem.with_suffix(".jsonl"), size)
    if not Path(f"{stem}_gt.jsonl").exists():
        make_gt(Path(f"{stem}_gt.jsonl"), size)
    if not stem.with_suffix(".parquet").exists():
        make_parquet(stem.with_suffix(".jsonl"), stem.with_suffix(".parquet"))
    cal = where / "calibration_10000"
    if not cal.with_suffix(".jsonl").exists():
        make_jsonl(cal.with_suffix(".jsonl"), 10_000, seed=11)
        make_gt(Path(f"{cal}_gt.jsonl"), 10_000, seed=12)
    for score in ("norm", "sls"):
        out = where / f"cal-{score}.json"
        if not out.exists():
            subprocess.run([sys.executable, "-m", "cover", "calibrate", "--score", score,
                            "--preds", f"{cal}.jsonl", "--gt", f"{cal}_gt.jsonl", "-o",
                            str(out)], check=True, capture_output=True)
    return stem


def child(args: list[str]) -> None:
    """Run ``cover args`` in this process; print its wall time and peak RSS."""
    sys.argv = ["cover", *args]
    t0 = time.perf_counter()
    code = 0
    try:
        runpy.run_module("cover", run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    wall = time.perf_counter() - t0
    # VmHWM: this process's own peak (ru_maxrss carries the parent's across exec).
    peak = next(int(x.split()[1]) / 1024 for x in Path("/proc/self/status").read_text()
                .splitlines() if x.startswith("VmHWM:"))
    print(json.dumps({"code": code, "wall_s": wall, "peak_rss_mb": peak}))


def output_of(cmd: str) -> str | None:
    """The file ``cover cmd`` writes (its ``-o``), if any."""
    words = cmd.split()
    return words[words.index("-o") + 1] if "-o" in words else None


def run(cmd: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", *cmd.split()],
                         capture_output=True, text=True)
    res: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    if res["code"] != 0:
        raise SystemExit(f"`cover {cmd}` failed:\n{out.stderr[-2000:]}")
    return res


def summary(rounds: list[dict[str, float]]) -> dict[str, float]:
    """The rounds of one command at one size: the median wall time, the fastest and the
    slowest, and the largest peak."""
    walls = sorted(r["wall_s"] for r in rounds)
    return {"wall_s": float(np.median(walls)), "wall_min": walls[0], "wall_max": walls[-1],
            "peak_rss_mb": max(r["peak_rss_mb"] for r in rounds)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e5,1e6,1e7")
    ap.add_argument("--max-rows", type=float, default=float("inf"),
                    help="skip sizes above this (a quick check of the script)")
    ap.add_argument("--dir", type=Path, default=Path("/tmp/cover-scaling"))
    ap.add_argument("--only", default="", help="comma-separated command names (default all)")
    ap.add_argument("--repeats", type=int, default=1,
                    help="rounds of every command at each size (median time, largest peak)")
    ap.add_argument("--out", type=Path, help="also write the Markdown here")
    ap.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return 0
    sizes = [s for s in (int(float(x)) for x in args.sizes.split(",")) if s <= args.max_rows]
    names = [n for n in COMMANDS if n in (args.only.split(",") if args.only else MAIN)]
    args.dir.mkdir(parents=True, exist_ok=True)
    load0 = os.getloadavg()[0]
    runs: dict[str, dict[int, list[dict[str, float]]]] = {n: {} for n in names}
    for size in sizes:
        stem = prepare(args.dir, size, any("clipped" in n for n in names))
        cmds = [COMMANDS[n].format(p=stem, d=args.dir) for n in names]
        for _ in range(args.repeats):  # rounds of every command: a busy spell hits all alike
            for i, (name, cmd) in enumerate(zip(names, cmds, strict=True)):
                r = run(cmd)
                runs[name].setdefault(size, []).append(r)
                print(f"{name} {size:,}: {r['wall_s']:.1f} s, {r['peak_rss_mb']:.0f} MB",
                      file=sys.stderr)
                for out in filter(None, map(output_of, cmds[:i + 1])):
                    if not any(out in later.split() for later in cmds[i + 1:]):
                        Path(out).unlink(missing_ok=True)  # a 1e7 certified copy is 14 GB
    res = {name: {size: summary(rs) for size, rs in by_size.items()}
           for name, by_size in runs.items()}
    lines = [command_line("scaling_files.py"), "",
             machine_line(load0, ("numpy", "pyarrow", "msgspec")) + "; one fresh process per "
             f"run, one after another, {args.repeats} round(s) of every command at each size "
             "(wall: the median, with the fastest and slowest round; peak: the largest); "
             "time = the whole command (imports included); peak = VmHWM", "",
             "| command | rows | wall (s) | wall range (s) | rows/s | peak RSS (MB) | x time "
             "| x peak |", "|---|---|---|---|---|---|---|---|"]
    for name in names:
        prev = None
        for size, r in res[name].items():
            grow = ("– | –" if prev is None else
                    f"{r['wall_s'] / prev['wall_s']:.1f} | "
                    f"{r['peak_rss_mb'] / prev['peak_rss_mb']:.2f}")
            lines.append(f"| {name} | {size:,} | {r['wall_s']:.1f} | {r['wall_min']:.1f}–"
                         f"{r['wall_max']:.1f} | {size / r['wall_s']:,.0f} | "
                         f"{r['peak_rss_mb']:.0f} | {grow} |")
            prev = r
    top = sizes[-1] if sizes else 0
    lines += ["", f"Exact commands at {top:,} rows (the other sizes: the same with their "
              "row count in the file names), each run as `python bench/scaling_files.py "
              "--child <arguments>` (= `python -m cover <arguments>`, then VmHWM):", ""]
    lines += [f"* {name}: `python -m cover "
              f"{COMMANDS[name].format(p=args.dir / f'preds_{top}', d=args.dir)}`"
              for name in names]
    return publish(lines + goal_lines(res), args.out)


def goal_lines(res: dict[str, dict[int, dict[str, float]]]) -> list[str]:
    """Each goal this run measured, its figure and whether it is met (misses first)."""
    rows: list[tuple[bool, str]] = []
    for name, size, mb in PEAK_GOALS:
        if size in res.get(name, {}):
            peak = res[name][size]["peak_rss_mb"]
            rows.append((peak <= mb, f"{name} at {size:,} rows: peak {peak:.0f} MB, "
                                     f"goal <= {mb} MB"))
    for name, by_size in res.items():
        sizes = sorted(by_size)
        for a, b in itertools.pairwise(sizes):
            grow = by_size[b]["wall_s"] / by_size[a]["wall_s"] / (b / a) * 10
            rows.append((grow <= TIME_GROWTH, f"{name} from {a:,} to {b:,} rows: time "
                                              f"x{grow:.2f} per tenfold rows, goal <= "
                                              f"x{TIME_GROWTH:g}"))
    for name, by_size in res.items():  # every row a problem: counted, not kept
        clean = res.get(name.removesuffix(" all clipped"), {}) if name.endswith(
            " all clipped") else {}
        for size in sorted(set(by_size) & set(clean)):
            a, b = clean[size]["peak_rss_mb"], by_size[size]["peak_rss_mb"]
            rows.append((b <= PROBLEM_GROWTH * a, f"{name} at {size:,} rows: peak {b:.0f} MB, "
                         f"the clean rows' {a:.0f} MB, goal <= x{PROBLEM_GROWTH:g}"))
    return verdicts(rows)


if __name__ == "__main__":
    raise SystemExit(main())
