"""``cover calibrate`` flags of the group-conditional and shift-aware rules (mondrian,
buckets, weighted) and the Calibrator settings they turn into."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from cover.cli._common import InputPath
from cover.data.table import GroundingTable
from cover.errors import InputError

#: The grouping each rule uses when ``--groups`` is not given (SPEC §4 defaults).
DEFAULT_GROUPS = {"mondrian": "pred_length", "buckets": "duration",
                  "weighted": "covariate_cells"}


def _edges(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"edges must be numbers separated by commas, "
                                         f"got {text!r}") from None


def add_group_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("groups and covariate shift (rules mondrian, buckets, weighted)")
    g.add_argument("--groups", help="grouping: all, pred_length (terciles), duration "
                   "(buckets), key (--group-key), covariate_cells; default per rule: "
                   + ", ".join(f"{r} -> {k}" for r, k in DEFAULT_GROUPS.items()))
    g.add_argument("--group-key", help="field or column to group by (--groups key)")
    g.add_argument("--edges", type=_edges, help="duration bucket edges in seconds, e.g. 60,120 "
                   "(default: 2 equal-count buckets of the calibration durations)")
    g.add_argument("--fallback", choices=("pool", "inf"), default=None,
                   help="mondrian: a group too small for its own threshold uses the pooled "
                   "threshold (default) or +inf")
    g.add_argument("--min-group-rows", type=int, default=None,
                   help="mondrian/buckets: groups with fewer calibration rows fall back too")
    g.add_argument("--shift-to", type=InputPath,
                   help="weighted: unlabelled target rows to reweight toward "
                   "(jsonl with vid + duration, or predictions for --covariate pred_length)")
    g.add_argument("--covariate", choices=("duration", "pred_length"), default="duration",
                   help="weighted: the covariate of the likelihood ratio (default duration)")


def group_settings(args: argparse.Namespace, table: GroundingTable
                   ) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """``(Calibrator keyword arguments, fit keyword arguments, lines to print)``."""
    rule = args.rule
    groups = args.groups or DEFAULT_GROUPS.get(rule, "all")
    gp: dict[str, Any] = {}
    if groups == "key":
        if not args.group_key:
            raise InputError("--groups key needs --group-key FIELD")
        gp["field"] = args.group_key
    if args.edges is not None:
        if groups != "duration":
            raise InputError("--edges applies to --groups duration")
        gp["edges"] = args.edges
    params: dict[str, Any] = {}
    if args.fallback is not None:
        if rule != "mondrian":
            raise InputError("--fallback applies to --rule mondrian (buckets always pools)")
        params["fallback"] = args.fallback
    if args.min_group_rows is not None:
        if rule not in ("mondrian", "buckets"):
            raise InputError("--min-group-rows applies to --rule mondrian or buckets")
        params["min_rows"] = args.min_group_rows
    kwargs: dict[str, Any] = {"groups": groups, "group_params": gp or None}
    if rule != "weighted":
        if args.shift_to:
            raise InputError("--shift-to applies to --rule weighted")
        return {**kwargs, "params": params or None}, {}, []
    from cover.calibrate.weighted_rule import weighted_setup
    from cover.scores import compute_scores

    if groups != "covariate_cells":
        raise InputError("--rule weighted certifies per covariate cell: use --groups "
                         "covariate_cells (the default)")
    target, names = (None, None) if not args.shift_to else \
        _target_covariate(args.shift_to, args.covariate)
    scores = compute_scores(table, args.score, min_scale=args.min_scale,
                            target=args.target).values
    ws = weighted_setup(table, target, covariate=args.covariate, alpha=args.alpha,
                        scores=scores)
    lines = (["no --shift-to target rows: likelihood ratios are 1 (split conformal)"]
             if ws.report is None else
             ws.report.lines(names, label="vid" if args.covariate == "duration" else "qid"))
    return ({"groups": groups, "group_params": ws.group_params, "params": ws.params},
            {"weights": ws.weights}, lines)


def _target_covariate(path: str, covariate: str) -> tuple[np.ndarray, np.ndarray]:
    """The covariate of the target rows with finite values, and their names (vid for
    durations, qid for predicted lengths) for the positivity report."""
    if covariate == "duration":
        from cover.io import read_durations

        names, values = read_durations(path)
    else:
        from cover.calibrate.groups import predicted_length
        from cover.io import read_predictions

        table = read_predictions(path, on_error="reject").table
        names, values = table.qid, predicted_length(table)
    keep = np.isfinite(values)
    if not keep.any():
        raise InputError(f"{path}: no row with a {covariate} to reweight toward")
    return values[keep], np.asarray(names)[keep]
