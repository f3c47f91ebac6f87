"""One very long JSON line, streamed: time and peak memory against its length.

The streamed JSON-lines reader (:func:`cover.io.lines.line_batches`) reads 4 MB at a
time. A line longer than that used to be re-joined on every read (quadratic: a 2 GB
line took 1,164 s and 10.5 GB); its reads are now kept as chunks and joined once. This
script writes a file whose middle line is ``SIZE`` MB (a JSON object with one long
saliency list), streams it in a fresh process per size, and prints the time, the time
ratio between consecutive sizes (linear: about the size ratio, 4 for 64 -> 256 MB) and
the peak resident memory over the line length (bounded: about 2-3x the line, its reads
then the joined line).

    PYTHONPATH=src python bench/long_line.py            # 64 and 256 MB
    PYTHONPATH=src python bench/long_line.py --sizes 16 64 256 --parse

``--parse`` also parses the line with the batch reader (what ``cover certify`` does next);
its memory is the parsed objects', not the reader's. Not a test: run it by hand.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = """
import resource, sys, time
from cover.io.lines import line_batches
path, parse = sys.argv[1], sys.argv[2] == "1"
t = time.perf_counter()
longest = 0
for batch in line_batches(path, 1024):
    longest = max([longest, *(len(raw) for _, raw in batch)])
    if parse:
        from cover.io.jsonl_batch import load_batch
        load_batch(path, batch, clip=2.0, on_error="reject", fast=True, keep_records=False)
took = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
print(took, peak, longest)
"""


def write_file(path: Path, mb: int) -> int:
    """A three-line file whose middle line is about ``mb`` MB; returns its length."""
    per = len(", 0.125")
    n = mb * (1 << 20) // per
    with path.open("wb") as fh:
        fh.write(json.dumps({"qid": 1, "vid": "v", "duration": 150,
                             "pred_relevant_windows": [[0, 10, 0.9]]}).encode() + b"\n")
        head = b'{"qid": 2, "vid": "v", "duration": 150, "pred_relevant_windows": [[0, 10, ' \
               b'0.9]], "pred_saliency_scores": [0.125'
        fh.write(head)
        chunk = b", 0.125" * 65536
        for _ in range(n // 65536):
            fh.write(chunk)
        fh.write(b"]}\n")
        fh.write(json.dumps({"qid": 3, "vid": "v", "duration": 150,
                             "pred_relevant_windows": [[0, 10, 0.9]]}).encode() + b"\n")
    return len(head) + (n // 65536) * len(chunk) + 3


def run(path: Path, parse: bool) -> tuple[float, int, int]:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path), "1" if parse else "0"],
                         check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1]), int(out[2])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[64, 256], help="line MB")
    ap.add_argument("--parse", action="store_true", help="also parse the line")
    ap.add_argument("--repeat", type=int, default=3,
                    help="runs per size; the fastest is reported (a shared machine's noise "
                         "only ever adds time)")
    args = ap.parse_args()
    print(f"{'line MB':>8} {'seconds':>9} {'x prev':>7} {'peak MB':>8} {'peak/line':>9}")
    prev = None
    with tempfile.TemporaryDirectory() as d:
        for mb in args.sizes:
            path = Path(d) / f"long{mb}.jsonl"
            size = write_file(path, mb)
            t0 = time.perf_counter()
            runs = [run(path, args.parse) for _ in range(max(args.repeat, 1))]
            took, peak, longest = min(runs)
            assert longest >= size - 3, (longest, size)
            ratio = f"{took / prev:7.2f}" if prev else f"{'':>7}"
            print(f"{size / 2**20:8.0f} {took:9.2f} {ratio} {peak / 2**20:8.0f} "
                  f"{peak / size:9.2f}   (wall {time.perf_counter() - t0:.1f} s)")
            prev = took
            path.unlink()


if __name__ == "__main__":
    main()
