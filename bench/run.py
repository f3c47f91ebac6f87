"""COVER vs numpy / crepes / MAPIE / puncc / TorchCP: calibration, certification, evaluation.

Run from the repository root::

    .venv/bin/python bench/run.py                      # default: about 5 minutes on 2 cores
    .venv/bin/python bench/run.py --sizes 1000 10000 --repeats 3 --out /tmp/r.md
    .venv/bin/python bench/run.py --max-rows 1e4 --repeats 2 --out /tmp/r.md   # quick check
    .venv/bin/python bench/run.py --root ../main/bench/.envs ...   # another checkout's peers

Every implementation runs on the SAME arrays in the SAME process, and the contenders
of one cell are timed in interleaved rounds (see ``timing.py``), so a drift of the
machine hits all of them alike. Ratios are ``time / time(COVER)``, taken round by
round: above 1 means slower than COVER. See bench/README.md for what each row measures.

The modules beside this one: ``workloads`` (synthetic and real data), ``baselines``
(plain numpy), ``peers`` (crepes, MAPIE), ``timing``, ``results`` (tables), ``stages``
(what is timed) and ``agreement`` (peers' thresholds vs the exact order statistic).
crepes and MAPIE are optional (``pip install -e '.[bench]'``); missing peers are
reported as "not installed". puncc and TorchCP run in environments of their own
(``peer_envs.py`` creates them), each in a worker process (``peer_worker.py``) that
takes its turn in every round (``peer_client.py``, ``peer_rows.py``); a missing
environment is reported with the command that creates it. Nothing here is imported by
the package; the tests import only the worker protocol.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

import mondrian_stage
import numpy as np
import peer_envs
import pipeline
import stages
from agreement import agreement, scan
from peer_rows import Peers
from peers import _version
from results import Stage
from workloads import GT_VAL, N_CLIPS, QD_DETR, load_real, synthetic

import cover
from cover.io.datasets import find_data_dir
from cover.io.output import write_text

N_CAL_CERT = 1000  # calibration rows behind the thresholds used in certification


def _stages() -> tuple[Stage, Stage, Stage]:
    """Tables a), b) and c), empty."""
    calib = Stage(
        "a) Calibration: threshold from n NORM scores, alpha = 0.1",
        "Ratio = time / COVER `split_conformal` (threshold rows) or / COVER "
        "`Calibrator.fit` (rows that also compute the scores from the table). crepes and "
        "MAPIE are handed the same scores as residuals, clamped at 0 outside the timing "
        "(they use |residual|; `max(S, 0)` keeps the k-th order statistic when q >= 0); "
        "their threshold is read off a one-row interval at prediction 0. puncc and TorchCP "
        "run in environments of their own (`bench/peer_envs.py`; puncc needs numpy < 2), "
        "in a worker process that times its own calls and takes its turn in every round; "
        "the numpy row of such an environment is the float-ceil + `np.partition` script at "
        "that environment's numpy version.")
    cert = Stage(
        "b) Certification: regions for m test rows at a fixed threshold",
        f"Thresholds from {N_CAL_CERT} synthetic calibration rows (real column: from the "
        "QVHighlights calibration split). Ratio = time / COVER `build_regions` of the same "
        "family. crepes/MAPIE are fitted once outside the timing; the timed call is their "
        "interval prediction (+ the per-row clip to [0, T] they cannot do themselves). "
        "The dense numpy SLS baseline gets the relevance as an (m, clips) matrix, built "
        "outside the timing.")
    evals = Stage(
        "c) Evaluation: coverage and length of the NORM regions",
        "Ratio = time / COVER `evaluate` on the same regions. COVER computes the whole "
        "metric set for unions of intervals (coverage, miss rate, length, length/T, IoU, "
        "components, refusal split, the grounder's point-IoU). The first numpy row is "
        "coverage + mean length only; the second adds length/T, IoU and point-IoU, all for "
        "one interval per row.")
    return calib, cert, evals


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[1e3, 1e4, 1e5, 1e6],
                    help="calibration sizes n and test sizes m (default 1e3 1e4 1e5 1e6)")
    ap.add_argument("--repeats", type=int, default=7,
                    help="interleaved rounds per cell (min, median, max reported)")
    ap.add_argument("--max-sls-rows", type=float, default=1e5,
                    help="largest m for SLS certification (75 clips per row; default 1e5)")
    ap.add_argument("--scan-max", type=int, default=1000,
                    help="agreement scan over every n in 1..N (0 to skip; default 1000)")
    ap.add_argument("--scan-alphas", type=float, nargs="+", default=[0.05, 0.1, 0.2, 0.7],
                    help="alphas of the scan (0.7 is the README's float example)")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="folder holding qvhighlights/... (default: ../shared/data); the "
                         "real-data column is skipped when absent")
    ap.add_argument("--no-real", action="store_true", help="skip the real-data column")
    ap.add_argument("--pipeline-cal", type=float, nargs="*", default=[1e4, 1e5, 1e6, 1e7],
                    help="n_cal of the calibrate + certify table d) (none: skip d)")
    ap.add_argument("--pipeline-test", type=float, nargs="*", default=[1e6, 1e7],
                    help="test rows m of table d)")
    ap.add_argument("--mondrian-groups", type=int, nargs="*", default=[10, 100],
                    help="group counts of the Mondrian table e) (none: skip e)")
    ap.add_argument("--mondrian-rows", type=float, nargs=2, default=[1e6, 1e6],
                    metavar=("N_CAL", "M"), help="calibration and test rows of table e)")
    ap.add_argument("--peers", nargs="*", default=list(peer_envs.SPECS),
                    choices=list(peer_envs.SPECS), metavar="PEER",
                    help="peers in environments of their own, run in worker processes "
                         "(default: puncc torchcp; none: skip them)")
    peer_envs.add_root_flag(ap)
    ap.add_argument("--max-rows", type=float, default=None,
                    help="cap every size at this (--sizes, --pipeline-cal, --pipeline-test, "
                         "--mondrian-rows, --max-sls-rows; duplicates dropped): a quick run "
                         "of every table, e.g. --max-rows 1e5")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("results.md"))
    args = ap.parse_args(argv)
    peer_envs.set_root(args.root)
    if args.max_rows is not None:
        def capped(xs: list[float]) -> list[float]:
            return list(dict.fromkeys(min(x, args.max_rows) for x in xs))
        args.sizes, args.pipeline_cal, args.pipeline_test = (
            capped(args.sizes), capped(args.pipeline_cal), capped(args.pipeline_test))
        args.mondrian_rows = [min(x, args.max_rows) for x in args.mondrian_rows]
        args.max_sls_rows = min(args.max_sls_rows, args.max_rows)
    sizes = [int(x) for x in args.sizes]
    max_sls = int(args.max_sls_rows)
    rng = np.random.default_rng(args.seed)
    t_start = time.perf_counter()
    load0 = os.getloadavg()[0]

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t_start:6.1f}s] {msg}", file=sys.stderr, flush=True)

    peers = Peers(args.peers, log)
    try:
        return _run(args, argv, sizes, max_sls, rng, log, peers, load0)
    finally:
        peers.close()


def _run(args: argparse.Namespace, argv: list[str] | None, sizes: list[int], max_sls: int,
         rng: np.random.Generator, log: Callable[[str], None], peers: Peers,
         load0: float) -> int:
    calib, cert, evals = _stages()
    for n in sizes:
        log(f"calibration n={n}")
        stages.calibration(calib, synthetic(n, rng), args.repeats, peers)
    cal_cert = synthetic(N_CAL_CERT, rng, clips=N_CLIPS)
    th = stages.thresholds(cal_cert)
    for m in sizes:
        log(f"certification + evaluation m={m}")
        d = synthetic(m, rng, clips=N_CLIPS if m <= max_sls else 0)
        regions = stages.certification(cert, d, th, args.repeats, max_sls)
        stages.evaluation(evals, d, regions, th, args.repeats)
        del d, regions

    pipe = Stage(pipeline.TITLE, pipeline.NOTE)
    for m in (int(x) for x in args.pipeline_test):
        test = synthetic(m, rng)
        for n in (int(x) for x in args.pipeline_cal):
            log(f"calibrate + certify n_cal={n} m={m}")
            pipeline.calibrate_certify(pipe, synthetic(n, rng), test, args.repeats, peers)
        del test
    mond = Stage(mondrian_stage.TITLE, mondrian_stage.NOTE)
    if args.mondrian_groups:
        n_cal, m_mond = (int(x) for x in args.mondrian_rows)
        cal_m, test_m = synthetic(n_cal, rng), synthetic(m_mond, rng)
        for g in args.mondrian_groups:
            log(f"mondrian G={g}")
            mondrian_stage.mondrian(mond, cal_m, test_m, g, args.repeats, rng)
        del cal_m, test_m

    real_note = "real data: not used (--no-real)"
    if not args.no_real:
        try:
            real = load_real(find_data_dir(args.data_dir) / "qvhighlights")
        except cover.InputError:
            real = None
        if real is None:
            real_note = f"real data: not found under {args.data_dir}; column skipped"
            log(real_note)
        else:
            cal_r, test_r = real
            log(f"real data: {cal_r.label}, {test_r.label}")
            real_note = (f"real data: QD-DETR video checkpoint predictions on QVHighlights val "
                         f"({QD_DETR}), truth from {GT_VAL}, split by video 40/60 (seed 42): "
                         f"{len(cal_r.table)} calibration rows, {len(test_r.table)} test rows")
            stages.calibration(calib, cal_r, args.repeats, peers)
            th_r = stages.thresholds(cal_r)
            regions = stages.certification(cert, test_r, th_r, args.repeats, max_sls)
            stages.evaluation(evals, test_r, regions, th_r, args.repeats)

    log("agreement")
    agree_ns, agree_alphas = [9, 19, 29, 99, 999], [0.1, 0.05]
    agree = agreement(agree_ns, agree_alphas, rng, peers)
    scan_md = ""
    if args.scan_max > 0:
        log(f"agreement scan n=1..{args.scan_max}")
        scan_md = scan(args.scan_max, args.scan_alphas, peers)
    for st in (calib, cert, evals, pipe, mond):
        st.finish()

    versions = ", ".join(f"{d} {_version(d) or 'not installed'}" for d in
                         ("cover-grounding", "numpy", "crepes", "mapie", "scikit-learn"))
    versions = "; ".join([versions, *peers.versions()])
    parts = [
        "## COVER benchmark results",
        "",
        f"- generated {_dt.datetime.now().isoformat(timespec='seconds')} by "
        f"`{' '.join(['bench/run.py', *(sys.argv[1:] if argv is None else argv)])}`",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {platform.system()}; 1-minute load average "
        f"{load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end (shared cores)",
        f"- versions: {versions}",
        f"- {args.repeats} interleaved rounds per cell (every contender once per round, "
        "`time.perf_counter`): median [min–max] seconds per call, and the median "
        "round-by-round ratio to the COVER reference with its min–max; synthetic columns "
        "are labelled by n (or m), BLAS/thread settings left as found",
        f"- {real_note}",
        "",
        calib.markdown(), "", cert.markdown(), "", evals.markdown(), "",
        *([pipe.markdown(), "", pipeline.scripts()] if pipe.columns else []),
        *([mond.markdown(), ""] if mond.columns else []),
        "### Agreement with COVER's exact k-th order statistic",
        "",
        "Each cell is the rank (1-based, among the n scores) of the threshold that "
        "implementation returns; COVER returns rank `k = ceil((n + 1)(1 - alpha))` in "
        "exact rational arithmetic. Scores are distinct positive draws (so the absolute "
        "residuals crepes/MAPIE use change nothing). `inf` = whole-video region; "
        "raises = the library refuses with an error (a disagreement when COVER's k <= n).",
        "",
        agree,
    ]
    if scan_md:
        parts += ["", f"Scan over every n = 1..{args.scan_max} (scores 1..n):", "", scan_md]
    md = "\n".join(parts) + "\n"
    print(md)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text(args.out, md)
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
