"""``cover evaluate``: score certified regions against the ground truth.

One implementation, :func:`cover.stream.evaluate.evaluate_stream`: the regions file
(JSON lines, Parquet or CSV, the output of ``cover certify``) is streamed a batch at a
time, or read as one batch (``--in-memory``, a JSON array file, and regions whose qids
need the join on (vid, query text), which the stream hands back); the numbers are the
same bit for bit. This module reads the ground truth, applies ``--on-error``, warns,
prints the summary and writes the JSON.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from cover.errors import (
    CoverWarning,
    InputError,
    ProblemTally,
    RowProblem,
    rejection_kinds,
    report_problems,
    say,
)
from cover.grounding_metrics import GroundingMetrics
from cover.io.jsonl import OnError, raise_on_rejections
from cover.io.opener import json_array
from cover.metrics import Evaluation

if TYPE_CHECKING:
    from cover.io.row_checks import RejectedRows
    from cover.io.truth_index import CompactTruth
    from cover.stream.evaluate import StreamedEvaluation


@dataclass(frozen=True)
class EvaluateFiles:
    """The files and options of one ``cover evaluate`` run."""

    regions: str
    gt: str
    json: str | None = None
    gt_format: str | None = None
    gt_columns: str | None = None
    gt_durations: str | None = None
    columns: str | None = None
    target: str = "envelope"
    refusal_policy: str = "whole-video"
    on_error: OnError = "raise"
    in_memory: bool = False
    batch_rows: int = 16_384
    #: CSV regions: the calibrator certify used (its fields, for the test band).
    calibrator: str | None = None
    #: JSON-lines regions: the named layout their predictions were read in (where each
    #: row's base prediction is: :func:`cover.io.regions_windows.layout_sources`; else
    #: detected from the first row, :func:`cover.io.regions_windows.detected_layout`).
    pred_format: str | None = None
    #: Covariates for worst-slab coverage and coverage gap (kept per row when given).
    diagnostics: tuple[str, ...] = ()
    #: ``--relevance-from``: must be the source the regions' calibrator was fitted on.
    relevance_from: str | None = None


def evaluate_files(job: EvaluateFiles) -> dict[str, Any]:
    """Run ``cover evaluate``: print the summary, write ``job.json``; returns the metrics."""
    from cover._memory import map_large_blocks_for
    from cover.io.batch_join import rejected_qids
    from cover.io.regions_read import NO_REGION, regions_kind
    from cover.io.regions_windows import layout_sources, sources_for
    from cover.stream.evaluate import evaluate_stream

    kind = regions_kind(job.regions)  # before the truth is read: a wrong file fails first
    if job.calibrator is not None and kind != "csv":
        raise InputError(f"{job.regions}: --calibrator is for CSV regions; JSON-lines and "
                         "Parquet regions carry their calibrator's fields")
    columns = job.columns
    if job.pred_format is not None:
        if kind != "jsonl" or columns is not None:
            raise InputError(f"{job.regions}: --format is for JSON-lines regions, without "
                             "--columns (which names the same fields)")
        columns = layout_sources(job.pred_format)
    if kind == "jsonl":  # --columns checked, or the layout detected, before any read
        _, found = sources_for(job.regions, columns)
        if found is not None:  # as every input's format is: detected and named
            say(f"{job.regions}: rows of the {found} layout; each row's base prediction "
                f"read as it reads it (--format {found})")
            columns = layout_sources(found)  # the stream reads them so, not detects again
    map_large_blocks_for(job.gt)  # a large truth and its per-video sums: growing columns
    truth, problems, rejected = _read_truth(job)
    run = partial(evaluate_stream, job.regions, truth, target=job.target,
                  refusal_policy=job.refusal_policy, batch_rows=job.batch_rows,
                  columns=columns, calibrator=job.calibrator, covariates=job.diagnostics,
                  on_meta=partial(_check_relevance, job, kind),
                  truth_rejected=rejected_qids(problems), truth_rejected_rows=rejected)
    whole = job.in_memory or (kind == "jsonl" and json_array(job.regions))
    # Rows named by their place in their video, which the truth does not name so: the
    # stream would find after its first batch that the join needs every row. Read whole
    # at once, not that batch twice (the same numbers: the stream is the whole read).
    late = not whole and kind == "jsonl" and _named_by_place(job.regions, truth)
    res = None if late else run(whole=whole)
    if res is None:
        say(f"{job.regions}: qids do not all match {job.gt}; reading it whole to choose the "
            "join (by qid, or on vid and query text when its qids are positions)")
        res = run(whole=True)
    elif not whole:
        say(f"{job.regions}: streamed in {res.batches} batch(es) of up to {job.batch_rows} "
            "rows")
    assert res is not None  # read whole, the join on content is decided, never deferred
    if not res.sums.rows and set(res.read_problems.kinds.get("rejected", ())) == {NO_REGION}:
        # every row lacks the block certify writes on each: the file, not its rows
        raise InputError(f"{job.regions}: no row has a cover.region list, which `cover "
                         "certify` writes on every row: a prediction file? Certify it first "
                         "and give its output as --regions")
    raise_on_rejections(res.read_problems, job.on_error, job.regions)
    if res.vid_from_truth:  # as calibrate and split say it of predictions naming none
        say(f"{job.regions}: the rows name no vid; took it from {job.gt} for "
            f"{res.vid_from_truth} rows (by qid)")
    if res.content_join is not None:
        matched, rows, by_qid, how = res.content_join
        say(f"joined on {how}: {matched} of {rows} regions matched ({by_qid} by qid)")
    raise_on_rejections(res.join_problems, job.on_error, f"{job.regions} joined with {job.gt}")
    # Both files' rows (each named with its file), as calibrate says "calibration input".
    tally = res.read_problems + ProblemTally.of(problems) + res.join_problems
    report_problems(tally, what="evaluation input")
    n = res.sums.rows
    counts = {
        "rejected_at_certify": res.rejected_at_certify,
        "rejected_here": res.read_problems.count("rejected")
                         + res.join_problems.count("rejected"),
        "ground_truth_not_certified": res.ground_truth_not_certified,
        "in_calibration": res.in_calibration or (n if res.same_as_calibration else 0),
    }
    if not n:
        raise InputError(_nothing_evaluated(job, counts, tally))
    _warn_overlap(res.in_calibration, res.same_as_calibration, n)
    ev = res.sums.finish(_calibration(res.meta))
    field = res.grounding.finish() if res.windows else None
    return _finish(job, kind, ev, field, res.meta, counts, _diagnostics(job, ev, res))


def _nothing_evaluated(job: EvaluateFiles, counts: dict[str, int], tally: ProblemTally
                       ) -> str:
    """Why no row was evaluated (a coverage of no row is no measurement): the rows
    rejected at certify (no region), here (the commonest reasons) and the truth rows
    without a region."""
    here = counts["rejected_here"]
    why = rejection_kinds(tally)
    return (f"no rows left to evaluate in {job.regions} joined with {job.gt}: "
            f"{counts['rejected_at_certify']} row(s) rejected at certify (no region), "
            f"{here} row(s) rejected here{f' ({why})' if here and why else ''}; "
            f"{counts['ground_truth_not_certified']} ground-truth row(s) had no region")


def _check_relevance(job: EvaluateFiles, kind: str, meta: dict[str, Any]) -> None:
    """``--relevance-from`` against the relevance source the regions' calibrator recorded
    (``cover.relevance``; absent: saliency), checked on the first batch read."""
    from cover.data.relevance import SALIENCY
    from cover.jobs.certify_stream import check_relevance

    if job.relevance_from is None:
        return
    if meta.get("score") is None:
        where = ("CSV regions carry no calibrator fields: give --calibrator, the file "
                 "certify used" if job.calibrator is None and kind == "csv"
                 else "no row carries calibrator fields")
        raise InputError(f"--relevance-from {job.relevance_from}: cannot check it against "
                         f"the calibrator of {job.regions} ({where})")
    check_relevance(job.relevance_from, recorded=meta.get("relevance") or SALIENCY,
                    score=meta.get("score"),
                    where=job.calibrator or f"the calibrator recorded in {job.regions}")


def _named_by_place(path: str, truth: CompactTruth) -> bool:
    """Whether the first row of JSON-lines regions ``path`` is named ``<vid>-<k>`` (its
    place in its video: TGN's, Shuffling Videos') and the truth names no query so."""
    from cover.io.order_join import named_by_place
    from cover.io.peek import peek

    row = peek(path).first_row
    q, v = (row.get("qid"), row.get("vid")) if row is not None else (None, None)
    if not (isinstance(q, str) and isinstance(v, str)
            and named_by_place(np.array([q]), np.array([v]))):
        return False
    return not bool(truth.find(np.array([q]))[1][0])


def _read_truth(job: EvaluateFiles) -> tuple[CompactTruth, list[RowProblem], RejectedRows]:
    """The ground truth as compact columns (held for the whole run), the reader's
    problems and its rejected rows (:func:`cover.io.formats.read_truth`)."""
    from cover.io.formats import OtherRole, read_truth

    # Highlight labels are checked but not kept: regions are read without the saliency
    # they echo, so no row could be scored on them.
    try:
        got = read_truth(job.gt, format=job.gt_format, columns=job.gt_columns,
                         durations=job.gt_durations, on_error=job.on_error, labels=False)
    except OtherRole as exc:  # evaluate has no --preds: say what it takes
        raise InputError(f"{job.gt}: this is a predictions file ({exc.found.name}), not "
                         "ground truth: --gt takes the ground truth; predictions are "
                         "certified first and the output given as --regions") from None
    say(f"{job.gt}: {got.format} ({len(got.truth)} rows)")
    return got.truth, got.problems, got.rejected


def _diagnostics(job: EvaluateFiles, ev: Evaluation, res: StreamedEvaluation) -> Any:
    """Worst-slab coverage and coverage gap over ``job.diagnostics`` (None without), from
    each evaluated row's covered flag and covariates the stream kept."""
    if not job.diagnostics:
        return None
    from cover.studies.diagnostics import diagnostics

    alpha = res.meta.get("alpha")
    target = 1 - float(alpha) if alpha is not None else ev.marginal.coverage
    x = np.concatenate([np.zeros((0, len(job.diagnostics))), *res.covariates])
    if not np.isfinite(x).all(axis=1).any():
        raise InputError(f"--diagnostics: no evaluated row of {job.regions} carries "
                         f"{', '.join(job.diagnostics)}")
    return diagnostics(np.concatenate([np.zeros(0, dtype=bool), *res.covered]), x,
                       job.diagnostics, target)
def _calibration(meta: dict[str, Any]) -> tuple[int, int] | None:
    if meta.get("k") is not None and meta.get("n_calibration") is not None:
        return int(meta["n_calibration"]), int(meta["k"])
    return None


def _warn_overlap(marked: int, same: bool, n: int) -> None:
    if marked:
        warnings.warn(CoverWarning(
            f"{marked} of the {n} rows evaluated were calibration rows (cover."
            "in_calibration): coverage on them does not test the guarantee; evaluate "
            "held-out rows (certify with --qids, e.g. cover split's test_qids.txt)"),
            stacklevel=2)
    elif same:
        warnings.warn(CoverWarning(
            f"the {n} rows evaluated are exactly the rows the calibrator was fitted on "
            "(same qid digest): coverage on them does not test the guarantee; evaluate "
            "held-out rows"), stacklevel=2)


def _finish(job: EvaluateFiles, kind: str, ev: Evaluation, field: GroundingMetrics | None,
            meta: dict[str, Any], counts: dict[str, int], diag: Any = None) -> dict[str, Any]:
    """The metrics as JSON and the printed summary (the same for both paths)."""
    from cover.io.output import strict_json, write_json
    from cover.report.evaluate_summary import summary_lines

    out = ev.to_dict()
    out["counts"] |= counts
    out["score"], out["alpha"] = meta.get("score"), meta.get("alpha")
    out["field_metrics"] = None if field is None else field.to_dict()
    if field is None:  # no predicted window was read: an IoU of 0 would be made up
        out["point_iou"] = None
    if diag is not None:
        out["diagnostics"] = diag.to_dict()
    for line in summary_lines(job.regions, ev, field, meta, out["counts"], diag,
                              csv_without_calibrator=kind == "csv" and job.calibrator is None):
        print(line)
    if job.json:
        write_json(job.json, strict_json(out),
                   inputs=[job.regions, job.gt, job.gt_durations])
        print(f"wrote {job.json}")
    return out
