"""Charades-RF ground truth (RaTSG's ``charades_sta_{val,test}2.0.json``): Charades-STA
test queries, half of them with NO relevant moment.

``vid -> {duration, sts: [{sentence, id, timestamp: [s, e] or [], no_answer}]}``.
qid = ``id`` (``<vid>-<n>``; for a no-answer query the prefix names the video the
sentence was borrowed from). Split unit: the Charades video id (the key).

What COVER does with a no-answer query: its guarantee is ``P(true moment ⊆ region)
>= 1 - alpha``, and a query without a moment has nothing to contain, so it can be
neither covered nor missed. Such rows are kept out of calibration and coverage and
are listed as ``noted`` problems ("no relevant moment"), one per query, so nothing
disappears unseen (:func:`cover.io.labelled.load_labelled` sets their predictions
aside too, with the same count). They remain the honest test of refusal: a grounder
that certifies a narrow region on them is confidently wrong; certify them with
``cover certify`` and count how many regions are the whole video (refused).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cover.data.ids import text_id_column
from cover.errors import InputError, RowProblem
from cover.io.columns import Columns, id_reasons, numbers, stack_windows, truth_table
from cover.io.document import key_lines, load_object
from cover.io.jsonl import OnError, object_column
from cover.io.qvhighlights import Loaded
from cover.ragged import take_index

UNIT = "source video: the Charades video id (the key)"
NO_MOMENT = "no relevant moment (no_answer): outside the coverage guarantee, set aside"


def sniff(doc: Any) -> bool:
    if not isinstance(doc, dict) or not doc:
        return False
    first = next(iter(doc.values()))
    return isinstance(first, dict) and "sts" in first and "duration" in first


def read_charades_rf(path: str | Path, *, on_error: OnError = "raise",
                     doc: Any = None) -> Loaded:
    """Read a Charades-RF file: answerable queries become truth rows; each no-answer
    query is a ``noted`` :class:`RowProblem` with :data:`NO_MOMENT`."""
    name = str(path)
    data, doc = load_object(path, doc, "a JSON object of videos")
    qids: list[str] = []
    vids: list[str] = []
    queries: list[Any] = []
    durs: list[Any] = []
    stamps: list[Any] = []
    empty: list[bool] = []
    for vid, entry in doc.items():
        sts = entry.get("sts") if isinstance(entry, dict) else None
        if not isinstance(sts, list):
            raise InputError(f"{name}: video {vid}: expected an object with an 'sts' list")
        for q in sts:
            q = q if isinstance(q, dict) else {}
            qids.append(str(q.get("id")))
            vids.append(vid)
            queries.append(q.get("sentence"))
            durs.append(entry.get("duration"))
            stamps.append(q.get("timestamp"))
            empty.append(bool(q.get("no_answer")))
    line = key_lines(data, qids)
    windows, offsets, bad = stack_windows(stamps, 2)
    no_moment = np.array(empty, dtype=bool)
    problems = [RowProblem(name, int(line[i]), qids[i], NO_MOMENT, "noted")
                for i in np.flatnonzero(no_moment & (np.diff(offsets) == 0)).tolist()]
    problems += [RowProblem(name, int(line[i]), qids[i],
                            "timestamp must be [start, end] or [] (no answer)", "rejected")
                 for i in bad]
    keep = ~(no_moment & (np.diff(offsets) == 0))
    keep[bad] = False
    rows = np.flatnonzero(keep)
    query = object_column(queries)
    t = numbers(durs)
    flat, off = take_index(offsets, rows)
    picked = rows.tolist()
    (qid, why_q), (vid, why_v) = (text_id_column([qids[i] for i in picked]),
                                  text_id_column([vids[i] for i in picked], "vid"))
    c = Columns(source=name, qid=qid, vid=vid, duration=t[rows],
                windows=windows[flat], offsets=off, line=line[rows], query=query[rows],
                problems=problems, reasons=id_reasons(why_q, why_v))
    return truth_table(c, on_error=on_error)


def no_moment_qids(loaded: Loaded) -> set[str]:
    """The qids a reader set aside as having no relevant moment."""
    return {p.qid for p in loaded.problems if p.action == "noted" and p.problem == NO_MOMENT
            and p.qid is not None}
