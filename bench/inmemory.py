"""The in-memory user path against the numpy scripts of table d), for one source tree.

Run from the repository root, once per tree to compare (e.g. before and after a change)::

    PYTHONPATH=src .venv/bin/python bench/inmemory.py --sizes 1e6 1e7

Per size n (n_cal = m = n, NORM, alpha = 0.1): ``GroundingTable.from_arrays`` (both
tables, ids made outside the timing) + ``Calibrator.fit`` + ``certify``, against the
tuned in-place numpy script (with ``np.partition``, and with the sampled select of
``baselines.np_sampled_select``), the shortest correct script and the copy floor of
``bench/baselines.py``, in interleaved rounds; prints the median seconds and the
median round-by-round ratio COVER / contender. Only the ``cover`` package comes from
``PYTHONPATH``: the numpy scripts and the data are this folder's, so two trees are
compared on the same work.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from baselines import np_copy_floor, np_shortest, np_tuned
from timing import Contender, interleaved, ratio
from workloads import short, synthetic

import cover


def cell(n: int, repeats: int) -> str:
    """One Markdown row: n_cal = m = n, every contender on the same arrays."""
    rng = np.random.default_rng(0)
    cal, test = synthetic(n, rng), synthetic(n, rng)
    ids = (np.arange(n), np.arange(n))

    def user() -> cover.Regions:
        a = cover.GroundingTable.from_arrays(qid=ids[0], duration=cal.T, pred_start=cal.ps,
                                             pred_end=cal.pe, truth=(cal.ts, cal.te))
        b = cover.GroundingTable.from_arrays(qid=ids[1], duration=test.T,
                                             pred_start=test.ps, pred_end=test.pe)
        return cover.Calibrator(score="norm", alpha=0.1).fit(a).certify(b)

    cs = [Contender("cover", user), Contender("tuned", lambda: np_tuned(cal, test, 0.1)),
          Contender("sampled", lambda: np_tuned(cal, test, 0.1, sampled=True)),
          Contender("shortest", lambda: np_shortest(cal, test, 0.1)),
          Contender("floor", lambda: np_copy_floor(cal, test))]
    t = interleaved(cs, repeats)
    got = cs[0].result.intervals
    for script in cs[1:3]:
        assert np.array_equal(got.starts, script.result[0]) and np.array_equal(
            got.ends, script.result[1]), f"COVER and the {script.name} script disagree"
    ref = t["cover"]
    cells = [f"{ref.median * 1e3:.1f} ms"]
    for name in ("tuned", "sampled", "shortest", "floor"):
        cells += [f"{t[name].median * 1e3:.1f} ms", f"{ratio(ref, t[name])[1]:.2f}×"]
    return f"| {short(n)} | " + " | ".join(cells) + " |"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[1e6, 1e7])
    ap.add_argument("--repeats", type=int, default=9)
    args = ap.parse_args()
    print(f"cover from {os.path.dirname(cover.__file__)}; 1-minute load average "
          f"{os.getloadavg()[0]:.1f}")
    print("| n | COVER user path | tuned | COVER / tuned | tuned, sampled select | "
          "COVER / tuned, sampled | shortest | COVER / shortest | floor | COVER / floor |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n in (int(x) for x in args.sizes):
        print(cell(n, args.repeats), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
