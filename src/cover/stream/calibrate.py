"""Calibrate on a prediction file of any size, a batch at a time: Moment-DETR JSON lines,
or Parquet / CSV read through a column mapping.

A split-conformal fit needs one score per calibration row (SPEC §4), not the rows:
each batch of lines is parsed, joined with the ground truth of its own qids, scored,
and dropped. What is kept per row is the score (8 bytes; 24 with per-side scores, for
a rule that reads them), its refusal flags (1 byte), the predicted window (only for a
grouping by predicted length) and the number of its ground-truth row (4 bytes), which gives its
qid, vid code, unit and duration at the end (for the ``fitted_on`` digest, the
grouping and the coverage band); the relevance signals, the truth and the records are
not. The ground truth is held as compact columns, indexed by qid once
(:class:`cover.io.truth_index.CompactTruth`, as ``cover evaluate`` holds it: a few tens
of bytes a row, no text per row), and the qids seen as a line number per truth row
(:class:`cover.io.truth_index.TruthSeen`). The thresholds are those of
:meth:`Calibrator.fit` on the whole joined table (:meth:`Calibrator.fit_scores`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover._memory import RowTrim
from cover.calibrate.calibrator import Calibrator
from cover.data.relevance import PROPOSALS, SALIENCY, rebuild_relevance, signal_rule
from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable
from cover.errors import KEEP, InputError
from cover.io.batch_join import QidList, join_batches
from cover.io.batches import column_batches
from cover.io.columns import prediction_table
from cover.io.generic import PARQUET_SUFFIXES, kind_suffix, parse_columns
from cover.io.gt_compact import compact_truth
from cover.io.jsonl import OnError
from cover.io.jsonl_batch import gc_paused, load_batch
from cover.io.lines import line_batches
from cover.io.opener import parquet_file
from cover.io.qvhighlights import Loaded
from cover.io.truth_index import CompactTruth
from cover.ragged import Ragged
from cover.scores import (
    FAMILY_INPUT,
    Scores,
    check_family,
    compute_scores,
    missing_family_input,
)
from cover.stream.fit_columns import Parts, StreamedFit
from cover.stream.jsonl import DEFAULT_BATCH_LINES
from cover.utf8 import as_text


def score_file(
    preds: str | Path,
    gt: GroundingTable | CompactTruth,
    *,
    family: str,
    min_scale: float,
    target: str,
    columns: dict[str, str] | str | None = None,
    qids: QidList | NDArray[np.str_] | None = None,
    clip: float = DEFAULT_CLIP_SECONDS,
    strict: bool = False,
    on_error: OnError = "raise",
    batch_rows: int = DEFAULT_BATCH_LINES,
    fast: bool = True,
    **settings: Any,
) -> StreamedFit:
    """Scores of ``family`` for every prediction row of ``preds`` joined with ``gt`` by
    qid (only the qids in ``qids`` when given), ``batch_rows`` rows at a time: Moment-DETR
    JSON lines, or any file read through the column mapping ``columns``
    (:func:`cover.io.batches.column_batches`: Parquet, CSV/TSV, JSON lines).

    Row checks are those of :func:`cover.data.join.attach_truth` on the whole file: a
    prediction without truth, a truth without prediction (after all batches), a vid,
    query or duration that disagrees, and a qid seen on an earlier line are rejected.
    Clean batches of JSON lines are read in bulk (:mod:`cover.io.jsonl_batch`);
    ``fast=False`` reads every batch row by row (same result). The other keywords
    (``gt_name``, ``relevance``, ``windows``, ``own_truth``, ``sides``, ``durations``,
    ``keep_problems``, ``truth_rejected``): :func:`score_batches`.
    """
    if batch_rows < 1:
        raise ValueError(f"batch_rows must be >= 1, got {batch_rows}")
    name = str(preds)
    # Rejected rows are set aside as they are read; under on_error="raise" the join
    # raises once every batch is read, as a whole read would.
    families: set[str] = set()
    if columns is None:
        def loaded() -> Iterator[Loaded]:
            for batch in line_batches(preds, batch_rows):
                # Only SLS scores the saliency; another family reads it (75 numbers a
                # row for QVHighlights) only until a row has shown one, for the families
                # the rows carry (what a missing input's message offers instead).
                signal = family == "sls" or "sls" not in families
                with gc_paused():  # see cover.stream.jsonl: the batch's rows hold no cycles
                    yield load_batch(name, batch, clip=clip, on_error="reject", fast=fast,
                                     keep_records=False, signal=signal).loaded
        batches, rows = loaded(), 0
    else:
        batches = (prediction_table(c, clip=clip, on_error="reject", reasons=bad)
                   for c, _, bad in column_batches(preds, parse_columns(columns), batch_rows,
                                                   with_records=False))
        rows = (parquet_file(preds).metadata.num_rows
                if kind_suffix(Path(preds)) in PARQUET_SUFFIXES else 0)
    return score_batches(batches, name, gt, family=family, min_scale=min_scale,
                         target=target, qids=qids, clip=clip, strict=strict,
                         on_error=on_error, rows=rows, families=families, **settings)


def score_batches(
    batches: Iterable[Loaded],
    name: str,
    gt: GroundingTable | CompactTruth,
    *,
    family: str,
    min_scale: float,
    target: str,
    qids: QidList | NDArray[np.str_] | None,
    clip: float,
    strict: bool,
    on_error: OnError,
    gt_name: str | None = None,
    relevance: str = SALIENCY,
    rows: int = 0,
    windows: bool = True,
    own_truth: bool = False,
    sides: bool = True,
    durations: bool = True,
    keep_problems: int | None = KEEP,
    truth_rejected: NDArray[np.str_] | None = None,
    families: set[str] | None = None,
) -> StreamedFit:
    """The scores of prediction batches already read (any format) joined with ``gt``
    (:func:`cover.io.batch_join.join_batches`, the join of every calibration input): the
    loop behind :func:`score_file`. ``relevance="proposals"``
    builds each joined batch's relevance from its scored windows over ``[0, T]`` (T from
    the truth), as the whole read does. ``rows``: the rows the batches hold when known
    (what is kept per row is then sized once). ``windows=False``: the predicted windows
    are not kept (only a grouping by predicted length reads them; the table's are NaN).
    ``durations=False``: the table's durations are NaN (only a grouping by duration
    reads them; 8 bytes a row at the fit). ``sides=False``: the per-side scores are not
    kept (16 bytes a row; only a rule that needs them reads them, as
    :meth:`Calibrator.fit` computes them). ``own_truth``: ``gt`` is the caller's no
    more: its windows and queries are let go once the join is done
    (:meth:`CompactTruth.release`), before the table is built. ``keep_problems``: the
    problems of each action kept as examples (None: every one); all are counted.
    ``families``: the set filled, batch by batch, with the score families some row has
    the input of (read by a caller that reads the batches as they are needed)."""
    if qids is not None and not isinstance(qids, QidList):
        qids = QidList(None, qids, np.zeros(len(qids), dtype=np.int64))
    truth = gt if isinstance(gt, CompactTruth) else compact_truth(gt)
    # Each kept row joined its own truth row: the truth's row count bounds what is kept
    # (untouched pages of a column sized for it cost no memory; it is trimmed at the end).
    parts = Parts(rows=min(rows, len(truth)) if rows else len(truth))
    families = set() if families is None else families
    n_batches = 0
    # Row numbers of the truth fit 4 bytes below 2**31 rows: the qid, vid and duration
    # of a joined row are its truth row's, so 4 bytes stand for ~100 of text per row.
    row_type = np.int32 if len(truth) < 2**31 else np.int64

    trims = RowTrim()

    def use(joined: GroundingTable) -> None:
        nonlocal n_batches
        n_batches += 1
        trims.after(len(joined))  # the previous batches' pages go back before this one is scored
        families.update(f for f in FAMILY_INPUT if f not in families and len(joined)
                        and missing_family_input(joined, f) is None)
        if relevance == PROPOSALS:
            joined = rebuild_relevance(joined)
        s = compute_scores(joined, family, min_scale=min_scale, target=target, sides=sides)
        # the three refusal flags of a row in one byte
        flags = (s.refused.astype(np.uint8) | s.floored.astype(np.uint8) << 1
                 | s.beyond_signal.astype(np.uint8) << 2)
        parts.add(values=s.values, flags=flags, start=s.start, end=s.end)
        if windows:
            parts.add(ps=joined.pred_start, pe=joined.pred_end)

    problems = join_batches(batches, truth, preds=name, gt_name=gt_name or truth.source,
                            qids=qids, strict=strict, on_error=on_error, use=use,
                            truth_rows=lambda rows: parts.add(row=rows.astype(row_type)),
                            keep=keep_problems, truth_rejected=truth_rejected,
                            row_rule=signal_rule(relevance))
    flags = parts.get("flags", np.uint8)
    scores = Scores(check_family(family), values=parts.get("values", np.float64),
                    refused=(flags & 1) > 0, floored=(flags & 2) > 0,
                    beyond_signal=(flags & 4) > 0,
                    start=parts.get("start", np.float64) if "start" in parts.cols else None,
                    end=parts.get("end", np.float64) if "end" in parts.cols else None)
    del flags
    at = parts.get("row", row_type)
    if own_truth:
        truth.release()
    n = at.size
    nan = np.broadcast_to(np.float64(np.nan), (n,))  # no window kept: one NaN for every row
    # The rows were checked by the join: the table is built as it stands. Qids as
    # integers when every one is written as one (the digest reads them as text,
    # :func:`cover.data.table.qid_text`), vids as codes into the truth's vids.
    slim = GroundingTable(
        qid=truth.keys[at] if truth.int_qids else as_text(truth.keys[at]),
        vid=truth.vid_code[at], duration=truth.durations(at) if durations else nan,
        pred_start=parts.get("ps", np.float64) if windows else nan,
        pred_end=parts.get("pe", np.float64) if windows else nan,
        relevance=Ragged.empty(n), clip=clip, truth=None)
    del at
    return StreamedFit(scores, slim, problems, n_batches, families, relevance=relevance,
                       vids=truth.vids)


def calibrate_file(cal: Calibrator, preds: str | Path, gt: GroundingTable | CompactTruth,
                    **kw: Any) -> tuple[Calibrator, StreamedFit]:
    """Fit ``cal`` on ``preds`` streamed against ``gt`` (:func:`score_file` takes the
    keywords); the thresholds equal those of ``cal.fit`` on the whole joined table."""
    got = score_file(preds, gt, family=cal.score, min_scale=cal.min_scale,
                      target=cal.target, relevance=cal.relevance, **kw)
    if len(got.table) == 0:
        raise InputError("no calibration rows left after validation")
    assert got.scores is not None  # a streamed fit always scores its batches
    return cal.fit_scores(got.scores, got.table), got
