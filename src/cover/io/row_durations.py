"""The one reading of ``--videos`` (``cover certify``, ``cover serve``, ``cover
parse-answers``): a durations file by vid (:mod:`cover.io.durations`), else a ground truth
of any format: by vid where each of its videos has one duration (Charades-STA's text
file with its ``charades.json``), else by qid, each row's duration its query's (UAG-OOPS,
whose clips of one source video each have their own length), and by qid for rows that
name no vid."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cover.errors import InputError
from cover.io.durations import read_video_index
from cover.io.formats import Options, read
from cover.io.video_index import VideoIndex


@dataclass(frozen=True)
class RowDurations:
    """``--videos`` as the rows look it up (:func:`read_row_durations`): the index (by
    vid or by qid: :attr:`VideoIndex.by`), and the ground-truth format it was read in
    (None: a durations file)."""

    index: VideoIndex
    truth_format: str | None = None


def read_row_durations(path: str | Path, *, vid_named: bool = True) -> RowDurations:
    """The one reading of ``--videos`` (the module doc): a durations file by vid; else a
    ground truth of any format (:func:`cover.io.formats.read`), by vid when each video has
    one duration and the rows name theirs (``vid_named``), else by qid. A file that is
    neither is the durations reader's error. The API's ``--videos``: its ``index`` is the
    ``videos=`` of :func:`cover.stream.certify_jsonl` and the certify stage."""
    if vid_named:
        try:
            return RowDurations(read_video_index(path))
        except InputError as exc:
            got = _truth_durations(path, vid_named)
            if got is None:
                raise exc from None
            return got
    got = _truth_durations(path, vid_named)
    return got if got is not None else RowDurations(read_video_index(path))


def _truth_durations(path: str | Path, vid_named: bool) -> RowDurations | None:
    """The durations of ground truth ``path`` (see :func:`read_row_durations`); None when
    it reads as no ground truth."""
    try:
        gt = read(path, "ground_truth", options=Options(on_error="reject", keep_records=False))
    except InputError:
        return None
    t = gt.loaded.table
    vid, at = np.unique(t.vid.astype(str), return_inverse=True)
    lo, hi = np.full(vid.size, np.inf), np.full(vid.size, -np.inf)
    np.minimum.at(lo, at, t.duration)
    np.maximum.at(hi, at, t.duration)
    if vid_named and bool((hi - lo <= 1e-6).all()):  # one duration a video: a durations file
        return RowDurations(VideoIndex.of(vid, lo), gt.format)
    return RowDurations(VideoIndex.of(t.qid.astype(str), t.duration, by="qid"), gt.format)
