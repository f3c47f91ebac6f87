"""Files end to end: certify a large Parquet file and a large Moment-DETR JSON-lines
file in bounded memory.

Run from the repository root::

    .venv/bin/python bench/stream.py --rows 1e7 --jsonl-rows 1e6 --dir /tmp/cover-stream

Writes a QVHighlights-shaped prediction file of ``--rows`` rows (once; reused), then
runs, each in a fresh process so peak memory is its own: (1) merely reading the file
batch by batch into numpy (the read floor: the fastest parse of the same bytes), (2)
reading it batch by batch and writing every column plus a ``cover`` struct column of
the same type, filled without certifying, with ``pyarrow.parquet.ParquetWriter`` and
the writer options of COVER's (the read + write floor, :func:`read_write`), (3)
``cover.stream.certify_parquet`` end to end. Reports wall seconds, rows/s and peak
RSS, each run over both floors (the goal: certify <= 2x read + write), the compression
of both outputs, and this machine's memory bandwidth (a large ``np.copyto``) for scale.

With ``--jsonl-rows`` it also writes a Moment-DETR JSON-lines file shaped like
QD-DETR's QVHighlights output (10 scored windows and 75 saliency clips per line, plus
the video duration) and runs (3) merely parsing every line with each fast parser
installed (orjson, msgspec untyped, msgspec typed to the fields certify reads with and
without the saliency scores, pyarrow.json; the fastest is the floor: see
:func:`_parse`), then
``cover.stream.certify_jsonl`` with (4) NORM and (5) SLS, each echoing every input line
byte for byte, and (6) ``cover evaluate`` (streamed, the default) of the NORM output
against a matching ground-truth file (qid, vid, duration and one window per query,
held whole as evaluate holds it). The calibrator is fitted on 10,000 rows drawn as the
file's rows are, so the regions are valid and evaluate's coverage is meaningful.
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
from markdown_out import command_line, machine_line, publish, ratio_table, verdicts
from stream_floors import (
    PARSERS,
    bandwidth_gbs,
    compression,
    echo,
    installed,
    parse,
    parse_evaluate,
    read,
    read_write,
)
from stream_inputs import (
    COLUMNS,
    jsonl_calibrator,
    make_file,
    make_gt,
    make_jsonl,
    parquet_calibrator,
)

#: The versions the machine line names.
PACKAGES = ("numpy", "pyarrow", "orjson", "msgspec")
def child(mode: str, src: str, dst: str, batch_rows: int) -> None:
    """One measured run (in its own process)."""
    import pyarrow as pa
    import pyarrow.parquet  # imported outside every run's time

    # pyarrow turns strings into numpy through pandas, imported on first use (about 1 s
    # here): imported before every run's time, so neither a floor nor COVER pays it.
    pa.array(["x"]).to_numpy(zero_copy_only=False)

    t0 = time.perf_counter()
    if mode == "evaluate":
        from cover.jobs.evaluate import EvaluateFiles, evaluate_files

        gt = str(Path(src).with_name(Path(src).stem + "_gt.jsonl"))
        out = evaluate_files(EvaluateFiles(regions=dst, gt=gt, batch_rows=batch_rows))
        n = out["counts"]["rows"]
    elif mode == "echo-typed":
        n = echo(src, dst, batch_rows)
    elif mode == "parse-evaluate":
        gt = str(Path(src).with_name(Path(src).stem + "_gt.jsonl"))
        n = parse_evaluate(dst, gt)
    elif mode.startswith("parse-"):
        n = parse(mode.removeprefix("parse-"), src)
    elif mode.startswith("jsonl-"):
        from cover.stream import certify_jsonl

        cal = jsonl_calibrator(mode.removeprefix("jsonl-"), Path(src).parent)
        t0 = time.perf_counter()  # the certify run alone, as the Parquet one
        counts, _ = certify_jsonl(cal, src, dst, batch_lines=batch_rows)  # type: ignore[arg-type]
        n = counts.rows
    elif mode == "read-write":
        from cover.stream.arrow import cover_type  # noqa: F401  (imported outside the time)

        t0 = time.perf_counter()
        n = read_write(src, dst, batch_rows)
    elif mode == "read":
        n = read(src, batch_rows)
    else:
        from cover.stream import certify_parquet

        cal = parquet_calibrator()
        t0 = time.perf_counter()  # the certify run alone, as the floors (no import, no fit)
        counts = certify_parquet(cal, src, dst, columns=COLUMNS, batch_rows=batch_rows)
        n = counts.rows
    wall = time.perf_counter() - t0
    # VmHWM: this process's own peak (ru_maxrss carries the parent's across exec).
    rss_mb = next(int(x.split()[1]) / 1024 for x in Path("/proc/self/status").read_text()
                  .splitlines() if x.startswith("VmHWM:"))
    print(json.dumps({"mode": mode, "rows": n, "wall_s": wall, "peak_rss_mb": rss_mb}))


def _run(mode: str, src: Path, dst: Path, batch_rows: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--batch-rows", str(batch_rows),
                          "--child", mode, str(src), str(dst)],
                         capture_output=True, text=True, check=True)
    res: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return res


def _rounds(jobs: dict[str, tuple[Path, Path]], batch_rows: int, repeats: int
            ) -> dict[str, dict[str, float]]:
    """Every job (mode -> (src, dst)) once per round, in order, ``repeats`` rounds, so a
    busy stretch of a shared machine hits all of them alike: the median wall time and
    the largest peak RSS of each."""
    runs: dict[str, list[dict[str, float]]] = {mode: [] for mode in jobs}
    for _ in range(repeats):
        for mode, (src, dst) in jobs.items():
            runs[mode].append(_run(mode, src, dst, batch_rows))
    return {mode: {"rows": rs[0]["rows"],
                   "wall_s": float(np.median([r["wall_s"] for r in rs])),
                   "peak_rss_mb": max(r["peak_rss_mb"] for r in rs)}
            for mode, rs in runs.items()}


def _goal(what: str, run: dict[str, float], floor: dict[str, float], floor_name: str,
          at_most: float) -> tuple[bool, str]:
    """``(met, text)``: ``run``'s wall time over ``floor``'s against the goal ``at_most``."""
    x = run["wall_s"] / floor["wall_s"]
    return x <= at_most, f"{what}: {x:.2f}x {floor_name}, goal <= {at_most:g}x"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/cover-stream"))
    ap.add_argument("--batch-rows", type=int, default=131_072)
    ap.add_argument("--jsonl-rows", type=float, default=0,
                    help="also certify a Moment-DETR jsonl of this many rows (75 clips each)")
    ap.add_argument("--jsonl-batch-rows", type=int, default=16_384)
    ap.add_argument("--repeats", type=int, default=1,
                    help="interleaved rounds of every run (median wall time; default 1)")
    ap.add_argument("--out", type=Path, default=None, help="also write the Markdown here")
    ap.add_argument("--child", nargs=3, metavar=("MODE", "SRC", "DST"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(*args.child, batch_rows=args.batch_rows)
        return 0
    rows = int(args.rows)
    load0 = os.getloadavg()[0]
    args.dir.mkdir(parents=True, exist_ok=True)
    src = args.dir / f"preds_{rows}.parquet"
    if not src.exists():
        print(f"writing {src} ...", file=sys.stderr)
        make_file(src, rows)
    outs = {"read": args.dir / "unused.parquet", "read-write": args.dir / "floor.parquet",
            "certify": args.dir / "certified.parquet"}
    res = _rounds({mode: (src, dst) for mode, dst in outs.items()}, args.batch_rows,
                  args.repeats)
    bw = bandwidth_gbs()
    size_mb = src.stat().st_size / 1e6
    lines = [f"Parquet file: {rows:,} rows, {size_mb:.0f} MB on disk; batches of "
             f"{args.batch_rows:,} rows; median of {args.repeats} interleaved round(s); "
             "memory bandwidth (np.copyto, read+write) "
             f"{bw:.1f} GB/s; read = the file into numpy batch by batch; read-write = read "
             "and write every column plus a `cover` struct column of COVER's type "
             f"({outs['read-write'].stat().st_size / 1e6:.0f} MB, "
             f"{compression(outs['read-write'])}; certify wrote "
             f"{outs['certify'].stat().st_size / 1e6:.0f} MB, "
             f"{compression(outs['certify'])}); goal: certify <= 2x read-write", "",
             *ratio_table(res, ["read", "read-write"], size_mb)]
    goals = [_goal(f"Parquet certify at {rows:,} rows", res["certify"], res["read-write"],
                   "the read + write", 2.0)]
    if args.jsonl_rows:
        jrows = int(args.jsonl_rows)
        jsrc = args.dir / f"preds_{jrows}.jsonl"
        if not jsrc.exists():
            print(f"writing {jsrc} ...", file=sys.stderr)
            make_jsonl(jsrc, jrows)
        jgt = args.dir / f"preds_{jrows}_gt.jsonl"
        if not jgt.exists():
            make_gt(jgt, jrows)
        parsers = [p for p in PARSERS if installed(p)]
        jobs = {mode: (jsrc, args.dir / f"certified-{mode}.jsonl")
                for mode in [*(f"parse-{p}" for p in parsers), "echo-typed", "jsonl-norm",
                             "jsonl-sls"]}
        # evaluate streams the NORM regions (1.2 KB per line) against the truth held whole
        jobs["evaluate"] = (jsrc, args.dir / "certified-jsonl-norm.jsonl")
        # evaluate's own floor: the typed parse of both of its inputs (after jsonl-norm
        # in each round: it reads that run's output)
        jobs["parse-evaluate"] = jobs["evaluate"]
        jres = _rounds(jobs, args.jsonl_batch_rows, args.repeats)
        eres = {m: jres.pop(m) for m in ("parse-evaluate", "evaluate")}
        fastest = min((m for m in jres if m.startswith("parse-")),
                      key=lambda m: jres[m]["wall_s"])
        floors = [fastest, *(["parse-orjson"] if fastest != "parse-orjson"
                             and "parse-orjson" in jres else []), "echo-typed"]
        lines += ["", f"Moment-DETR JSON lines: {jrows:,} rows (10 windows, 75 saliency clips "
                  f"each), {jsrc.stat().st_size / 1e6:.0f} MB; batches of "
                  f"{args.jsonl_batch_rows:,} lines; parse-* = merely parsing every line "
                  "(orjson per line, msgspec `decode_lines` per 16 MB, typed = msgspec "
                  "`Decoder(type=Row)` per line of the fields certify reads, saliency "
                  "skipped (typed-sls: read), pyarrow.json `open_json` blocks), keeping "
                  "nothing; echo-typed = parse-typed, then every line written back with a "
                  "constant `cover` block spliced in (a writer thread, synced): the least a "
                  "certify echoing each line does; the last columns are over the fastest "
                  f"parse ({fastest}), over orjson's parse of every field and over "
                  "echo-typed; evaluate = `cover evaluate` of the jsonl-norm output "
                  "(streamed)", "",
                  *ratio_table({**jres, "evaluate": eres["evaluate"]}, floors,
                          jsrc.stat().st_size / 1e6)]
        regions = jobs["evaluate"][1]
        lines += ["", f"`cover evaluate` against its own floor: parse-evaluate = a typed "
                  "msgspec decode of the fields evaluate reads of each line of both of its "
                  f"inputs (the {regions.stat().st_size / 1e6:.0f} MB of certified lines and "
                  f"the {jgt.stat().st_size / 1e6:.0f} MB ground truth), keeping nothing", "",
                  *ratio_table(eres, ["parse-evaluate"],
                          (regions.stat().st_size + jgt.stat().st_size) / 1e6)]
        at = f"at {jrows:,} lines"
        goals += [_goal(f"JSON-lines certify NORM {at}", jres["jsonl-norm"], jres[fastest],
                        f"the fastest parse ({fastest})", 2.0),
                  _goal(f"JSON-lines certify SLS {at}", jres["jsonl-sls"], jres[fastest],
                        f"the fastest parse ({fastest})", 3.0)]
        if "parse-typed-sls" in jres:  # the fastest parse that reads the saliency SLS reads
            goals.append(_goal(f"JSON-lines certify SLS {at}", jres["jsonl-sls"],
                               jres["parse-typed-sls"], "the typed parse with the saliency "
                               "(parse-typed-sls)", 3.0))
        goals.append(_goal(f"JSON-lines evaluate {at}", eres["evaluate"],
                           eres["parse-evaluate"], "its own floor (parse-evaluate)", 2.0))
        echo_x = jres["echo-typed"]["wall_s"] / jres[fastest]["wall_s"]
        lines += ["", f"For scale: echo-typed, which checks nothing and scores nothing, takes "
                  f"{echo_x:.2f}x {fastest}: the least an echoing certify does."]
    lines += verdicts(goals)
    head = [command_line("stream.py"), "", machine_line(load0, PACKAGES) + "; interleaved "
            "rounds, medians; peak RSS is each run's own `VmHWM` (a fresh process per run, "
            "the largest of the rounds); wall times are the certify (or evaluate) call "
            "alone, imports and the calibrator's fit excluded", ""]
    return publish(head + lines, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
