"""What one ``cover calibrate`` run was asked (:class:`CalibrateJob`), and the
:class:`~cover.calibrate.Calibrator` settings its rule and grouping flags turn into: a
flag of another rule, or a grouping flag the rule does not read, is an error."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from cover.data.table import GroundingTable
from cover.errors import InputError

#: The grouping each rule uses when ``--groups`` is not given (SPEC §4 defaults).
DEFAULT_GROUPS = {"mondrian": "pred_length", "buckets": "duration",
                  "weighted": "covariate_cells"}


@dataclass(frozen=True)
class CalibrateJob:
    """The arguments of one ``cover calibrate`` run (the rule and grouping options as
    given on the command line, None where not given)."""

    preds: str
    gt: str
    output: str
    score: str
    alpha: str
    min_scale: float
    target: str
    rule: str
    groups: str
    bound: str | None = None
    qids: str | None = None
    clip: float = 2.0
    strict: bool = False
    on_error: Literal["raise", "reject"] = "raise"
    keep_scores: bool = False
    in_memory: bool = False
    batch_rows: int = 16_384
    no_band: bool = False
    formats: dict[str, Any] = field(default_factory=dict)
    shift_to: str | None = None
    delta: float | None = None
    side_weights: str | None = None
    covariates: str | None = None
    max_share: float | None = None
    max_abstain: float | None = None
    score_cutoffs: str | None = None
    group_key: str | None = None
    edges: list[float] | None = None
    fallback: str | None = None
    min_group_rows: int | None = None
    covariate: str = "duration"


def rule_params(job: CalibrateJob) -> dict[str, Any]:
    """The rule options given (a flag of another rule is an error), as the rule reads
    them: ``--side-weights WS,WE`` -> ``weights``, comma lists -> lists."""
    given = {"delta": job.delta, "bound": job.bound, "weights": job.side_weights,
             "covariates": job.covariates,
             "max_share": job.max_share, "max_abstain": job.max_abstain,
             "score_cutoffs": job.score_cutoffs}
    wants = {"rcps": {"delta", "bound"}, "asymmetric": {"weights"},
             "conditional": {"covariates"},
             "ltt": {"delta", "bound", "max_share", "max_abstain", "score_cutoffs"}
             }.get(job.rule, set())
    stray = sorted(k for k, v in given.items() if v is not None and k not in wants)
    if stray:
        flags = {k: "--" + k.replace("_", "-") for k in given} | {"weights": "--side-weights"}
        raise InputError(f"{', '.join(flags[k] for k in stray)} does not apply to --rule "
                         f"{job.rule}")
    params: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    if "weights" in params:
        try:
            ws, we = (float(x) for x in params["weights"].split(","))
        except ValueError:
            raise InputError(f"--side-weights must be two numbers WS,WE, got "
                             f"{params['weights']!r}") from None
        params["weights"] = {"start": ws, "end": we}
    if "covariates" in params:
        from cover.calibrate.covariates import parse_covariates

        try:
            params["covariates"] = parse_covariates(params["covariates"])
        except ValueError as exc:
            raise InputError(str(exc)) from None
    if "score_cutoffs" in params:
        try:
            params["score_cutoffs"] = [float(x) for x in params["score_cutoffs"].split(",")]
        except ValueError:
            raise InputError(f"--score-cutoffs must be numbers C1,C2,.., got "
                             f"{params['score_cutoffs']!r}") from None
    return params


def group_settings(job: CalibrateJob, table: GroundingTable
                   ) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """``(Calibrator keyword arguments, fit keyword arguments, lines to print)`` of the
    grouping flags for the calibration rows ``table``."""
    rule, groups = job.rule, job.groups
    gp: dict[str, Any] = {}
    if groups == "key":
        if not job.group_key:
            raise InputError("--groups key needs --group-key FIELD")
        gp["field"] = job.group_key
    if job.edges is not None:
        if groups != "duration":
            raise InputError("--edges applies to --groups duration")
        gp["edges"] = job.edges
    params: dict[str, Any] = {}
    if job.fallback is not None:
        if rule != "mondrian":
            raise InputError("--fallback applies to --rule mondrian (buckets always pools)")
        params["fallback"] = job.fallback
    if job.min_group_rows is not None:
        if rule not in ("mondrian", "buckets"):
            raise InputError("--min-group-rows applies to --rule mondrian or buckets")
        params["min_rows"] = job.min_group_rows
    kwargs: dict[str, Any] = {"groups": groups, "group_params": gp or None}
    if rule != "weighted":
        if job.shift_to:
            raise InputError("--shift-to applies to --rule weighted")
        return {**kwargs, "params": params or None}, {}, []
    from cover.calibrate.weighted_rule import weighted_setup
    from cover.scores import compute_scores

    if groups != "covariate_cells":
        raise InputError("--rule weighted certifies per covariate cell: use --groups "
                         "covariate_cells (the default)")
    target, names = (None, None) if not job.shift_to else \
        _target_covariate(job.shift_to, job.covariate)
    scores = compute_scores(table, job.score, min_scale=job.min_scale,
                            target=job.target).values
    ws = weighted_setup(table, target, covariate=job.covariate, alpha=job.alpha,
                        scores=scores)
    lines = (["no --shift-to target rows: likelihood ratios are 1 (split conformal)"]
             if ws.report is None else
             ws.report.lines(names, label="vid" if job.covariate == "duration" else "qid"))
    return ({"groups": groups, "group_params": ws.group_params, "params": ws.params},
            {"weights": ws.weights}, lines)


def _target_covariate(path: str, covariate: str) -> tuple[np.ndarray, np.ndarray]:
    """The covariate of the target rows with finite values, and their names (vid for
    durations, qid for predicted lengths) for the positivity report."""
    if covariate == "duration":
        from cover.io.durations import read_video_durations

        names, values = read_video_durations(path)
    else:
        from cover.calibrate.groups import predicted_length
        from cover.io import read_predictions

        table = read_predictions(path, on_error="reject").table
        names, values = table.qid, predicted_length(table)
    keep = np.isfinite(values)
    if not keep.any():
        raise InputError(f"{path}: no row with a {covariate} to reweight toward")
    return values[keep], np.asarray(names)[keep]
