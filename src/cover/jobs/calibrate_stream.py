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

from cover.io.jsonl import OnError
from cover.jobs.certify_stream import streamable
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
    :meth:`Calibrator.fit_scores`), joined as :func:`cover.io.labelled.load_labelled`
    joins the whole file (:func:`cover.io.labelled.join_batches`); None when the ground
    truth needs the whole-file read (qids not native: joined on content)."""
    from cover.io import formats
    from cover.io.charades_rf import no_moment_qids
    from cover.io.labelled import QidList
    from cover.io.qids import read_qid_lines
    from cover.stream.calibrate import score_columns, score_jsonl

    g = formats.read(gt, "ground_truth", format=gt_format, options=formats.Options(
        on_error=on_error, durations=gt_durations, columns=gt_columns))
    if not g.native_qids or no_moment_qids(g.loaded):
        return None
    listed = None if qids is None else QidList(qids, *read_qid_lines(qids))
    kw: dict[str, Any] = dict(family=score, min_scale=min_scale, target=target, qids=listed,
                              clip=clip, strict=strict, on_error=on_error, gt_name=gt)
    if stream_kind(preds, pred_format, columns) == "columns":
        got = score_columns(preds, g.loaded.table, columns=columns, batch_rows=batch_rows, **kw)
    else:
        got = score_jsonl(preds, g.loaded.table, batch_lines=batch_rows, **kw)
    print(f"{preds}: streamed in {got.batches} batch(es) of up to {batch_rows} lines",
          file=sys.stderr)
    got.problems = g.loaded.problems + got.problems
    return got
