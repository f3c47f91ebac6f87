"""Smoke check of the benchmark scripts: each command-line script of ``bench/`` run once,
at tiny sizes, as a child process, so a script that no longer runs fails CI.

The benchmark scripts are not part of the test suite (their runs take minutes and the
suite's time is budgeted), so nothing else notices when a rename in ``cover`` breaks one.
This runs every script of :data:`RUNS` from the repository root as ``python
bench/<script>.py <tiny arguments>``, each output file and data folder (and ``TMPDIR``)
under one temporary folder, never ``bench/`` or its committed results. The times it shows
mean nothing. A script that cannot run here is in :data:`SKIPPED`, with the reason, and
so are the real-data scripts when the QVHighlights files are not found (as the tests
skip then). A script with ``__main__`` in neither fails the check, so a new one gets a
row here. crepes and MAPIE (the ``bench`` extra) and the peer environments are optional:
the scripts say "not installed" / "no environment" in their rows and still run.

    .venv/bin/python bench/smoke.py [--only run,stream] [--timeout 120]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
PREDS = "qvhighlights/qd_detr/video_checkpoint_best_hl_val_preds.jsonl"
GT = "qvhighlights/annotations/highlight_val_release.jsonl"
#: Every command of bench/scaling_files.py (its default runs only the clean-row ones).
FILE_COMMANDS = ("calibrate jsonl,calibrate jsonl in memory,calibrate parquet,certify jsonl "
                 "NORM,certify jsonl SLS,certify parquet NORM,certify jsonl --videos,evaluate "
                 "jsonl,calibrate jsonl all clipped,certify jsonl NORM all clipped,evaluate "
                 "jsonl all clipped")

#: script -> its tiny arguments; ``{t}`` is the script's own temporary folder, ``{data}``
#: the real-data folder.
RUNS: dict[str, list[str]] = {
    # no peer environment under --root: the puncc/TorchCP rows say so (as in CI)
    "run": "--max-rows 1e3 --repeats 1 --scan-max 20 --root {t}/no-envs --out {t}/r.md".split(),
    "scaling": "--sizes 1e3 --max-sls-rows 1e3 --repeats 1 --out {t}/r.md".split(),
    "mondrian": "--scan-max 20 --alphas 0.1 --repeats 1 --out {t}/r.md".split(),
    "stream": ("--rows 1e3 --batch-rows 256 --jsonl-rows 300 --jsonl-batch-rows 128 "
               "--repeats 1 --dir {t}/files --out {t}/r.md").split(),
    "stream_stages": "--rows 300 --batch-rows 128 --repeats 1 --dir {t}/files".split(),
    "stream_scaling": ("--sizes 1e3,2e3 --batch-rows 256 --repeats 1 --dir {t}/files "
                       "--out {t}/r.md").split(),
    "evaluate_tables": ("--rows 1e3 --batch-rows 256 --repeats 1 --dir {t}/files "
                        "--out {t}/r.md").split(),
    "evaluate_qvh": "{data} --rows 2e3 --repeats 1 --dir {t}/files --out {t}/r.md".split(),
    "scaling_files": [*"--sizes 1e3 --dir {t}/files --out {t}/r.md".split(),
                      "--only", FILE_COMMANDS],
    "inmemory": "--sizes 1e3 --repeats 1".split(),
    "latency": "--calls 200 --timeit-calls 200 --out {t}/r.md".split(),
    "long_line": "--sizes 1 --repeat 1 --parse".split(),
    "highlight_ranks": "--clips 100 300 --repeats 1 --out {t}/r.md".split(),
    "study_seeds": "--seeds 1 --out {t}/r.md".split(),
    "cli_start": "--rounds 1 --out {t}/r.md".split(),
    "serve_load": "--requests 20 --batch-rows 10 --clients 1 4 --out {t}/r.md".split(),
    # without conditionalconformal (its own environment): the direct LP is the reference
    "conditional": "{data} --reference-rows 5 --out {t}/r.md".split(),
}
#: script -> why the smoke check does not run it.
SKIPPED: dict[str, str] = {
    "peer_envs": "creates the peer environments: pip installs from the network, minutes",
    "peer_worker": "not a command: the worker peer_client.py starts "
                   "(tests/test_bench_peer_client.py runs it)",
}
#: Scripts that read the real QVHighlights val files.
REAL_DATA = ("study_seeds", "cli_start", "conditional", "evaluate_qvh")


def scripts() -> list[str]:
    """Every script of bench/ that runs as a command (has a ``__main__`` block)."""
    return sorted(p.stem for p in BENCH.glob("*.py")
                  if p.name != "smoke.py" and '__name__ == "__main__"' in p.read_text())


def real_data() -> Path | str:
    """The real-data folder, or why the real-data scripts cannot run here."""
    from cover.errors import InputError
    from cover.io.datasets import find_data_dir

    try:
        return Path(find_data_dir(need=(GT, PREDS)))
    except InputError:
        return "the real QVHighlights val files are not found (../shared/data, $COVER_DATA_DIR)"


def run(name: str, tmp: Path, data: Path | str, timeout: float) -> tuple[bool, str]:
    """Run one script; (passed, the end of its output when it failed)."""
    where = tmp / name
    where.mkdir()
    cmd = [sys.executable, f"bench/{name}.py",
           *(a.format(t=where, data=data) for a in RUNS[name])]
    env = {**os.environ, "TMPDIR": str(where), "MPLBACKEND": "Agg"}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the script and the servers or children it started
        out, err = proc.communicate()
        return False, f"timed out after {timeout:g} s\n{err}"
    return proc.returncode == 0, f"exit code {proc.returncode}\n{err or out}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated script names (default: all)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per script")
    args = ap.parse_args(argv)
    found = scripts()
    names = args.only.split(",") if args.only else found
    unknown = [n for n in names if n not in found]
    if unknown:
        ap.error(f"no benchmark script {', '.join(unknown)} (scripts: {', '.join(found)})")
    data = real_data() if any(n in REAL_DATA for n in names) else ""
    no_data = data if isinstance(data, str) and data else None
    failed: list[str] = []
    t_all = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cover-bench-smoke-") as tmp:
        for name in names:
            why = SKIPPED.get(name) or (no_data if name in REAL_DATA else None)
            if why:
                print(f"{name:<16} {'':>7}  skipped: {why}", flush=True)
                continue
            t0 = time.perf_counter()
            if name in RUNS:
                ok, tail = run(name, Path(tmp), data, args.timeout)
            else:
                ok, tail = False, "not in bench/smoke.py: add its tiny run to RUNS or SKIPPED"
            print(f"{name:<16} {time.perf_counter() - t0:6.1f}s  {'ok' if ok else 'FAILED'}",
                  flush=True)
            if not ok:
                failed.append(name)
                print("\n".join(f"    {line}" for line in tail.splitlines()[-30:]), flush=True)
    print(f"{len(names) - len(failed)} of {len(names)} scripts ran or were skipped, "
          f"{len(failed)} failed{': ' + ', '.join(failed) if failed else ''} "
          f"({time.perf_counter() - t_all:.0f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
