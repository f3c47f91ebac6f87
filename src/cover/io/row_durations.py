"""The one reading of ``--videos`` (``cover certify``, ``cover serve``, ``cover
parse-answers``): a durations file by vid (:mod:`cover.io.durations`), else a ground truth
of any format by qid, each row's duration its query's (UAG-OOPS, whose clips of one
source video each have their own length; rows that name no vid)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cover.errors import InputError
from cover.io.durations import read_video_index
from cover.io.formats import Options, read
from cover.io.video_index import VideoIndex


@dataclass(frozen=True)
class RowDurations:
    """``--videos`` as the rows look it up (:func:`read_row_durations`): the index, and
    the ground-truth format it was read in when it is keyed by qid (None: by vid)."""

    index: VideoIndex
    truth_format: str | None = None


def read_row_durations(path: str | Path, *, vid_named: bool = True) -> RowDurations:
    """The one reading of ``--videos`` (certify, serve, parse-answers): a durations file
    by vid; else, or for rows that name no vid (``vid_named=False``: each one's vid is its
    qid), a ground truth of any format (:func:`cover.io.formats.read`) by qid: each row's
    duration is its query's. A file that is neither is the durations reader's error."""
    if vid_named:
        try:
            return RowDurations(read_video_index(path))
        except InputError as exc:
            got = _query_durations(path)
            if got is None:
                raise exc from None
            return got
    got = _query_durations(path)
    return got if got is not None else RowDurations(read_video_index(path))


def _query_durations(path: str | Path) -> RowDurations | None:
    """The durations of the queries of ground truth ``path``, keyed by qid; None when it
    reads as no ground truth."""
    try:
        gt = read(path, "ground_truth", options=Options(on_error="reject", keep_records=False))
    except InputError:
        return None
    t = gt.loaded.table
    return RowDurations(VideoIndex.of(t.qid.astype(str), t.duration, by="qid"), gt.format)
