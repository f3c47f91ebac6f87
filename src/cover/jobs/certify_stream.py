"""What every path of ``cover certify`` (:mod:`cover.jobs.certify`) shares: which
input streams (:func:`streamable`), the calibrator and its flag checks, the ``--videos``
index, the calibration-rows warning.

``cover certify`` streams when it can: Moment-DETR / Lighthouse JSON lines (every
input line echoed byte for byte, :func:`cover.stream.certify_jsonl`), Parquet given a
column mapping into Parquet (:func:`cover.stream.certify_parquet`) and CSV given a
mapping into CSV (:func:`cover.stream.csv.certify_csv`). Other formats (a whole JSON
document, TimeChat, lmms-eval, ...) are read whole.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Literal

from cover.calibrate import Calibrator
from cover.errors import CoverWarning, InputError, say
from cover.io.opener import json_array
from cover.io.video_index import VideoIndex

Stream = Literal["jsonl", "parquet", "csv"]


def streamable(preds: str | Path, pred_format: str | None, columns: str | None,
               output: str | Path | None = None) -> Stream | None:
    """Which streaming path reads ``preds``, or None when it must be read whole: JSON
    lines, Parquet with ``--columns`` written as Parquet and CSV/TSV with ``--columns``
    written as CSV/TSV (a CSV or Parquet input certified into JSON lines is read whole;
    no ``output``: the path that reads it)."""
    from cover.io.generic import CSV_SUFFIXES, PARQUET_SUFFIXES, kind_suffix

    p = Path(preds)
    if p.suffix.lower() in PARQUET_SUFFIXES:
        wants = output is None or kind_suffix(Path(output)) in PARQUET_SUFFIXES
        return "parquet" if columns and wants else None
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
    return None if json_array(p) else "jsonl"


def videos_index(videos: str | Path, what: str | Path = "the rows", *, vid_named: bool = True
                 ) -> VideoIndex:
    """The ``--videos`` durations as every certify path holds them (streamed, whole
    read, service): sorted UTF-8 keys beside float64 durations, a quarter of the memory
    of the keys as text, read by the one reading of the flag
    (:func:`cover.io.row_durations.read_row_durations`: by vid, or by qid from a ground
    truth, which is said, naming ``what`` the rows are). The rule is the run's, decided
    before any row is read, so every path of the run applies it."""
    from cover.io.row_durations import read_row_durations

    got = read_row_durations(videos, vid_named=vid_named)
    if got.truth_format is not None and got.index.by == "qid":
        why = ("the rows name no vid" if not vid_named else "--videos is a ground truth "
               "whose clips of one video differ in length")
        say(f"{what}: {why}; each row's duration is its query's in {videos} "
            f"({got.truth_format}, by qid)")
    elif got.truth_format is not None:
        say(f"{what}: each row's duration is its video's in the ground truth {videos} "
            f"({got.truth_format}, by vid)")
    return got.index


def load_calibrator(path: str, max_p: float | None,
                    relevance_from: str | None = None) -> Calibrator:
    """The calibrator at ``path``; ``--max-p`` needs one that kept its calibration scores,
    and ``--relevance-from`` must name the source it was fitted on
    (:func:`check_relevance`): errors naming the flag and the file, before any row is
    read."""
    cal = Calibrator.load(path)
    if max_p is not None and cal.score_sketch_ is None:
        raise InputError(f"--max-p needs per-row p-values, and {path} kept no calibration "
                         "scores: fit it with cover calibrate --keep-scores")
    check_relevance(relevance_from, recorded=cal.relevance, score=cal.score, where=path)
    return cal


def check_relevance(relevance_from: str | None, *, recorded: str, score: str | None,
                    where: str) -> None:
    """An :class:`InputError` naming ``--relevance-from`` and ``where`` (the calibrator
    file, or the regions file that records its fields) when the flag names another
    relevance source than the ``recorded`` one the calibrator was fitted on (its file's
    ``relevance``; a file without it was fitted on saliency). Without the flag the
    calibrator's source applies: thresholds fitted on one signal mean nothing on another."""
    if relevance_from is None or relevance_from == recorded:
        return
    if score is not None and score != "sls":
        raise InputError(f"--relevance-from {relevance_from}: {where} is a {score.upper()} "
                         "calibrator, which reads no relevance signal (the flag applies to "
                         "SLS); drop --relevance-from")
    raise InputError(f"--relevance-from {relevance_from} contradicts {where}: its SLS "
                     f"thresholds were fitted on the relevance from {recorded}; drop "
                     f"--relevance-from to apply the calibrator as fitted, or fit one with "
                     f"cover calibrate --relevance-from {relevance_from}")


def calibration_warning(marked: int, certified: int) -> None:
    """Warn when ``marked`` of the ``certified`` rows (each given a region: certified,
    refused or abstained) are rows the calibrator was fitted on (each is marked
    ``cover.in_calibration`` in the output)."""
    if marked:
        warnings.warn(CoverWarning(
            f"{marked} of the {certified} rows certified are rows the calibrator was "
            "fitted on (marked cover.in_calibration); coverage measured on them does not "
            "test the guarantee"), stacklevel=2)
