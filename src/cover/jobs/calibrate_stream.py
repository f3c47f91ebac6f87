"""The streaming path of ``cover calibrate``: a prediction file of any size in bounded
memory (:mod:`cover.stream.calibrate`).

It streams when the predictions are Moment-DETR / Lighthouse JSON lines, the ground
truth numbers its queries natively (so the join is by qid) and the rule fits from the
scores alone (not ``crc``'s loss curve, not ``weighted``'s ratios, not a ``key``
grouping that reads the records); otherwise the files are read whole.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from cover.errors import InputError, RowProblem, no_rows_left
from cover.io.jsonl import OnError, raise_on_rejections
from cover.jobs.certify_stream import streamable
from cover.scores import FAMILY_INPUT
from cover.stream.calibrate import StreamedFit

#: Groupings fitted from qid, vid, duration and the predicted window only.
STREAM_GROUPINGS = ("all", "pred_length", "duration")


def can_stream(preds: str | Path, *, pred_format: str | None, columns: Any, rule: str,
               groups: str) -> bool:
    """Whether ``cover calibrate`` can stream ``preds`` for this rule and grouping."""
    from cover.calibrate.registry import get_rule

    spec = get_rule(rule)
    if groups not in STREAM_GROUPINGS or spec.needs & {"loss", "weights", "table"} \
            or spec.per_row:
        return False
    return stream_kind(preds, pred_format, columns) is not None


def stream_kind(preds: str | Path, pred_format: str | None, columns: Any) -> str | None:
    """``jsonl`` (Moment-DETR lines), ``columns`` (Parquet or CSV/TSV with ``--columns``),
    or None: read whole."""
    from cover.io.generic import kind_suffix

    if columns and kind_suffix(Path(preds)) in (".parquet", ".pq", ".csv", ".tsv"):
        return "columns"
    return "jsonl" if streamable(preds, pred_format, columns) == "jsonl" else None


def score_streaming(
    *,
    score: str,
    min_scale: float,
    target: str,
    preds: str,
    gt: str,
    gt_format: str | None,
    gt_durations: str | None,
    gt_columns: Any,
    qids: str | None,
    clip: float,
    strict: bool,
    on_error: OnError,
    batch_rows: int,
    pred_format: str | None = None,
    columns: Any = None,
) -> StreamedFit | None:
    """The calibration scores of ``preds`` streamed against ``gt``
    (:func:`cover.stream.calibrate.score_jsonl`, or ``score_columns`` for Parquet / CSV
    with ``columns``; fit them with
    :meth:`Calibrator.fit_scores`), after the checks of
    :func:`cover.io.labelled.load_labelled`; None when the ground truth needs the
    whole-file path (qids not native: joined on content)."""
    from cover.io import formats
    from cover.io.charades_rf import no_moment_qids
    from cover.io.qids import read_qid_lines, unknown_qids
    from cover.stream.calibrate import score_columns, score_jsonl

    g = formats.read(gt, "ground_truth", format=gt_format, options=formats.Options(
        on_error=on_error, durations=gt_durations, columns=gt_columns))
    if not g.native_qids or no_moment_qids(g.loaded):
        return None
    gtab = g.loaded.table
    wanted = None
    problems: list[RowProblem] = list(g.loaded.problems)
    if qids is not None:
        wanted, lines = read_qid_lines(qids)
    if stream_kind(preds, pred_format, columns) == "columns":
        got = score_columns(preds, gtab, columns=columns, family=score, min_scale=min_scale,
                            target=target, qids=wanted, clip=clip, strict=strict,
                            on_error=on_error, batch_rows=batch_rows)
    else:
        got = score_jsonl(preds, gtab, family=score, min_scale=min_scale, target=target,
                          qids=wanted, clip=clip, strict=strict, on_error=on_error,
                          batch_lines=batch_rows)
    if qids is not None and wanted is not None:
        problems += unknown_qids(qids, wanted, lines, np.union1d(got.table.qid, gtab.qid),
                                 f"{preds} nor in {gt}")
    problems += got.problems
    no_pred = [x for x in got.problems if x.path == gtab.source and x.action == "rejected"]
    if no_pred and on_error == "raise":
        raise InputError(
            f"{len(no_pred)} ground-truth row(s) have no prediction, e.g. {no_pred[0]}.\n"
            "A silently dropped query would bias calibration. If you calibrate on a subset "
            "on purpose, pass --qids FILE (e.g. from `cover split`); to set them aside, "
            "pass --on-error reject.")
    raise_on_rejections(problems, on_error, f"{preds} joined with {gt}")
    if len(got.table) == 0:
        raise InputError(no_rows_left(preds, gt, problems))
    if score not in got.families:  # the message of require_family_input on the whole table
        others = ", ".join(f for f in FAMILY_INPUT if f != score and f in got.families)
        hint = f"; choose another family ({others})" if others else ""
        raise InputError(f"{preds}: score family {score} needs {FAMILY_INPUT[score]}, and "
                         f"none of the {len(got.table)} rows has one{hint}")
    print(f"{preds}: streamed in {got.batches} batch(es) of up to {batch_rows} lines",
          file=sys.stderr)
    got.problems = problems
    return got
