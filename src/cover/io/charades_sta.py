"""Charades-STA ground truth: ``<vid> <start> <end>##<sentence>``, one query per line.

The text file has no query id and no durations. COVER numbers each query by its
0-based line index (``qid = qid_offset + i``), the id TimeChat / TimeIT and
lmms-eval use; Moment-DETR-family repositories number the test file from 12404
instead, and their predictions join by (vid, query) text (see
:func:`cover.io.labelled.load_labelled`). Durations come from Charades'
``charades.json`` (``durations=``; by default the file of that name beside the text
file). Split unit: the Charades video id (``vid``).

Annotation noise: 562 of 3720 test (1802 of 12408 train) ends lie past the video's
duration; they are clipped to ``[0, T]`` and counted when truth is attached.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from cover.data.ids import text_id_column
from cover.errors import InputError, RowProblem
from cover.io.columns import Columns, truth_table
from cover.io.document import read_bytes
from cover.io.durations import lookup_durations, read_video_durations
from cover.io.jsonl import OnError, object_column
from cover.io.qvhighlights import Loaded
from cover.utf8 import encodes_utf8

LINE = re.compile(r"^(\S+) +(\S+) +(\S+?) *##(.*)$")
SNIFF = re.compile(rb"^\s*\S+ +\d+(\.\d+)? +\d+(\.\d+)? *##")
UNIT = "source video: the Charades video id (`vid`)"


def default_durations(path: str | Path) -> Path:
    return Path(path).with_name("charades.json")


def read_charades_sta(path: str | Path, *, durations: str | Path | None = None,
                      qid_offset: int = 0, on_error: OnError = "raise") -> Loaded:
    """Read a Charades-STA text file; ``qid = qid_offset + 0-based line index``.

    A line that does not parse, or whose times are not numbers, is rejected with its
    line; so is a query whose video has no duration in ``durations``.
    """
    name = str(path)
    dur_path = Path(durations) if durations is not None else default_durations(path)
    if not dur_path.is_file():
        raise InputError(
            f"{name}: Charades-STA text carries no video durations and {dur_path} does not "
            "exist; pass the durations file (--gt-durations charades.json, API: durations=)")
    # Decode line by line: one undecodable byte rejects its line, not the file.
    rows = read_bytes(path).decode("utf-8", errors="surrogateescape").splitlines()
    vids: list[str] = []
    starts: list[str] = []
    ends: list[str] = []
    queries: list[str] = []
    lines: list[int] = []
    problems: list[RowProblem] = []
    for i, row in enumerate(rows):
        if not row.strip():
            continue
        if not row.isprintable() and not encodes_utf8(row):
            problems.append(RowProblem(name, i + 1, str(qid_offset + i),
                                       "the line is not valid UTF-8 text", "rejected"))
            continue
        m = LINE.match(row.strip())
        if m is None:
            problems.append(RowProblem(name, i + 1, str(qid_offset + i),
                                       "expected '<vid> <start> <end>##<sentence>'",
                                       "rejected"))
            continue
        vids.append(m.group(1))
        starts.append(m.group(2))
        ends.append(m.group(3))
        queries.append(m.group(4))
        lines.append(i + 1)
    line = np.asarray(lines, dtype=np.int64)
    s = _numbers(starts)
    e = _numbers(ends)
    vid, long_vid = text_id_column(vids, "vid")
    qid = (line - 1 + qid_offset).astype(str)
    t = lookup_durations(vid, *read_video_durations(dur_path))
    query = object_column(queries)
    c = Columns(source=name, qid=qid, vid=vid, duration=t,
                windows=np.column_stack([s, e]), offsets=np.arange(vid.size + 1),
                line=line, query=query, problems=problems)
    missing = ~np.isfinite(t)
    for i in np.flatnonzero(missing).tolist():  # (an id too long has none, said so)
        problems.append(RowProblem(name, int(line[i]), str(qid[i]), long_vid.get(
            i, f"video {vid[i]} has no duration in {dur_path}"), "rejected"))
    c = _drop(c, missing)
    bad = ~np.isfinite(c.windows).all(axis=1)
    return truth_table(c, on_error=on_error, reasons={
        int(i): "start and end must be numbers (seconds)" for i in np.flatnonzero(bad)})


def _numbers(texts: list[str]) -> np.ndarray:
    """Parse decimal strings at once; anything else becomes NaN (rejected later)."""
    a = np.array(texts, dtype=str)
    out = np.full(a.size, np.nan)
    ok = np.char.str_len(a) > 0
    try:
        out[ok] = a[ok].astype(np.float64)
    except ValueError:
        for i in np.flatnonzero(ok).tolist():
            try:
                out[i] = float(a[i])
            except ValueError:
                out[i] = np.nan
    return out


def _drop(c: Columns, bad: np.ndarray) -> Columns:
    keep = ~bad
    return Columns(source=c.source, qid=c.qid[keep], vid=c.vid[keep],
                   duration=c.duration[keep], windows=c.windows[keep],
                   offsets=np.arange(int(keep.sum()) + 1), line=c.line[keep],
                   query=None if c.query is None else c.query[keep], problems=c.problems)
