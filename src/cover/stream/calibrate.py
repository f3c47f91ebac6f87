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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover._memory import trim
from cover.calibrate.calibrator import Calibrator
from cover.data.relevance import PROPOSALS, SALIENCY, rebuild_relevance
from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable, raw_ids
from cover.data.units import split_units
from cover.errors import KEEP, InputError, ProblemTally
from cover.io.batch_join import QidList, join_batches
from cover.io.batches import column_batches
from cover.io.columns import prediction_table
from cover.io.generic import PARQUET_SUFFIXES, kind_suffix, parse_columns
from cover.io.gt_compact import Column, compact_truth
from cover.io.jsonl import OnError
from cover.io.jsonl_batch import gc_paused, load_batch
from cover.io.lines import line_batches
from cover.io.narrow import narrow_int, sorted_unique
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
    require_family_input,
)
from cover.stream.jsonl import DEFAULT_BATCH_LINES
from cover.utf8 import as_bytes, as_text


@dataclass
class _Parts:
    """Per-batch arrays appended to one growing column each (:class:`Column`): no list
    of small arrays pinning the allocator's blocks a batch at a time, and no
    concatenation at the end (each column is trimmed in place as it is taken)."""

    cols: dict[str, Column] = field(default_factory=dict)
    #: Rows expected (a Parquet file's count): each column is sized for them at once.
    rows: int = 0

    def add(self, **arrays: NDArray[np.generic] | None) -> None:
        for k, a in arrays.items():
            if a is not None:
                self.cols.setdefault(k, Column(self.rows)).append(a)

    def get(self, key: str, dtype: type) -> NDArray[Any]:
        col = self.cols.pop(key, None)
        return np.empty(0, dtype=dtype) if col is None else col.array(dtype)


@dataclass
class StreamedFit:
    """What a streamed calibration kept: the scores, the slim table they belong to
    (qid, vid, duration, predicted window) and the problems found on the way, tallied
    (:class:`~cover.errors.ProblemTally`: counts and the first few, bounded memory)."""

    scores: Scores | None
    table: GroundingTable
    problems: ProblemTally
    batches: int
    #: The score families some row has the input of (:mod:`cover.scores`).
    families: set[str] = field(default_factory=set)
    #: The whole joined table, when the rows were read as one batch and kept (the
    #: scores are then computed from it when needed).
    whole: GroundingTable | None = None
    #: Where the relevance signal of the rows came from (what the calibrator records).
    relevance: str = SALIENCY
    #: When given, the table's vids are codes into these (sorted, distinct, UTF-8): a
    #: stream keeps 1-4 bytes a row, not the text (:meth:`vid_text`, :meth:`row_units`).
    vids: NDArray[np.bytes_] | None = None

    def vid_text(self) -> NDArray[np.str_]:
        """The vid of each row of ``table`` as text."""
        if self.vids is None:
            return self.table.vid
        return as_text(self.vids[raw_ids(self.table, "vid")])

    def row_units(self) -> NDArray[Any]:
        """The unit of each row of ``table`` (:attr:`GroundingTable.units`): text, or, when
        the vids are codes, the rank of each unit's text (grouped and ordered alike, so
        every sum over units is the same)."""
        if self.vids is None:
            return self.table.units
        return unit_codes(self.vids)[raw_ids(self.table, "vid")]

    def require_family(self, family: str, source: str) -> None:
        """An :class:`InputError` naming ``source`` when no row carries ``family``'s
        input (:func:`cover.scores.require_family_input`, whose words a streamed fit
        repeats from the families its batches carried)."""
        if self.whole is not None:
            require_family_input(self.whole, family, source)
        elif family not in self.families:
            others = ", ".join(f for f in FAMILY_INPUT if f != family and f in self.families)
            hint = f"; choose another family ({others})" if others else ""
            raise InputError(f"{source}: score family {family} needs {FAMILY_INPUT[family]}, "
                             f"and none of the {len(self.table)} rows has one{hint}")


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
    parts = _Parts(rows=min(rows, len(truth)) if rows else len(truth))
    families = set() if families is None else families
    n_batches = 0
    # Row numbers of the truth fit 4 bytes below 2**31 rows: the qid, vid and duration
    # of a joined row are its truth row's, so 4 bytes stand for ~100 of text per row.
    row_type = np.int32 if len(truth) < 2**31 else np.int64

    def use(joined: GroundingTable) -> None:
        nonlocal n_batches
        n_batches += 1
        trim()  # the previous batch's pages go back before this one is scored
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
                            keep=keep_problems, truth_rejected=truth_rejected)
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


#: Vids made text (4 bytes a character) this many at a time.
_UNIT_SLICE = 1 << 16


def unit_codes(vids: NDArray[np.bytes_]) -> NDArray[np.integer]:
    """Per vid (UTF-8), its unit (:func:`cover.data.units.split_units`) as the rank of
    the unit among the units of ``vids``: grouped and ordered as the text would be (byte
    order is code-point order). Vids are made text a slice at a time."""
    units = [as_bytes(split_units(as_text(vids[a:a + _UNIT_SLICE])))
             for a in range(0, vids.size, _UNIT_SLICE)]
    width = max((u.dtype.itemsize for u in units), default=1)
    joined = np.zeros(vids.size, dtype=f"S{width}")
    at = 0
    while units:  # each slice let go once copied
        u = units.pop(0)
        joined[at:at + u.size] = u
        at += u.size
    return narrow_int(sorted_unique(joined)[1])  # np.unique's inverse at a lower peak


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
