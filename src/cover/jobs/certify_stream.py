"""The streaming path of ``cover certify``: files of any size in bounded memory.

``cover certify`` streams when it can: Moment-DETR / Lighthouse JSON lines (every
input line echoed byte for byte, :func:`cover.stream.certify_jsonl`) and Parquet
given a column mapping (Parquet out, :func:`cover.stream.certify_parquet`). Other
formats (a whole JSON document, TimeChat, lmms-eval, ...) are read whole.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from cover.calibrate import Calibrator
from cover.errors import CoverWarning, InputError, RowProblem, report_lines
from cover.io.qids import read_qid_lines, unknown_qids

Stream = Literal["jsonl", "parquet", "csv"]
PARQUET_SUFFIXES = (".parquet", ".pq")
CSV_SUFFIXES = (".csv", ".tsv")


def streamable(preds: str | Path, pred_format: str | None, columns: str | None,
               output: str | Path | None = None) -> Stream | None:
    """Which streaming path reads ``preds``, or None when it must be read whole: JSON
    lines, Parquet with ``--columns`` and CSV/TSV with ``--columns`` written as CSV/TSV
    (a CSV input certified into JSON lines is read whole)."""
    from cover.io.generic import kind_suffix

    p = Path(preds)
    if p.suffix.lower() in PARQUET_SUFFIXES:
        return "parquet" if columns else None
    if kind_suffix(p) in CSV_SUFFIXES:
        wants_csv = output is not None and kind_suffix(Path(output)) == kind_suffix(p)
        return "csv" if columns and wants_csv else None
    if columns or pred_format not in (None, "moment-detr"):
        return None
    from cover.io import formats

    try:
        fmt, _ = formats.detect(p, "predictions")
    except InputError:
        return None  # the whole-file reader gives the full message
    if fmt.name != "moment-detr":
        return None
    try:
        with p.open("rb") as fh:
            head = fh.read(4096)
    except OSError:
        return None  # the whole-file reader says what is wrong with the file
    return None if head.lstrip()[:1] == b"[" else "jsonl"


def videos_index(videos: str | Path) -> tuple[NDArray[np.str_], NDArray[np.float64]]:
    """``(vids sorted, their durations)`` of a ``--videos`` file, as the streamed
    certifiers look durations up."""
    from cover.io.durations import read_video_durations

    vids, durs = read_video_durations(videos)
    order = np.argsort(vids)
    return np.asarray(vids)[order], np.asarray(durs, dtype=np.float64)[order]


def certify_streaming(
    kind: Stream,
    *,
    calibrator: str,
    preds: str,
    output: str,
    videos: str | None,
    qids: str | None,
    columns: str | None,
    clip: float,
    strict: bool,
    on_error: Literal["raise", "reject"],
    compact: bool,
    batch_rows: int,
) -> tuple[int, int, int, int]:
    """Certify ``preds`` into ``output`` batch by batch; prints what happened to every
    row and returns ``(rows, certified, refused, rejected)``."""
    from cover.stream import certify_jsonl, certify_parquet
    from cover.stream.csv import certify_csv

    cal = Calibrator.load(calibrator)
    inputs: list[str | Path | None] = [calibrator, videos, qids]
    vd = videos_index(videos) if videos else None
    problems: list[RowProblem] = []
    if kind in ("parquet", "csv"):
        if qids:
            raise InputError(f"--qids is not supported when streaming {kind}; filter the "
                             "file first, or certify it as JSON lines")
        if kind == "parquet":
            counts = certify_parquet(cal, preds, output, columns=columns, videos=vd,
                                     batch_rows=batch_rows, compact=compact, inputs=inputs)
        else:
            assert columns is not None  # streamable() streams CSV only with a mapping
            counts = certify_csv(cal, preds, output, columns=columns, videos=vd,
                                 batch_rows=batch_rows, compact=compact, on_error=on_error,
                                 inputs=inputs)
        for why, n in counts.reasons.most_common(4):
            print(f"cover: {n} row(s) rejected in {preds}: {why}", file=sys.stderr)
        problems = counts.examples
    else:
        wanted, lines = read_qid_lines(qids) if qids else (None, None)

        def unknown(seen: NDArray[np.str_]) -> list[RowProblem]:
            if qids is None or wanted is None or lines is None:
                return []
            return unknown_qids(qids, wanted, lines, seen, preds)

        counts, problems = certify_jsonl(
            cal, preds, output, videos=vd, videos_source=videos or "--videos (not given)",
            qids=wanted, clip=clip, strict=strict, compact=compact, on_error=on_error,
            batch_lines=batch_rows, inputs=inputs, before_commit=unknown)
        if counts.in_calibration:
            warnings.warn(CoverWarning(
                f"{counts.in_calibration} of the {counts.certified + counts.refused} rows "
                "certified are rows the calibrator was fitted on (marked "
                "cover.in_calibration); coverage measured on them does not test the "
                "guarantee"), stacklevel=1)
    if kind == "jsonl":
        for line in report_lines(problems, what=preds):
            print(line, file=sys.stderr)
    abst = f"abstained (whole video) {counts.abstained}, " if counts.abstained else ""
    print(f"certified {counts.certified}, refused (whole video) {counts.refused}, {abst}"
          f"rejected {counts.rejected} of {counts.rows} input rows (streamed in {counts.batches} "
          f"batch(es) of up to {batch_rows} rows)")
    print(f"wrote {output}")
    return counts.rows, counts.certified, counts.refused, counts.rejected
