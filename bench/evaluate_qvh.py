"""``cover evaluate`` on QVHighlights-style rows, against the typed parse of its inputs.

``bench/stream.py``'s evaluate row reads a synthetic ground truth of one window a query
and no highlight labels: the cheap paths. Real QVHighlights truth has several windows in
a third of its rows and highlight labels on all of them. This script builds its inputs
from the real files: QD-DETR's val predictions and the val ground truth, repeated in
whole copies to at least ``--rows`` rows under new qids (``qid * 1000 + copy``),
certified (NORM, alpha 0.1, a calibrator fitted on the real val rows, durations from the
ground truth). Then, in
interleaved rounds, each run in a fresh process and timed around the call alone:

* ``parse-evaluate``: the floor, a typed msgspec decode of the fields evaluate reads of
  every certified line and every ground-truth line (:func:`stream_floors.parse_evaluate`);
* ``evaluate``: ``cover evaluate`` streamed (``cover.jobs.evaluate.evaluate_files``).

Run from the repository root (files are generated once under ``--dir`` and reused)::

    .venv/bin/python bench/evaluate_qvh.py [DATA_DIR] --rows 1e6 --repeats 3 \\
        --dir /tmp/cover-evaluate-qvh --out bench/results-evaluate-qvh.md
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

from markdown_out import command_line, machine_line, publish, ratio_table
from stream_floors import parse_evaluate
from timing import (
    add_child_flags,
    child_report,
    child_rounds,
    child_rounds_note,
    evaluated_rows,
)

PREDS = "qvhighlights/qd_detr/video_checkpoint_best_hl_val_preds.jsonl"
GT = "qvhighlights/annotations/highlight_val_release.jsonl"
MODES = ("parse-evaluate", "evaluate")


def make_files(data: Path, folder: Path, rows: int) -> dict[str, Path]:
    """The repeated ground truth, the certified regions and their calibrator (written
    once, then reused)."""
    import orjson

    import cover
    from cover.cli import main
    from cover.io.output import atomic_open

    files = {"gt": folder / f"gt_{rows}.jsonl", "preds": folder / f"preds_{rows}.jsonl",
             "cal": folder / "cal.json", "regions": folder / f"regions_{rows}.jsonl"}
    if all(p.exists() for p in files.values()):
        return files
    preds = (data / PREDS).read_bytes().splitlines()
    truth = (data / GT).read_bytes().splitlines()
    copies = math.ceil(rows / len(preds))
    for name, lines in (("preds", preds), ("gt", truth)):
        parsed = [orjson.loads(x) for x in lines]
        with atomic_open(files[name], "wb") as fh:
            for c in range(copies):
                fh.write(b"".join(orjson.dumps({**r, "qid": r["qid"] * 1000 + c}) + b"\n"
                                  for r in parsed))
    table, _ = cover.load_labelled(data / PREDS, data / GT)
    cover.Calibrator(score="norm", alpha=0.1).fit(table).save(files["cal"])
    assert main(["certify", "--calibrator", str(files["cal"]), "--preds", str(files["preds"]),
                 "--videos", str(files["gt"]), "-o", str(files["regions"])]) == 0
    return files


def child(mode: str, folder: str, rows: int) -> None:
    """One measured run (in its own process): prints its rows, wall time and peak RSS."""
    from cover.jobs.evaluate import EvaluateFiles

    d = Path(folder)
    job = EvaluateFiles(regions=str(d / f"regions_{rows}.jsonl"),
                        gt=str(d / f"gt_{rows}.jsonl"), json=str(d / "metrics.json"))
    t0 = time.perf_counter()
    if mode == "parse-evaluate":
        n = parse_evaluate(job.regions, job.gt)
    else:
        n = evaluated_rows(job)
    child_report(mode, n, time.perf_counter() - t0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?", default=None,
                    help="the folder holding qvhighlights/ (default: cover's data folder)")
    ap.add_argument("--rows", type=float, default=1e6)
    ap.add_argument("--dir", type=Path, default=Path("/tmp/cover-evaluate-qvh"))
    add_child_flags(ap)
    args = ap.parse_args()
    rows = int(args.rows)
    if args.child:
        child(args.child[0], str(args.dir), rows)
        return 0
    from cover.io.datasets import find_data_dir

    load0 = os.getloadavg()[0]
    args.dir.mkdir(parents=True, exist_ok=True)
    files = make_files(find_data_dir(args.data, need=(GT, PREDS)), args.dir, rows)
    res = child_rounds(__file__, MODES, args.repeats,
                       ["--rows", str(rows), "--dir", str(args.dir)])
    size_mb = (files["regions"].stat().st_size + files["gt"].stat().st_size) / 1e6
    lines = [command_line("evaluate_qvh.py"), "",
             machine_line(load0, ("numpy", "msgspec")) + "; " + child_rounds_note(args.repeats),
             "",
             f"QD-DETR's QVHighlights val predictions and the val ground truth repeated to "
             f"{res['evaluate']['rows']:,} rows (new qids), certified (NORM, alpha 0.1): "
             f"{files['regions'].stat().st_size / 1e6:.0f} MB of certified lines and a "
             f"{files['gt'].stat().st_size / 1e6:.0f} MB ground truth (several windows in a "
             "third of the rows, highlight labels on all); input MB/s counts both files", "",
             *ratio_table(res, ["parse-evaluate"], size_mb)]
    return publish(lines, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
