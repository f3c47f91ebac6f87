"""``cover evaluate`` of Parquet and CSV regions, streamed, against the same files read
whole (``--in-memory``) and against a bare read of the regions file.

Run from the repository root (files are generated once under ``--dir`` and reused)::

    .venv/bin/python bench/evaluate_tables.py --rows 1e6 --repeats 3 \\
        --dir /tmp/cover-evaluate-tables --out bench/results-evaluate-tables.md

The predictions are ``bench/stream.py``'s Parquet rows (:func:`stream_inputs.make_file`), also
written as CSV; their ground truth holds one 20 s window per query. Both are certified
(NORM, alpha 0.1, the calibrator of ``bench/stream.py``'s Parquet runs) into Parquet and
CSV regions. Then, in interleaved rounds, each run in a fresh process and timed around
the call alone (imports excluded):

* ``evaluate-parquet`` / ``evaluate-csv``: ``cover evaluate`` streamed, a clean batch
  read in bulk (:mod:`cover.io.regions_columns`);
* ``whole-parquet`` / ``whole-csv``: the same with ``--in-memory``: the same batches read
  the same way, joined into one table before the truth is joined (what the join on
  (vid, query text) needs);
* ``read-parquet`` / ``read-csv``: the floor, the regions file read with pyarrow (CSV:
  every column as text) and the ground truth decoded typed as ``bench/stream.py``'s
  ``parse-evaluate`` decodes it (:func:`stream_floors.parse_evaluate`), nothing checked.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from markdown_out import command_line, machine_line, publish, ratio_table
from stream_floors import parse_evaluate
from stream_inputs import COLUMNS, make_file, parquet_calibrator
from timing import (
    add_child_flags,
    child_report,
    child_rounds,
    child_rounds_note,
    evaluated_rows,
)

MODES = ("read-parquet", "evaluate-parquet", "whole-parquet", "read-csv", "evaluate-csv",
         "whole-csv")


def make_files(folder: Path, rows: int) -> dict[str, Path]:
    """The regions files and their ground truth (written once, then reused)."""
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    from cover.cli import main
    from cover.io.output import atomic_open

    files = {"preds": folder / f"preds_{rows}.parquet", "gt": folder / f"gt_{rows}.jsonl",
             "cal": folder / "cal.json", "parquet": folder / f"regions_{rows}.parquet",
             "csv": folder / f"regions_{rows}.csv"}
    if all(p.exists() for p in files.values()):
        return files
    make_file(files["preds"], rows)
    parquet_calibrator().save(files["cal"])
    table = pq.read_table(files["preds"])
    pcsv.write_csv(table, folder / f"preds_{rows}.csv")
    ts = np.random.default_rng(5).uniform(0, 110, rows).round()
    qid, vid = table.column("qid").to_pylist(), table.column("vid").to_pylist()
    with atomic_open(files["gt"], "w") as fh:
        fh.writelines(json.dumps({"qid": q, "vid": v, "duration": 150.0, "query": "q",
                                  "relevant_windows": [[t, t + 20.0]]}) + "\n"
                      for q, v, t in zip(qid, vid, ts.tolist(), strict=True))
    for src, dst in ((files["preds"], files["parquet"]),
                     (folder / f"preds_{rows}.csv", files["csv"])):
        assert main(["certify", "--calibrator", str(files["cal"]), "--preds", str(src),
                     "--columns", COLUMNS, "-o", str(dst)]) == 0
    return files


def child(mode: str, folder: str, rows: int, batch_rows: int) -> None:
    """One measured run (in its own process): prints its rows, wall time and peak RSS."""
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    from cover.jobs.evaluate import EvaluateFiles

    d = Path(folder)
    kind = mode.split("-")[1]
    regions = d / f"regions_{rows}.{kind}"
    job = EvaluateFiles(regions=str(regions), gt=str(d / f"gt_{rows}.jsonl"),
                        batch_rows=batch_rows, in_memory=mode.startswith("whole"),
                        calibrator=str(d / "cal.json") if kind == "csv" else None,
                        json=str(d / f"metrics-{mode}.json"))
    # pyarrow turns strings into numpy through pandas, imported on first use: before
    # every run's time, so neither a floor nor COVER pays it.
    import pyarrow as pa
    pa.array(["x"]).to_numpy(zero_copy_only=False)
    t0 = time.perf_counter()
    if mode == "read-parquet":
        n = pq.read_table(regions).num_rows
        parse_evaluate(None, job.gt)
    elif mode == "read-csv":
        n = pcsv.read_csv(regions, convert_options=pcsv.ConvertOptions(
            column_types={"cover_region": pa.string()})).num_rows
        parse_evaluate(None, job.gt)
    else:
        n = evaluated_rows(job)
    child_report(mode, n, time.perf_counter() - t0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=1e6)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/cover-evaluate-tables"))
    ap.add_argument("--batch-rows", type=int, default=16_384)
    add_child_flags(ap)
    args = ap.parse_args()
    rows = int(args.rows)
    if args.child:
        child(args.child[0], str(args.dir), rows, args.batch_rows)
        return 0
    load0 = os.getloadavg()[0]
    args.dir.mkdir(parents=True, exist_ok=True)
    files = make_files(args.dir, rows)
    res = child_rounds(__file__, MODES, args.repeats, [
        "--rows", str(rows), "--dir", str(args.dir), "--batch-rows", str(args.batch_rows)])
    lines = [command_line("evaluate_tables.py"), "",
             machine_line(load0, ("numpy", "pyarrow", "msgspec")) + "; "
             + child_rounds_note(args.repeats), ""]
    for kind in ("parquet", "csv"):
        size_mb = files[kind].stat().st_size / 1e6
        same = ((args.dir / f"metrics-evaluate-{kind}.json").read_bytes()
                == (args.dir / f"metrics-whole-{kind}.json").read_bytes())
        lines += [f"{kind.upper() if kind == 'csv' else 'Parquet'} regions: {rows:,} rows, "
                  f"{size_mb:.0f} MB, against a {files['gt'].stat().st_size / 1e6:.0f} MB "
                  f"ground truth; batches of {args.batch_rows:,} rows; the streamed and the "
                  f"whole read wrote {'the same' if same else 'DIFFERENT'} metrics file"
                  f"{', byte for byte' if same else ''}", "",
                  *ratio_table({m: res[m] for m in MODES if m.endswith(kind)},
                          [f"read-{kind}", f"evaluate-{kind}"], size_mb), ""]
    return publish(lines, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
