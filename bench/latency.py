"""Single-row certify latency: a service certifying one prediction at a time, in process.

Run from the repository root::

    .venv/bin/python bench/latency.py --calls 20000 --out bench/results-latency.md

Times each call alone (``perf_counter_ns`` around it), contenders interleaved call by
call so load drifts hit them alike, and reports median, p99 and max in microseconds:
``cover.stream.RowCertifier`` (built once) on NORM and SLS, ``certify_row`` (builds
the certifier per call), ``Calibrator.certify`` on a one-row table built per call, and
a plain numpy expression of the same NORM region (``np.clip`` of the widened window)
as the baseline. Then ``timeit``: ``RowCertifier`` against a plain Python function
with the same checks (:func:`plain_norm`), round by round.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from markdown_out import machine_line, publish

import cover
from cover.ragged import Ragged
from cover.stream.row import RowCertifier, certify_row


def _calibrator(score: str) -> cover.Calibrator:
    rng = np.random.default_rng(1)
    k = 10_000
    ts = rng.uniform(0, 110, k)
    rel = Ragged(rng.normal(-10, 2, k * 75), np.arange(k + 1, dtype=np.int64) * 75)
    # Both ends inside [0, 150] and in order (the validator rejects a reversed window).
    a = np.clip(ts + rng.normal(0, 4, k), 0.0, 150.0)
    b = np.clip(ts + 20 + rng.normal(0, 4, k), 0.0, 150.0)
    t = cover.GroundingTable.from_arrays(
        qid=np.arange(k), duration=150.0, pred_start=np.minimum(a, b),
        pred_end=np.maximum(a, b), truth=(ts, ts + 20), relevance=rel)
    return cover.Calibrator(score=score, alpha=0.1).fit(t)


def plain_norm(lam: float, floor: float) -> Callable[[float, float, float], list[list[float]]]:
    """The baseline of ``RowCertifier``: a plain Python function with the same checks
    (numbers, not booleans or text; a finite duration > 0; a NaN side is a refusal; no
    infinite side; start <= end; a window wholly outside the video refused, one partly
    outside clipped) and the same NORM widening."""

    def certify(s: float, e: float, t: float) -> list[list[float]]:
        if type(s) is not float or type(e) is not float or type(t) is not float:
            for x in (s, e, t):  # ints and numpy numbers pass; text and booleans do not
                if not isinstance(x, (int, float)) or isinstance(x, bool):
                    raise ValueError("not a number")
            s, e, t = float(s), float(e), float(t)
        if not 0.0 < t < math.inf:
            raise ValueError("duration must be a finite number > 0")
        if s != s or e != e:
            return [[0.0, t]]
        if s == math.inf or s == -math.inf or e == math.inf or e == -math.inf or s > e:
            raise ValueError("bad window")
        if s < 0 or e > t:
            if e < 0 or s > t or (e > s and (e <= 0 or s >= t)):
                raise ValueError("window outside the video")
            s, e = min(max(s, 0.0), t), min(max(e, 0.0), t)
        w = lam * max(e - s, floor)
        return [[max(s - w, 0.0), min(e + w, t)]]

    return certify


def plain_sls(lam: float, clip: float) -> Callable[..., list[list[float]]]:
    """The SLS baseline of ``RowCertifier``: the duration checked as :func:`plain_norm`
    does (the window is not read by SLS), every relevance value a finite number, then
    the clips starting before ``T`` whose value is at least ``-lam``, merged into runs,
    in a Python loop."""

    def certify(s: float, e: float, t: float, saliency: list[float]) -> list[list[float]]:
        if type(t) is not float or not 0.0 < t < math.inf:
            raise ValueError("duration must be a finite number > 0")
        for v in saliency:
            if type(v) is not float or not -math.inf < v < math.inf:
                raise ValueError("relevance values must be finite numbers")
        if not saliency:
            return [[0.0, t]]
        used = 0
        while used < len(saliency) and used * clip < t:  # clips starting before T
            used += 1
        out: list[list[float]] = []
        run = -1
        for i in range(used + 1):
            if i < used and saliency[i] >= -lam:
                if run < 0:
                    run = i
            elif run >= 0:
                out.append([run * clip, min(i * clip, t)])
                run = -1
        return out

    return certify


def timeit_ratio(score: str = "norm", rounds: int = 15, number: int = 20_000
                 ) -> tuple[float, float, float, float]:
    """``RowCertifier`` against the plain function of ``score`` (:func:`plain_norm`,
    :func:`plain_sls`: 75 clips) with ``timeit``, the two in turn round by round:
    (plain µs, RowCertifier µs, median ratio, max ratio)."""
    import timeit

    cal = _calibrator(score)
    cert = RowCertifier(cal)
    lam = float(cal.threshold_ or 0.0)
    sal = np.random.default_rng(0).normal(-lam, 2, 75).tolist()  # runs of kept clips
    p: Callable[[], object]
    f: Callable[[], object]
    if score == "norm":
        plain = plain_norm(lam, float(cal.min_scale))
        p, f = lambda: plain(12.5, 30.0, 150.0), lambda: cert(12.5, 30.0, 150.0)
    else:
        assert cal.clip_ is not None  # an SLS calibrator knows its clip length
        plain_s = plain_sls(lam, float(cal.clip_))
        p = lambda: plain_s(12.5, 30.0, 150.0, sal)  # noqa: E731
        f = lambda: cert(12.5, 30.0, 150.0, saliency=sal)  # noqa: E731
    assert p() == f() != [[0.0, 150.0]]
    a, b = [], []
    for _ in range(rounds):
        a.append(timeit.timeit(p, number=number) / number)
        b.append(timeit.timeit(f, number=number) / number)
    ratios = sorted(y / x for x, y in zip(a, b, strict=True))
    return (statistics.median(a) * 1e6, statistics.median(b) * 1e6,
            statistics.median(ratios), ratios[-1])


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
    ap.add_argument("--timeit-calls", type=int, default=20_000,
                    help="calls per timeit round (15 rounds)")
    ap.add_argument("--timeit-only", action="store_true",
                    help="only the timeit comparison with the plain function (one line; to "
                         "compare source trees: PYTHONPATH=<tree>/src)")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    if args.timeit_only:
        for score in ("norm", "sls"):
            plain_us, row_us, med, worst = timeit_ratio(score, number=args.timeit_calls)
            print(f"{score.upper()}: plain function {plain_us:.2f} µs, RowCertifier "
                  f"{row_us:.2f} µs: {med:.2f}x (worst round {worst:.2f}x); cover from "
                  f"{Path(cover.__file__).parent}")
        return 0
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
    extra = f" --timeit-calls {args.timeit_calls}" if args.timeit_calls != 20_000 else ""
    lines = [f"Command: `.venv/bin/python bench/latency.py --calls {args.calls}{extra}`", "",
             machine_line(load0) + f"; {args.calls:,} calls per contender, interleaved",
             "",
             "| contender | median (µs) | p99 (µs) | max (µs) | median / numpy |",
             "|---|---|---|---|---|"]
    for name, ts in times.items():
        q = np.percentile(np.asarray(ts, dtype=np.float64), [50, 99]) / 1e3
        lines.append(f"| {name} | {q[0]:.1f} | {q[1]:.1f} | {max(ts) / 1e3:.0f} | "
                     f"{statistics.median(ts) / base:.2f}x |")
    lines += ["", f"`timeit` (15 rounds of {args.timeit_calls:,} calls, the two in turn; "
              "the same wrapper around each): a plain Python function with the same checks "
              "and the same region (`plain_norm`, `plain_sls` in `bench/latency.py`; SLS "
              "on 75 clips) against `RowCertifier`.", "",
              "| score | plain function (µs) | RowCertifier (µs) | ratio, median of rounds "
              "| worst round |", "|---|---|---|---|---|"]
    for score in ("norm", "sls"):
        plain_us, row_us, med, worst = timeit_ratio(score, number=args.timeit_calls)
        lines.append(f"| {score.upper()} | {plain_us:.2f} | {row_us:.2f} | {med:.2f}x | "
                     f"{worst:.2f}x |")
    return publish(lines, args.out)


if __name__ == "__main__":
    raise SystemExit(main())
