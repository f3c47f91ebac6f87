"""``cover evaluate``'s one implementation: a certified regions file, a batch of rows at a time.

The ground truth is held as compact columns (a few numbers per query); the regions file (JSON lines
as ``cover certify`` writes them, echoed or ``--compact``, Parquet or CSV) is read
``batch_rows`` rows at a time. Each batch goes through the checks of
:func:`cover.io.regions_jsonl.regions_from_rows`, is joined to the truth of its own qids
(:func:`cover.data.join.attach_truth`) and only the sums behind the metrics are kept
(:class:`cover.metrics.EvaluationSums`, :class:`cover.grounding_metrics.GroundingSums`):
the numbers are the same bit for bit for any batching. Memory is one batch plus the
truth as compact columns (:class:`cover.io.truth_index.CompactTruth`, a few tens of
bytes a row), the qids seen (the duplicate check: a line number per truth row,
:class:`~cover.io.truth_index.TruthSeen`), per-video sums (the cluster sd; a slot per
unit of the truth, :class:`~cover.metric_sums.CodeUnitSums`) and, for
``--diagnostics``, each row's covered flag and covariates.

``whole=True`` (``--in-memory``, a JSON array file) reads every batch as the stream does
and joins them into one (a JSON array file is parsed whole). One rule needs every row:
when the regions' qids do not all name a truth row of the same video, ``cover evaluate``
may join on (vid, query text) instead
(:func:`cover.io.order_join.join_truth`). The stream counts, per batch, the rows that
could match by content; while that count cannot beat the qid matches the join stays by
qid (what the whole-file rule would decide), and otherwise :func:`evaluate_stream`
returns None: the caller runs it again with ``whole=True``, where the join is decided.
A row that names no vid (certified from a layout without one) is on its query's video,
the truth's (by qid), in every batch alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial
from operator import attrgetter
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover._memory import RowTrim
from cover.data.join import attach_truth, index_of
from cover.data.table import GroundingTable
from cover.errors import KEEP, InputError, ProblemTally, RowProblem
from cover.grounding_metrics import GroundingSums
from cover.intervals import Intervals
from cover.io.content_join import known_vids
from cover.io.gt_compact import compact_truth
from cover.io.jsonl import read_json_rows
from cover.io.opener import json_array
from cover.io.order_join import order_qids
from cover.io.predictions_bulk import TableJoin
from cover.io.regions_jsonl import LoadedRegions, regions_from_rows
from cover.io.regions_read import regions_kind
from cover.io.regions_windows import RowSources, sources_for
from cover.io.row_checks import RejectedRows
from cover.io.seen import SeenIds
from cover.io.truth_index import CompactTruth, TruthSeen
from cover.metric_sums import CodeUnitSums
from cover.metrics import EvaluationSums
from cover.regions import Regions
from cover.stream.fit_columns import unit_codes
from cover.utf8 import as_text

#: Rows per batch: as ``cover certify``'s JSON-lines default (~1.1 KB per echoed line).
DEFAULT_BATCH_ROWS = 16_384


def _batch_readers(path: str | Path, batch_rows: int, columns: str | None,
                   calibrator: str | None, whole: bool = False
                   ) -> Iterator[Callable[..., LoadedRegions]]:
    """Per batch of ``batch_rows`` rows (lines numbered as in the file; Parquet rows from
    1), a call ``read(seen=..., first=...)`` that checks it as
    :func:`cover.io.regions_jsonl.regions_from_rows` does, in bulk where the batch is
    clean: JSON lines by :func:`cover.io.regions_batch.load_regions`, Parquet and CSV by
    :func:`cover.stream.evaluate_tables.region_readers` (CSV with the calibrator fields of
    ``calibrator``, a saved calibrator: None, not known). ``whole``: one call reading
    every batch so (:func:`collected`); a JSON array file is parsed whole
    (:func:`cover.io.jsonl.read_json_rows`). An empty file is an error."""
    from cover.stream.evaluate_tables import calibrator_of, region_readers

    if batch_rows < 1:
        raise ValueError(f"batch_rows must be >= 1, got {batch_rows}")
    kind = regions_kind(path)
    # JSON lines: where each row's base windows are (--columns, else a detected layout)
    windows = sources_for(path, columns)[0] if kind == "jsonl" else None
    if kind == "jsonl" and json_array(path):
        yield partial(regions_from_rows, read_json_rows(path), windows=windows)
        return
    readers = (_line_readers(path, batch_rows, windows) if kind == "jsonl" else
               region_readers(path, kind, batch_rows, columns, *calibrator_of(calibrator)))
    if whole:
        yield partial(collected, readers)
    else:
        yield from readers


def _line_readers(path: str | Path, batch_rows: int,
                  windows: RowSources | None
                  ) -> Iterator[Callable[..., LoadedRegions]]:
    from cover.io.lines import line_batches
    from cover.io.regions_batch import load_regions

    empty = True
    for batch in line_batches(path, batch_rows):
        empty = False
        yield partial(load_regions, str(path), batch, windows=windows)
    if empty:
        raise InputError(f"{path}: the file is empty (expected one JSON object per line)")


def collected(readers: Iterator[Callable[..., LoadedRegions]], *, seen: Any = None,
              first: tuple[dict[str, Any], int] | None = None) -> LoadedRegions:
    """Every batch of ``readers`` read as the stream reads it (a qid repeated across
    batches found by a :class:`~cover.io.seen.SeenIds`, every row's calibrator fields
    against the first row's), joined into one: the in-memory read is the streamed read."""
    seen = SeenIds() if seen is None else seen
    join = TableJoin()  # each batch's table joined as it is read (its windows copied once)
    regions: list[Regions] = []
    problems: list[RowProblem] = []
    in_cal: list[NDArray[np.bool_]] = []
    absent: list[NDArray[np.bool_]] = []
    rejected, last_meta = 0, {}
    for read in readers:
        got = read(seen=seen, first=first)
        if first is None and got.meta_line is not None:
            first = got.meta, got.meta_line
        join.add(replace(got.table, records=None))
        regions.append(got.regions)
        problems += got.problems
        in_cal.append(got.in_calibration)
        absent.append(np.zeros(len(got.table), dtype=bool) if got.vid_absent is None
                      else got.vid_absent)
        rejected += got.rejected_at_certify
        last_meta = got.meta
    meta, meta_line = first if first is not None else (last_meta, None)
    reasons = [r.abstain_reason for r in regions]
    return LoadedRegions(
        join.table(),
        replace(regions[0], intervals=Intervals.concat([r.intervals for r in regions]),
                duration=np.concatenate([r.duration for r in regions]),
                refused=np.concatenate([r.refused for r in regions]),
                threshold=np.concatenate([r.threshold for r in regions]),
                abstain_reason=None if all(r is None for r in reasons) else np.concatenate(
                    [np.full(len(g), None) if r is None else r
                     for r, g in zip(reasons, regions, strict=True)])),
        problems, rejected, meta, np.concatenate(in_cal), meta_line,
        vid_absent=(vid_absent if (vid_absent := np.concatenate(absent)).any() else None))


@dataclass
class StreamedEvaluation:
    """What :func:`evaluate_stream` kept: the sums, the counts and the problems found
    reading the rows and joining them to the truth, tallied
    (:class:`~cover.errors.ProblemTally`: counts and the first few, bounded memory)."""

    sums: EvaluationSums
    grounding: GroundingSums
    meta: dict[str, Any]
    read_problems: ProblemTally = field(default_factory=ProblemTally)
    join_problems: ProblemTally = field(default_factory=ProblemTally)
    rejected_at_certify: int = 0
    ground_truth_not_certified: int = 0
    in_calibration: int = 0
    same_as_calibration: bool = False
    windows: int = 0
    batches: int = 0
    #: ``(matched, regions rows, by qid, how)`` when the truth was joined otherwise than
    #: by qid: by order within each video, or on (vid, query text).
    content_join: tuple[int, int, int, str] | None = None
    #: Rows that named no vid and took their query's from the truth (by qid).
    vid_from_truth: int = 0
    #: Per evaluated row, in file order: covered, and the ``covariates`` asked for.
    covered: list[NDArray[np.bool_]] = field(default_factory=list)
    covariates: list[NDArray[np.float64]] = field(default_factory=list)


def evaluate_stream(
    path: str | Path,
    gt: GroundingTable | CompactTruth,
    *,
    target: str = "envelope",
    refusal_policy: str = "whole-video",
    batch_rows: int = DEFAULT_BATCH_ROWS,
    columns: str | None = None,
    calibrator: str | None = None,
    whole: bool = False,
    covariates: tuple[str, ...] = (),
    on_meta: Callable[[dict[str, Any]], None] | None = None,
    keep_problems: int | None = KEEP,
    truth_rejected: NDArray[np.str_] | None = None,
    truth_rejected_rows: RejectedRows | None = None,
) -> StreamedEvaluation | None:
    """The sums of ``cover evaluate`` over ``path`` against ``gt``, one batch at a time,
    or the whole file as one batch (``whole``), see the module doc; None when a join on
    content might match more rows (only ``whole`` decides it). Per row, the covered flag
    and ``covariates`` are kept when some are asked for (``--diagnostics``). Bad rows
    are collected, never raised: the caller applies ``--on-error``. ``on_meta`` gets the
    calibrator fields the rows share once the first batch has them (a check that may
    stop the run before the rest is read). ``keep_problems``: the problems of each action
    kept as examples (None: every one); all are counted. ``truth_rejected``: the qids of
    ground-truth rows the reader rejected (their regions say so); ``truth_rejected_rows``
    those rows, whose places a join by order within each video keeps (else a video's
    later queries would meet the truth of the next)."""
    from cover.calibrate.covariates import covariate_matrix
    from cover.io.order_join import join_truth

    truth = gt if isinstance(gt, CompactTruth) else compact_truth(gt)
    # One batch: its own duplicate check is enough; else qids are marked per truth row.
    seen = None if whole else TruthSeen(truth)
    ref: tuple[dict[str, Any], int] | None = None
    out = StreamedEvaluation(EvaluationSums(target=target, refusal_policy=refusal_policy,
                                            units=True), GroundingSums(), {},
                             ProblemTally(keep_problems), ProblemTally(keep_problems))
    # Streamed, each row's video is its truth row's: per-video sums by code, one slot a
    # unit (a sorted merge of unit text held several copies of every unit at its peak).
    unit_of_vid = None if whole else unit_codes(truth.vids)
    if unit_of_vid is not None:
        out.sums.units = CodeUnitSums(int(unit_of_vid.max()) + 1 if unit_of_vid.size else 0)
    agree = bound = 0
    n_cal: int | None = None
    digest_qids: list[NDArray[np.str_]] | None = []
    n_joined = read_rows = 0
    trims = RowTrim()
    for read in _batch_readers(path, batch_rows, columns, calibrator, whole):
        out.batches += 1
        trims.after(read_rows)  # the previous batches' pages go back before this one is read
        loaded = read(seen=seen, first=ref)
        read_rows = len(loaded.table)
        if ref is None and loaded.meta_line is not None:
            ref = loaded.meta, loaded.meta_line
            n_cal = loaded.meta.get("n_calibration")
            if on_meta is not None:
                on_meta(loaded.meta)
        # In line order (the reader's rules each name their rows): the same first ones
        # whatever the batch size, and as a whole read lists them.
        out.read_problems.add(sorted(loaded.problems, key=attrgetter("line")))
        out.rejected_at_certify += loaded.rejected_at_certify
        j, hit = truth.find(loaded.table.qid)
        rtab = loaded.table
        if loaded.vid_absent is not None:  # a row naming no video is on its query's
            rtab, taken = _vid_of_query(rtab, loaded.vid_absent & hit, truth, j)
            out.vid_from_truth += taken
        both = hit & truth.same_vid(j, rtab.vid)
        if not both.all():  # else every vid is known as written
            rtab = replace(rtab, vid=known_vids(rtab.vid, truth.known_vids()))
            both = hit & truth.same_vid(j, rtab.vid)
        if whole:  # every row is here: the join on (vid, query text) is decided
            gt_table = truth.table()
            joined_as = join_truth(rtab, gt_table, truth_rejected_rows)
            gtab = joined_as.gt
            if gtab is not gt_table:
                truth = compact_truth(gtab)
                out.content_join = (joined_as.matched, len(rtab), joined_as.agree,
                                    joined_as.how)
                if joined_as.rejected.size:  # a region on a rejected row's place: told so
                    truth_rejected = np.union1d(
                        np.empty(0, str) if truth_rejected is None else truth_rejected,
                        joined_as.rejected)
                j, hit = truth.find(rtab.qid)
            del gt_table, gtab
        else:
            agree += int(both.sum())
            bound += int(both.sum()) if both.all() else (
                len(rtab) if order_qids(rtab) else truth.content_hits(rtab))  # order: any
            if bound > agree:
                return None  # a join on content might match more: the whole file decides
        truth.used[j[hit]] = True
        joined, problems = attach_truth(rtab, truth.take(np.sort(j[hit])),
                                        strict=False, truth_rejected=truth_rejected)
        out.join_problems.add(sorted(problems, key=attrgetter("line")))
        idx, _ = index_of(loaded.table.qid, joined.qid)
        out.in_calibration += int(loaded.in_calibration[idx].sum())
        regions = replace(loaded.regions.take(idx), duration=joined.duration)
        # a joined row's truth row is its input row's (j; found once, above)
        codes = None if unit_of_vid is None else unit_of_vid[truth.vid_code[j[idx]]]
        covered = out.sums.add(regions, joined, codes)
        if covariates:
            out.covered.append(covered)
            out.covariates.append(covariate_matrix(joined, covariates))
        out.grounding.add(joined)
        if joined.pred_windows is not None:
            out.windows += int(joined.pred_windows.values.shape[0])
        # The digest check needs the qids only while they could be the calibration set.
        n_joined += len(joined)
        if digest_qids is not None:
            digest_qids.append(joined.qid)
            if isinstance(n_cal, int) and n_joined > n_cal:
                digest_qids = None
    out.meta = ref[0] if ref is not None else loaded.meta
    out.ground_truth_not_certified = int((~truth.used).sum())
    digest = out.meta.get("calibration_sha256")
    if digest_qids is not None and isinstance(digest, str) and n_joined:
        from cover.data.fitted_on import fitted_on

        out.same_as_calibration = fitted_on(np.concatenate(digest_qids))["sha256"] == digest
    return out


def _vid_of_query(table: GroundingTable, take: NDArray[np.bool_], truth: CompactTruth,
                  j: NDArray[np.int64]) -> tuple[GroundingTable, int]:
    """``table`` with the vid of each ``take`` row (one that names none, whose qid the
    truth has: truth row ``j``) the truth's, and how many rows took one."""
    n = int(take.sum())
    if not n:
        return table, 0
    vid = table.vid.astype(object)  # object: a truth vid may be longer than the qid
    vid[take] = as_text(truth.vids[truth.vid_code[j[take]]])
    return replace(table, vid=vid.astype(str)), n
