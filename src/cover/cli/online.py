"""``cover online``: replay a labelled file as a stream through online ACI (and the fixed
split-conformal threshold), writing the per-step record and a rolling miss-rate figure."""

from __future__ import annotations

import argparse
from pathlib import Path

from cover.cli._common import InputPath, OutputFolder, Subparsers, add_command, alpha_text


def _gamma(text: str) -> str:
    """argparse type: the step size as written (exact arithmetic later)."""
    from cover.calibrate.online import as_gamma

    try:
        as_gamma(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_parser(sub: Subparsers) -> None:
    from cover.calibrate.online import DEFAULT_GAMMA
    from cover.jobs.online import DEFAULT_WINDOW, ORDERS
    from cover.scores import FAMILIES, TARGETS

    p = add_command(sub, "online", help="replay a labelled file as a stream through online ACI",
                    description="Calibrate on a share of the source videos, then replay the "
                    "other rows one at a time through adaptive conformal inference (ACI), "
                    "writing the running miss rate, threshold and a figure.",
                    example="cover online --preds preds.jsonl --gt gt.jsonl --out-dir online "
                    "--order random")
    p.add_argument("--preds", required=True, type=InputPath,
                   help="prediction jsonl (Moment-DETR format)")
    p.add_argument("--gt", required=True, type=InputPath,
                   help="ground-truth jsonl (QVHighlights format)")
    p.add_argument("--out-dir", required=True, type=OutputFolder, help="output folder")
    p.add_argument("--score", choices=FAMILIES, default="norm", help="score family")
    p.add_argument("--alpha", type=alpha_text, default="0.1", help="target miss rate in (0, 1)")
    p.add_argument("--gamma", type=_gamma, default=DEFAULT_GAMMA,
                   help=f"ACI step size in (0, 1) (default {DEFAULT_GAMMA})")
    p.add_argument("--order", choices=ORDERS, default="file",
                   help="stream order of the non-calibration rows")
    p.add_argument("--seed", type=int, default=42, help="split and random-order seed")
    p.add_argument("--cal-frac", type=float, default=0.4,
                   help="fraction of source videos that calibrate (default 0.4)")
    p.add_argument("--cal-qids", type=InputPath,
                   help="calibrate on these query ids instead of a split")
    p.add_argument("--switch-preds", type=InputPath,
                   help="another grounder's predictions: used for the stream from --switch-at on")
    p.add_argument("--name", help="display name of --preds (default: its file name)")
    p.add_argument("--switch-name", help="display name of --switch-preds")
    p.add_argument("--switch-at", type=float, default=0.5,
                   help="fraction of the stream after which --switch-preds is used")
    p.add_argument("--window", type=int, default=DEFAULT_WINDOW,
                   help=f"rolling miss-rate window, steps (default {DEFAULT_WINDOW})")
    p.add_argument("--min-scale", type=float, default=1.0, help="NORM scale floor, s")
    p.add_argument("--target", choices=TARGETS, default="envelope",
                   help="cover the envelope of multi-window truth, or every window")
    p.add_argument("--no-figure", action="store_true", help="skip the PNG figure")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.jobs.online import run_online

    res = run_online(
        preds=Path(args.preds), gt=Path(args.gt), out=Path(args.out_dir), alpha=args.alpha,
        gamma=args.gamma, score=args.score, order=args.order, seed=args.seed,
        cal_frac=args.cal_frac, cal_qids=Path(args.cal_qids) if args.cal_qids else None,
        switch_preds=Path(args.switch_preds) if args.switch_preds else None,
        switch_at=args.switch_at, window=args.window, min_scale=args.min_scale,
        target=args.target, figure=not args.no_figure, names=(args.name, args.switch_name),
    )
    s = res.summary()
    print(f"replayed {s['steps']} rows (order={args.order}) against {s['n_calibration']} "
          f"calibration rows at alpha={args.alpha}, gamma={args.gamma}")
    print(f"rule   miss: overall  before   after  last {s['window']:<4}  mean length, s: before "
          " after")
    for rule in ("aci", "split"):
        print(f"{rule:<6} {s[f'{rule}_miss_rate']:13.3f} {s[f'{rule}_miss_rate_before']:7.3f} "
              f"{s[f'{rule}_miss_rate_after']:7.3f} {s[f'{rule}_miss_rate_last_window']:9.3f}"
              f"  {s[f'{rule}_mean_length_s_before']:20.1f} "
              f"{s[f'{rule}_mean_length_s_after']:6.1f}")
    print(f"ACI guarantee: |miss rate - alpha| <= {s['aci_bound']:.3f} after {s['steps']} steps")
    print(f"wrote {args.out_dir}/online_steps.jsonl, online_summary.json"
          + ("" if args.no_figure else ", online_miss_rate.png"))
    return 0
