"""Otani et al. (BMVC 2020) multi-annotator re-annotations of Charades-STA and ActivityNet.

CSV files with header ``HITId,video_id,description,start,end``: one row per
(pair, worker), five workers per HIT. ``start`` and ``end`` are PERCENT of the
video's duration (0-100), not seconds. ``video_id`` is ``<vid>.mp4`` for Charades
and the YouTube id without ``v_`` for ActivityNet; ``description`` is the dataset's
sentence (ActivityNet's often with its leading space).

``annotator`` numbers the rows of one HIT 0..4 in file order: the k-th response to
a pair, not one person across pairs (AMT workers differ from HIT to HIT).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.rules import MAX_ID_CHARS, shown_id, too_long_id
from cover.errors import InputError, RowProblem
from cover.io.content_join import rank_within
from cover.io.jsonl import OnError, object_column, raise_on_rejections
from cover.utf8 import encodes_utf8

HEADER = ("HITId", "video_id", "description", "start", "end")


@dataclass(frozen=True)
class OtaniAnnotations:
    """Rows of one or more re-annotation files, in file order."""

    hit: NDArray[np.str_]
    video_id: NDArray[np.str_]
    description: NDArray[np.object_]
    start_pct: NDArray[np.float64]
    end_pct: NDArray[np.float64]
    annotator: NDArray[np.int64]
    path: NDArray[np.str_]
    line: NDArray[np.int64]
    problems: list[RowProblem]

    def __len__(self) -> int:
        return int(self.hit.size)

    @property
    def n_hits(self) -> int:
        return int(np.unique(self.hit).size)


def otani_files(folder: str | Path) -> list[Path]:
    """The ``test_*.csv`` files of a re-annotation folder, in name order."""
    files = sorted(Path(folder).glob("test_*.csv"))
    if not files:
        raise InputError(f"{folder}: no test_*.csv re-annotation files")
    return files


def read_otani(paths: str | Path | Sequence[str | Path], *, on_error: OnError = "raise"
               ) -> OtaniAnnotations:
    """Read re-annotation CSV files (a folder means its ``test_*.csv``). A row with a
    missing field, a percentage outside [0, 100] or ``start > end`` is rejected with
    file, line and HIT; under ``on_error='raise'`` that is an error."""
    if isinstance(paths, (str, Path)):
        paths = otani_files(paths) if Path(paths).is_dir() else [Path(paths)]
    cols: dict[str, list[object]] = {k: [] for k in ("hit", "vid", "desc", "s", "e", "path",
                                                    "line")}
    problems: list[RowProblem] = []
    for p in paths:
        if not Path(p).is_file():
            raise InputError(f"{p}: no such file")
        # surrogateescape: an undecodable byte rejects its row below, not the file.
        with open(p, newline="", encoding="utf-8", errors="surrogateescape") as fh:
            reader = csv.reader(fh)
            head = next(reader, None)
            if head is None or tuple(h.strip() for h in head) != HEADER:
                raise InputError(f"{p}:1: expected the header {','.join(HEADER)}, got "
                                 f"{','.join(head or [])!r}")
            for row in _rows(reader, p):
                line = reader.line_num
                why = (_check(row) if encodes_utf8("".join(row))
                       else "the row is not valid UTF-8 text")
                if why is not None:
                    problems.append(RowProblem(str(p), line, shown_id(row[0]) if row else None,
                                               why, "rejected"))
                    continue
                for key, v in zip(("hit", "vid", "desc"), row[:3], strict=True):
                    cols[key].append(v)
                cols["s"].append(float(row[3]))
                cols["e"].append(float(row[4]))
                cols["path"].append(str(p))
                cols["line"].append(line)
    raise_on_rejections(problems, on_error, ", ".join(str(p) for p in paths))
    hit = np.array(cols["hit"], dtype=str)
    return OtaniAnnotations(
        hit=hit, video_id=np.array(cols["vid"], dtype=str),
        description=object_column(cols["desc"]),
        start_pct=np.array(cols["s"], dtype=np.float64),
        end_pct=np.array(cols["e"], dtype=np.float64),
        annotator=rank_within(hit), path=np.array(cols["path"], dtype=str),
        line=np.array(cols["line"], dtype=np.int64), problems=problems)


def _rows(reader: Any, path: str | Path) -> Iterator[list[str]]:
    """The rows of ``reader``; a line the csv module cannot read (a field past its
    131,072-character limit, a NUL) is an error naming the file and line."""
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(f"{path}:{reader.line_num}: not a CSV row this reader takes "
                             f"({exc})") from None
        yield row


def _check(row: list[str]) -> str | None:
    if len(row) != len(HEADER):
        return f"expected {len(HEADER)} fields, got {len(row)}"
    if not row[0] or not row[1]:
        return "missing HITId or video_id"
    for key, v in (("HITId", row[0]), ("video_id", row[1])):
        if len(v) > MAX_ID_CHARS:  # no id, and its column would be as wide as it
            return too_long_id(len(v), key)
    try:
        s, e = float(row[3]), float(row[4])
    except ValueError:
        return f"start/end must be numbers, got {row[3]!r}, {row[4]!r}"
    if not (math.isfinite(s) and math.isfinite(e) and 0 <= s <= 100 and 0 <= e <= 100):
        return "start/end must be percentages of the duration in [0, 100]"
    if s > e:
        return "start > end"
    return None
