"""Whole ``cover`` commands on small real files, where start-up is most of the time:
each command of :data:`COMMANDS` run as its own process, tree after tree in every round.

A user who certifies or evaluates one grounder's val file waits mostly for Python to
start, import and build the command: this measures that, not the kernels. ``--tree
NAME=SRC`` adds a source tree (another checkout's ``src``) to run the same commands
with, in turn with this one, so the ratio of two trees is taken round by round (the
machine's drift hits both). Every tree is byte-compiled first, so no run compiles.

    .venv/bin/python bench/cli_start.py --rounds 15 --tree before=/path/to/old/src
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from markdown_out import command_line, machine_line, publish

from cover.io.datasets import find_data_dir

HERE = Path(__file__).resolve().parent
QVH = "qvhighlights"
PREDS = f"{QVH}/qd_detr/video_checkpoint_best_hl_val_preds.jsonl"
GT = f"{QVH}/annotations/highlight_val_release.jsonl"

#: name -> the arguments after ``cover`` ({p} predictions, {g} truth, {d} work folder).
COMMANDS = {
    "schema calibrator (start-up only)": "schema calibrator",
    "calibrate, QVHighlights val": "calibrate --preds {p} --gt {g} -o {d}/cal.json",
    "certify, QVHighlights val": "certify --calibrator {d}/fixed-cal.json --preds {p} "
                                 "--videos {g} -o {d}/regions.jsonl",
    "evaluate, QVHighlights val": "evaluate --regions {d}/fixed-regions.jsonl --gt {g} "
                                  "--json {d}/eval.json",
}


def _run(src: Path, args: str, fields: dict[str, str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    t0 = time.perf_counter()
    # Split the template, then fill each word: a path with a space stays one argument.
    argv = [word.format(**fields) for word in args.split()]
    subprocess.run([sys.executable, "-m", "cover", *argv], env=env, check=True,
                   capture_output=True)
    return time.perf_counter() - t0


def _revision(src: Path) -> str:
    """The commit of the checkout ``src`` is in (with ``+`` when it has changes)."""
    def git(*a: str) -> str:
        return subprocess.run(["git", "-C", str(src), *a], capture_output=True,
                              text=True).stdout.strip()
    rev = git("rev-parse", "--short", "HEAD") or "not a git checkout"
    return rev + ("+" if git("status", "--porcelain", "--", ".") else "")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--tree", action="append", default=[], metavar="NAME=SRC",
                    help="another source tree to time in turn with this one")
    ap.add_argument("--data-dir", help="where the real data is (default: as cover finds it)")
    ap.add_argument("--out", type=Path, help="Markdown file to write")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    trees = {"this tree": HERE.parent / "src"}
    for spec in args.tree:
        name, _, src = spec.partition("=")
        trees[name] = Path(src)
    for src in trees.values():
        compileall.compile_dir(src, quiet=1)
    data = find_data_dir(args.data_dir)
    with tempfile.TemporaryDirectory() as tmp:
        fields = {"p": str(data / PREDS), "g": str(data / GT), "d": tmp}
        # The inputs certify and evaluate read, made once by this tree.
        here = trees["this tree"]
        _run(here, "calibrate --preds {p} --gt {g} -o {d}/fixed-cal.json", fields)
        _run(here, "certify --calibrator {d}/fixed-cal.json --preds {p} --videos {g} "
             "-o {d}/fixed-regions.jsonl", fields)
        times: dict[tuple[str, str], list[float]] = {}
        for src in trees.values():  # one warm-up run each
            for cmd in COMMANDS.values():
                _run(src, cmd, fields)
        for _ in range(args.rounds):
            for what, cmd in COMMANDS.items():
                for name, src in trees.items():
                    times.setdefault((what, name), []).append(_run(src, cmd, fields))
    names = list(trees)
    head = ["command", *(f"{n}: median s (min-max)" for n in names),
            *(f"{n} / this tree (median of rounds)" for n in names[1:])]
    lines = ["## `cover` commands on small real files: start-up included", "",
             command_line("cli_start.py"), "",
             machine_line(load) + f"; {args.rounds} rounds, each command of each tree once "
             "a round, after one warm-up run each.", "",
             "Trees: " + ", ".join(f"{n} {_revision(src)}" for n, src in trees.items())
             + ".", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for what in COMMANDS:
        cells = [what]
        for n in names:
            t = times[(what, n)]
            cells.append(f"{statistics.median(t):.3f} ({min(t):.3f}-{max(t):.3f})")
        base = times[(what, "this tree")]
        for n in names[1:]:
            pairs = zip(times[(what, n)], base, strict=True)
            cells.append(f"{statistics.median(a / b for a, b in pairs):.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return publish(lines, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
