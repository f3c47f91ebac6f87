"""``cover certify`` as one job: the route by output name, then the streamed or whole read.

:func:`certify` picks the path once, before any work (:func:`route`): **the output
format follows the output name** (``.parquet``/``.pq``: Parquet, ``.csv``/``.tsv``: CSV
rows with cover columns, anything else: JSON lines), and a name the input cannot be
written as is an error naming ``-o``. Whichever path reads the rows, they go through
the one certify stage (:mod:`cover.stream.stage`): the same ids, durations, clipping,
duplicate check, calibrator, ``--max-p`` and calibration-row marks on every format.
The whole read (any format of ``cover formats``, ``--in-memory``) is one batch through
that stage (:func:`certify_whole`); the streamed ones send it batch after batch
(:func:`certify_streaming`), and ``--in-memory`` JSON lines are the stream's one batch
(the same bytes out); what both share is in :mod:`cover.jobs.certify_stream`. Under
``--on-error raise`` every path reads every row before it stops, and names the same
rows.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from cover.data.rules import OnError
from cover.errors import InputError, ProblemTally, RowProblem, report_problems, say
from cover.io.generic import parse_columns
from cover.io.mapping_guard import refuse_csv_proposals
from cover.io.opener import CSV_SUFFIXES, PARQUET_SUFFIXES, kind_suffix, suffix_kind
from cover.io.qids import read_qid_lines, unknown_qids
from cover.jobs.certify_stream import (
    Stream,
    calibration_warning,
    load_calibrator,
    streamable,
    videos_index,
)

if TYPE_CHECKING:
    from cover.data.table import GroundingTable
    from cover.io.prediction_rows import Loaded
    from cover.stream.stage import StreamCounts

#: ``--in-memory`` JSON lines: every line in one batch of the stream.
ONE_BATCH = 1 << 62
#: Tables whose rows a whole read keeps only the ids of (their fields are read again
#: for the JSON-lines output: :func:`_whole_rows`).
TABLE_SUFFIXES = (*CSV_SUFFIXES, *PARQUET_SUFFIXES)


@dataclass(frozen=True)
class CertifyJob:
    """The arguments of one ``cover certify`` run."""

    calibrator: str
    preds: str
    output: str
    videos: str | None = None
    qids: str | None = None
    columns: str | None = None
    pred_format: str | None = None
    clip: float = 2.0
    strict: bool = False
    on_error: OnError = "raise"
    max_p: float | None = None
    compact: bool = False
    in_memory: bool = False
    batch_rows: int = 16_384
    #: ``--relevance-from``: checked against the calibrator's recorded source, which
    #: is the one applied (:func:`cover.jobs.certify_stream.load_calibrator`).
    relevance_from: str | None = None


def route(job: CertifyJob) -> Stream | None:
    """The streamed path that writes ``job.output`` (None: the whole read, written as JSON
    lines), or an :class:`InputError` naming ``-o`` when the output name asks for a
    format this input cannot be written as."""
    whole = job.in_memory
    kind = streamable(job.preds, job.pred_format, job.columns, job.output)
    want = suffix_kind(job.output)  # the format the output name asks for
    if want == "jsonl":
        # --in-memory JSON lines are the stream's one batch (certify_streaming): the
        # same path, so the same bytes out.
        return kind if kind == "jsonl" else None
    if whole:
        kind = None
    if kind == want:
        return kind
    why = ("--in-memory writes JSON lines" if whole else
           "a Parquet output is written from a Parquet input read with --columns"
           if want == "parquet" else
           "a CSV output is written from a CSV input of the same kind read with --columns")
    raise InputError(f"-o {job.output}: the name asks for {want} output, but {why}; name "
                     "the output .jsonl for JSON lines")


def certify(job: CertifyJob) -> list[str]:
    """Run ``job``; returns its summary lines (what happened to every row, the file
    written)."""
    from cover.io.peek import field_names
    from cover.stream.output_fields import refuse_certified

    refuse_certified(job.preds, field_names(job.preds))  # before any work, every path
    kind = route(job)
    if kind is not None:
        return certify_streaming(kind, job)
    if job.compact:
        raise InputError("--compact applies to streamed inputs (Moment-DETR JSON lines, "
                         "Parquet with --columns, CSV with --columns written to .csv)")
    return certify_whole(job)


def certify_streaming(kind: Stream, job: CertifyJob) -> list[str]:
    """Certify ``job.preds`` into ``job.output`` batch by batch, every batch through the
    one certify stage (:class:`cover.stream.stage.CertifyStage`); reports the problems on
    standard error and returns the summary lines."""
    from cover.stream import certify_jsonl, certify_parquet
    from cover.stream.csv import certify_csv
    from cover.stream.stage import CertifyStage

    calibrator, preds, output, videos, qids = (job.calibrator, job.preds, job.output,
                                               job.videos, job.qids)
    cal = load_calibrator(calibrator, job.max_p, job.relevance_from)
    refuse_csv_proposals(preds, cal.relevance, f"{calibrator} was fitted on it")
    inputs: list[str | Path | None] = [calibrator, videos, qids]
    # a streamed JSON-lines row names its vid; a table's does where its mapping names one
    vd = videos_index(videos, preds, vid_named=job.columns is None
                      or "vid" in parse_columns(job.columns)) if videos else None
    source = videos or "--videos (not given)"
    wanted, lines = read_qid_lines(qids) if qids else (None, None)

    def unknown(seen: NDArray[np.str_]) -> list[RowProblem]:
        assert qids is not None and wanted is not None and lines is not None
        return unknown_qids(qids, wanted, lines, seen, preds)

    if kind in ("parquet", "csv"):
        stage = CertifyStage.of(cal, videos=vd, videos_source=source, qids=wanted,
                                strict=job.strict, max_p=job.max_p)
        assert job.columns is not None  # streamable() streams a table only with a mapping
        counts = (certify_parquet if kind == "parquet" else certify_csv)(
            cal, preds, output, columns=job.columns, batch_rows=job.batch_rows,
            compact=job.compact, on_error=job.on_error, inputs=inputs, stage=stage,
            before_commit=unknown if qids else None)
    else:
        counts, _ = certify_jsonl(
            cal, preds, output, videos=vd, videos_source=source, qids=wanted, clip=job.clip,
            strict=job.strict, compact=job.compact, on_error=job.on_error,
            batch_lines=ONE_BATCH if job.in_memory else job.batch_rows, inputs=inputs,
            before_commit=unknown if qids else None, max_p=job.max_p, every_problem=False)
    calibration_warning(counts.in_calibration,
                        counts.certified + counts.refused + counts.abstained)
    report_problems(counts.tally, what=preds)
    how = ("read whole" if job.in_memory else
           f"streamed in {counts.batches} batch(es) of up to {job.batch_rows} rows")
    return [summary_line(counts, how), f"wrote {output}"]


def summary_line(counts: StreamCounts, how: str) -> str:
    """What happened to the input rows, and the mean length of the regions written."""
    abst = f"abstained (whole video) {counts.abstained}, " if counts.abstained else ""
    return (f"certified {counts.certified}, refused (whole video) {counts.refused}, {abst}"
            f"rejected {counts.rejected} of {counts.rows} input rows ({how}); "
            + (f"mean region length {counts.mean_length:.1f} s"
               if counts.rows > counts.rejected else "no region written"))


def rejected_rows(preds: Loaded, problems: list[RowProblem]) -> list[tuple[int, Any, str]]:
    """``(line, row, reason)`` of every rejected row of ``preds``, one per rejected problem
    of its file, found by line and qid (the rows of a document may share a line): a row
    the stage rejected among the table's, else the one the reader set aside."""
    t = preds.table
    mine = [p for p in problems if p.action == "rejected" and p.path == t.source]
    if not mine:  # the usual case: no row's record is looked up
        return []
    by_row: dict[tuple[int, str | None], Any] = {}
    if t.line is not None and t.records is not None:
        # only the rows on a line with a rejected row: a few, not the file
        at = np.flatnonzero(np.isin(t.line, np.array([p.line for p in mine], dtype=np.int64)))
        by_row = {(int(t.line[i]), str(t.qid[i])): t.records[i] for i in at.tolist()}
    return [(p.line, by_row.get(p.key, preds.rejected.get(p.key)), p.problem) for p in mine]


def certify_whole(job: CertifyJob) -> list[str]:
    """The whole input as one batch through the certify stage, written as JSON lines."""
    from cover.io import formats
    from cover.io.regions_jsonl import certified_rows, write_certified
    from cover.row_status import REJECTED, row_status
    from cover.stream.stage import CertifyStage, StreamCounts

    cal = load_calibrator(job.calibrator, job.max_p, job.relevance_from)
    refuse_csv_proposals(job.preds, cal.relevance, f"{job.calibrator} was fitted on it")
    # The calibrator's source, not a layout's default (the regions are rebuilt from the
    # proposals by Calibrator.certify once the durations are known).
    # The reader sets its rejections aside: under --on-error raise they are raised with
    # the stage's below, in line order, as a stream raises them once every batch is read.
    got = formats.read(job.preds, "predictions", format=job.pred_format,
                       options=formats.Options(clip=job.clip, on_error="reject",
                                               columns=job.columns,
                                               relevance_from=cal.relevance))
    say(f"{job.preds}: {got.format} ({len(got.loaded.table)} rows)")
    preds = got.loaded
    wanted, lines = read_qid_lines(job.qids) if job.qids else (None, None)
    stage = CertifyStage.of(cal, videos=videos_index(job.videos, job.preds,
                                                     vid_named=got.vid_given)
                            if job.videos else None,
                            videos_source=job.videos or "--videos (not given)",
                            qids=wanted, strict=job.strict, max_p=job.max_p)
    done = stage.run(preds)
    # Counted and ended as a stream of one batch is (StreamCounts, end_of_input): the
    # reader's and the stage's problems in line order, then the --qids list's.
    counts = StreamCounts()
    rejected = rejected_rows(preds, done.problems)
    by_status = Counter(row_status(done.regions).tolist())  # an empty region: rejected
    by_status[REJECTED] += len(rejected)
    counts.add_staged(by_status, done)
    late: list[RowProblem] = []  # of the --qids list, after the rows' (as when streamed)
    if job.qids and wanted is not None and lines is not None:
        late = unknown_qids(job.qids, wanted, lines, stage.listed_seen(counts), job.preds)
    stage.end_of_input(ProblemTally.of(done.bad), counts, job.on_error, job.preds, late)
    calibration_warning(counts.in_calibration,
                        counts.certified + counts.refused + counts.abstained)
    table = done.table
    if job.columns is not None and kind_suffix(job.preds) in TABLE_SUFFIXES:
        table, rejected = _whole_rows(job.preds, job.columns, table, rejected)
    rows = certified_rows(table, done.regions, stage.meta, rejected,
                          in_calibration=done.in_calibration)
    write_certified(job.output, rows, inputs=[job.calibrator, job.preds, job.videos, job.qids])
    report_problems(counts.tally, what=job.preds)
    return [summary_line(counts, "read whole"), f"wrote {job.output}"]


def _whole_rows(preds: str, columns: str, table: GroundingTable,
                rejected: list[tuple[int, Any, str]]
                ) -> tuple[GroundingTable, list[tuple[int, Any, str]]]:
    """``table`` and the ``rejected`` rows of a CSV or Parquet table with every field of
    each row in its record (:func:`cover.io.table_rows.table_rows`; the reader keeps
    only the ids), the ids read first, as a JSON row's echo has them."""
    from dataclasses import replace

    from cover.io.jsonl import object_column
    from cover.io.table_rows import table_rows

    if table.records is None or table.line is None:
        return table, rejected
    whole = table_rows(preds, parse_columns(columns))
    recs = [r | whole.get(line, {}) if isinstance(r, dict) else r
            for r, line in zip(table.records.tolist(), table.line.tolist(), strict=True)]
    return (replace(table, records=object_column(recs)),
            [(line, r | whole.get(line, {}) if isinstance(r, dict) else r, why)
             for line, r, why in rejected])
