"""``cover calibrate`` as one job: read (streamed or whole), fit, save, summarise.

The labelled rows are prediction batches joined with the ground truth by one join
(:func:`cover.io.batch_join.join_batches`): a large file under a rule that needs only the
scores is streamed (:mod:`cover.stream.calibrate`), anything else is read whole as
one batch (:func:`cover.io.labelled.load_labelled`). Either way the same checks, the
same problems report and the same fit follow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cover.data.relevance import SALIENCY
from cover.errors import InputError, ProblemTally, no_rows_left, report_problems, say
from cover.jobs.calibrate_job import CalibrateJob, group_settings, rule_params
from cover.stream.fit_columns import StreamedFit


def rcps_bound_line(given: str | None) -> str:
    """Which bound RCPS used, and how it relates to the paper's (Hoeffding)."""
    from cover.calibrate.rcps import DEFAULTS

    bound = given or str(DEFAULTS["bound"])
    how = "given by --bound" if given else "the default"
    if bound == "hoeffding":
        return f"RCPS bound: hoeffding ({how}; the paper's, as in `cover study rcps`)"
    return (f"RCPS bound: {bound} ({how}); the paper and the main table of `cover study rcps` "
            "use hoeffding, a looser bound: --bound hoeffding reproduces them")


def stream_kind(job: CalibrateJob) -> str | None:
    """How ``job.preds`` is streamed: ``jsonl`` (Moment-DETR lines) or ``columns``
    (Parquet or CSV/TSV with ``--columns``), when the rule fits from the scores alone
    (not ``crc``'s loss curve, not ``weighted``'s ratios, not a grouping that reads the
    records); None: read whole."""
    from cover.calibrate.groups import reads_input_rows
    from cover.calibrate.registry import get_rule
    from cover.io.opener import suffix_kind
    from cover.jobs.certify_stream import streamable

    spec = get_rule(job.rule)
    fmt, columns = job.formats.get("pred_format"), job.formats.get("columns")
    if (job.in_memory or reads_input_rows(job.groups) or spec.per_row
            or spec.needs & {"loss", "weights", "table"}):
        return None
    if columns and suffix_kind(job.preds) != "jsonl":
        return "columns"
    return "jsonl" if streamable(job.preds, fmt, columns) == "jsonl" else None


def _labelled(job: CalibrateJob) -> StreamedFit:
    """The joined calibration rows and their scores, joined by
    :func:`cover.io.batch_join.join_batches`: a large prediction file streamed a batch at
    a time (:mod:`cover.stream.calibrate`) when :func:`stream_kind` allows and the
    ground truth numbers its queries natively (the join is by qid), else the files read
    whole as one batch (``whole`` is then the joined table)."""
    from cover._memory import map_large_blocks_for
    from cover.calibrate.groups import reads_input_rows
    from cover.calibrate.registry import get_rule
    from cover.io.batch_join import QidList, rejected_qids
    from cover.io.formats import read_truth
    from cover.io.labelled import read_labelled
    from cover.io.qids import read_qid_lines
    from cover.stream.calibrate import score_file

    kw = job.formats
    kind = stream_kind(job)
    if kind is not None:  # a large stream frees large columns as it goes: give them back
        map_large_blocks_for(job.gt)
    g = None if kind is None else read_truth(  # scores read no highlight labels
        job.gt, format=kw.get("gt_format"), columns=kw.get("gt_columns"),
        durations=kw.get("gt_durations"), on_error=job.on_error, labels=False)
    if g is None or not g.native_qids or g.no_moment:
        # The input rows are read only by a grouping keyed by one of their fields.
        whole = read_labelled(job.preds, job.gt, qids=job.qids, clip=job.clip,
                              strict=job.strict, on_error=job.on_error, log=say,
                              keep_records=reads_input_rows(job.groups),
                              **kw)
        return StreamedFit(None, whole.table, ProblemTally.of(whole.problems), 1,
                           whole=whole.table, relevance=whole.relevance)
    # Held for the whole stream as compact columns (no text per row, no records).
    args: dict[str, Any] = dict(
        family=job.score, min_scale=job.min_scale, target=job.target, clip=job.clip,
        qids=None if job.qids is None else QidList(job.qids, *read_qid_lines(job.qids)),
        strict=job.strict, on_error=job.on_error, gt_name=job.gt,
        relevance=kw.get("relevance_from") or SALIENCY,
        # only a grouping by predicted length reads the predicted windows, one by duration
        # the durations; the truth is this job's own: its windows go once rows are joined
        windows=job.groups == "pred_length", durations=job.groups == "duration",
        own_truth=True,
        sides=bool(get_rule(job.rule).needs & {"sides"}),  # as Calibrator.fit scores
        truth_rejected=rejected_qids(g.problems))
    got = score_file(job.preds, g.truth, columns=kw["columns"] if kind == "columns" else None,
                     batch_rows=job.batch_rows, **args)
    say(f"{job.preds}: streamed in {got.batches} batch(es) of up to {job.batch_rows} rows")
    got.problems = ProblemTally.of(g.problems) + got.problems
    return got


def calibrate(job: CalibrateJob) -> list[str]:
    """Fit and save the calibrator of ``job``; returns the summary lines (notes on the
    grouping, the thresholds, the coverage band, the file written)."""
    from cover.calibrate import Calibrator
    from cover.calibrate.quantile import as_fraction
    from cover.io.mapping_guard import refuse_csv_proposals
    from cover.scores import compute_scores
    from cover.ties import Ties

    given = rule_params(job)  # a flag of another rule is refused before any reading
    inputs: list[Any] = [job.preds, job.gt, job.qids, job.formats.get("gt_durations"),
                         job.shift_to]
    Calibrator(score=job.score, alpha=job.alpha, min_scale=job.min_scale,  # checks the rule
               target=job.target, rule=job.rule, params=given)
    refuse_csv_proposals(job.preds, job.formats.get("relevance_from"),
                         "--relevance-from proposals")
    got = _labelled(job)
    table = got.table
    report_problems(got.problems, what="calibration input")
    if len(table) == 0:
        raise InputError(no_rows_left(job.preds, job.gt, got.problems))
    got.require_family(job.score, job.preds)
    relevance = got.relevance if job.score == "sls" else SALIENCY
    settings, fit_kw, notes = group_settings(job, table)
    out = list(notes)
    if relevance != SALIENCY:
        out.append(f"SLS relevance from the {relevance} (recorded in the calibrator: cover "
                   "certify builds it the same way)")
    params = {**given, **(settings.pop("params") or {})}
    cal = Calibrator(score=job.score, alpha=job.alpha, min_scale=job.min_scale,
                     target=job.target, rule=job.rule, params=params,
                     keep_scores=job.keep_scores, relevance=relevance, **settings)
    if got.whole is not None:
        cal.fit(got.whole, **fit_kw)
    else:
        assert got.scores is not None  # a streamed read keeps the scores, not the rows
        cal.fit_scores(got.scores, table)
    if job.strict and not all(np.isfinite(s.value) for r in cal.thresholds_.values()
                              for s in r.sides.values()):
        raise InputError(f"{len(table)} calibration rows are too few for alpha={job.alpha}")
    cal.save(job.output, inputs=inputs)

    def scores() -> Any:
        if got.scores is None:
            got.scores = compute_scores(table, job.score, min_scale=job.min_scale,
                                        target=job.target)
        return got.scores.values

    if job.rule != "split" or cal.threshold_ is None:
        out.append(f"calibrated {job.score.upper()} by rule {job.rule} at alpha={job.alpha} "
                   f"on {len(table)} rows:")
        out += [f"  {line}" for line in cal.describe()]
        if job.rule == "rcps":
            out.append(f"  {rcps_bound_line(job.bound)}")
        if cal.threshold_ is not None:
            out.append(f"  {Ties.of(scores(), cal.threshold_).describe(split=False)}")
        return [*out, f"wrote {job.output}"]
    c = cal.counts_
    out.append(f"calibrated {job.score.upper()} at alpha={job.alpha} on {cal.n_} rows: "
               f"threshold {cal.threshold_:.6g} (k={cal.k_}-th smallest score)")
    if job.no_band:
        out.append(f"expected coverage k/(n+1) = {cal.expected_coverage:.4f}")
    else:
        from cover.bands import CoverageBands, calibration_clusters

        deff, g = calibration_clusters(scores(), cal.threshold_, got.row_units())
        bands = CoverageBands.of(cal.n_ or 0, cal.k_ or 0, calibration_deff=deff,
                                 calibration_units=g)
        out.append(f"expected coverage k/(n+1) = {bands.expected:.4f}; {bands.describe()}")
    out.append(Ties.of(scores(), cal.threshold_).describe(float(as_fraction(job.alpha))))
    out.append(_counts_line(job.score, c))
    return [*out, f"wrote {job.output}"]


def _counts_line(score: str, counts: dict[str, int]) -> str:
    """The calibration rows a family treats apart: refused rows (every family); rows whose
    scale was floored at --min-scale (NORM's predicted length, SIGMA's std); rows whose
    truth lies beyond the relevance signal (SLS). Only the family's own are named."""
    said = [f"refused rows {counts.get('refused', 0)}"]
    if score in ("norm", "sigma"):
        said.append(f"{score.upper()} scale floored {counts.get('min_scale_floored', 0)}")
    if score == "sls":
        said.append(f"truth beyond signal {counts.get('beyond_signal', 0)}")
    return ", ".join(said)
