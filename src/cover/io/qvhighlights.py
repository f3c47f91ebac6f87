"""QVHighlights / Moment-DETR / Lighthouse JSON-lines: predictions and ground truth.

Prediction rows: ``qid``, ``vid``, ``pred_relevant_windows`` (``[[s, e, score], ...]``),
optionally ``pred_saliency_scores`` (one float per clip), ``duration``,
``start_std``/``end_std``. The top-1 interval is the highest-scoring window (ties:
the earlier one in the list), not "the first one".

Ground-truth rows: ``qid``, ``vid``, ``duration``, ``relevant_windows``
(``[[s, e], ...]``), optionally ``query``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from cover.data.rules import (
    DURATION_RULE,
    TRUTH_NONFINITE,
    TRUTH_REVERSED,
    check_clip,
    in_line_order,
    nonfinite_windows,
    reversed_windows,
)
from cover.data.table import DEFAULT_CLIP_SECONDS
from cover.errors import InputError, check_on_error, summarize
from cover.intervals import Intervals
from cover.io.fields import (
    bad_number,
    first_reason,
    float_field,
    ragged_field,
    reject_rows,
    table_of,
    trim_ragged,
)
from cover.io.jsonl import (
    OnError,
    check_ids,
    check_required,
    check_unique_qids,
    id_problem,
    json_text,
    number_value,
    raise_on_rejections,
    read_json_rows,
)
from cover.io.prediction_rows import Loaded, prediction_rules, predictions_from_rows, top1
from cover.io.predictions_bulk import bulk_predictions
from cover.io.saliency_labels import label_columns, label_problems, saliency_labels


def read_predictions(
    path: str | Path, *, clip: float = DEFAULT_CLIP_SECONDS, on_error: OnError = "raise",
    keep_records: bool = True,
) -> Loaded:
    """Read a Moment-DETR-style prediction file into a :class:`GroundingTable`.

    A row with no window is a refusal (certified as the whole video). Rows with a
    non-finite number, a window with ``s > e``, a bad duration, a duplicate qid or a
    missing field are rejected with a reason; under ``on_error='raise'`` they raise.
    ``clip`` (seconds per relevance value) must be a finite number > 0.
    ``keep_records=False`` lets a clean file's table drop its parsed rows (``records``
    None); a file read row by row keeps them.
    """
    check_on_error(on_error)
    check_clip(clip)
    # A clean file is read as the streams read it (in batches, checked column by column);
    # anything else row by row, which words every message and rejection.
    bulk = bulk_predictions(path, clip=clip, keep_records=keep_records)
    if bulk is not None:
        return bulk
    return predictions_from_rows(read_json_rows(path), clip=clip, on_error=on_error)


def truth_rules(duration: NDArray[np.float64], win: NDArray[np.float64],
                woff: NDArray[np.int64]) -> list[tuple[NDArray[np.bool_], str]]:
    """The rules a ground-truth row's numbers obey, as ``(bad rows, why)`` in the order
    they are checked (the bulk read, :mod:`cover.io.gt_lean`, keeps a file only when no
    row breaks one)."""
    return [
        (bad_number(duration, np.ones(duration.size, dtype=bool), positive=True),
         DURATION_RULE),
        (np.diff(woff) == 0, "relevant_windows is empty (no true moment)"),
        (nonfinite_windows(win[:, 0], win[:, 1], woff), TRUTH_NONFINITE),
        (reversed_windows(win[:, 0], win[:, 1], woff), TRUTH_REVERSED),
    ]


def read_ground_truth(path: str | Path, *, on_error: OnError = "raise") -> Loaded:
    """Read QVHighlights-style ground truth (``relevant_windows``, ``duration``, and
    the highlight labels ``relevant_clip_ids`` / ``saliency_scores`` when present:
    :mod:`cover.io.saliency_labels`).

    Windows partly outside ``[0, T]`` are kept here and clipped (with a count) when
    truth is attached; rows with ``s > e``, non-finite numbers, no window, a bad
    duration, a missing field or a duplicate qid are rejected with a reason.
    """
    check_on_error(on_error)
    raw = read_json_rows(path)
    check_required(raw, ("qid", "vid", "duration", "relevant_windows"))
    check_ids(raw)
    check_unique_qids(raw)
    win, woff = ragged_field(raw, "relevant_windows", (2,), optional=False)
    win = win[:, :2]
    duration, _ = float_field(raw, "duration")
    reasons = first_reason(truth_rules(duration, win, woff))
    keep = reject_rows(raw, label_problems(*label_columns(raw.records)[:2]) | reasons)
    win, woff = trim_ragged(keep, win, woff)
    table = table_of(raw, duration=duration[keep],
                     truth=Intervals(win[:, 0].copy(), win[:, 1].copy(), woff),
                     truth_saliency=saliency_labels(*label_columns(raw.records)))
    raise_on_rejections(raw.problems, on_error, raw.path)
    return Loaded(table, raw.problems, raw.rejected)


#: What a durations file (``--videos``, ``--gt-durations``) holds: the flags' help and the
#: error for a file that is none say it in these words.
DURATIONS_SHAPES = ("JSON lines with vid and duration, or a JSON object vid -> {duration} "
                    "(charades.json; a TACoS split: num_frames / fps)")


def read_durations(path: str | Path) -> tuple[NDArray[np.str_], NDArray[np.float64]]:
    """``(vid, duration)`` from any JSON-lines annotation file with those two fields
    (QVHighlights' unlabelled release files qualify). Rows lacking either are skipped:
    they cannot say anything about a video's length. A line that cannot be read (not
    JSON, not an object, not UTF-8) is an error naming it, as are conflicting durations
    for one vid: a video whose line is lost would otherwise lose its duration unsaid."""
    raw = read_json_rows(path)
    if raw.problems and not raw.records:  # no line is JSON: another kind of file
        raise InputError(f"{raw.path}: not a durations file (none of its lines is JSON): "
                         f"{DURATIONS_SHAPES}; Charades-STA's text ground truth has no "
                         "durations: its videos' are in charades.json\n"
                         f"{summarize(in_line_order(raw.problems), limit=2)}")
    if raw.problems:
        raise InputError(f"{len(raw.problems)} line(s) of {raw.path} cannot be read (the "
                         f"durations of their videos would be lost):\n"
                         f"{summarize(in_line_order(raw.problems))}")
    vids: list[str] = []
    durs: list[float] = []
    for rec, line in zip(raw.records, raw.lines.tolist(), strict=True):
        v, d = rec.get("vid"), rec.get("duration")
        if v is None or d is None:
            continue
        why = id_problem(v, "vid")
        if why is not None:
            raise InputError(f"{raw.path}:{line}: {why}")
        t = number_value(d)
        if not (math.isfinite(t) and t > 0):
            raise InputError(f"{raw.path}:{line}: vid {v}: duration must be a finite number "
                             f"> 0, got {json_text(d)}")
        vids.append(str(v))
        durs.append(t)
    if not vids:
        raise InputError(f"{raw.path}: no row has both 'vid' and a numeric 'duration'")
    vid = np.array(vids, dtype=str)
    dur = np.array(durs, dtype=np.float64)
    uniq, inv = np.unique(vid, return_inverse=True)
    lo = np.full(uniq.size, np.inf)
    hi = np.full(uniq.size, -np.inf)
    np.minimum.at(lo, inv, dur)
    np.maximum.at(hi, inv, dur)
    clash = np.flatnonzero(hi - lo > 1e-6)
    if clash.size:
        raise InputError(f"{raw.path}: vid {uniq[clash[0]]} has conflicting durations "
                         f"({lo[clash[0]]} and {hi[clash[0]]})")
    return uniq, lo


# The per-row checks live in cover.io.prediction_rows (below the bulk reads, which defer
# to them); the readers import them from here too.
__all__ = ["Loaded", "prediction_rules", "predictions_from_rows", "read_durations",
           "read_ground_truth", "read_predictions", "top1", "truth_rules"]
