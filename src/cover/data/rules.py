"""The row rules every reader and the Python API apply, each one vectorised function.

A rule is a boolean mask over rows (True: the row breaks it) with one reason text; the
JSON-lines and columnar readers (:mod:`cover.io.qvhighlights`, :mod:`cover.io.columns`),
the join (:mod:`cover.data.join`), the API's validator (:mod:`cover.data.validate`) and
the one-row certifier (:mod:`cover.stream.row`) call these same functions, so one bad
row gets one verdict and one reason wherever it enters. The words of a row's fate live
here too: what a reader does with a bad row (:data:`OnError`), how a value is named in a
message (:func:`json_text`, :func:`json_kind`), why a value is no id or no number. Nothing
here imports a reader.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.errors import (
    KEEP,
    InputError,
    ProblemTally,
    RowProblem,
    as_tally,
    check_on_error,
    summarize,
)
from cover.ragged import segment_any

#: Reasons shared word for word by the readers and the API.
DURATION_RULE = "duration must be a finite number > 0"
PRED_REVERSED = "a predicted window has start > end"
TRUTH_REVERSED = "a true window has start > end"
TRUTH_NONFINITE = "non-finite number in a window"
SALIENCY_NONFINITE = "non-finite number in pred_saliency_scores"
PRED_STRICT = "predicted interval reaches outside [0, T] (strict mode)"

#: What a reader does with a bad row: stop with an InputError, or set it aside.
OnError = Literal["raise", "reject"]


def json_kind(obj: Any) -> str:
    """The JSON name of a value's type, for messages (never a Python repr)."""
    if obj is None:
        return "null"
    if isinstance(obj, bool):
        return "true" if obj else "false"
    if isinstance(obj, (int, float)):
        return "a number"
    if isinstance(obj, str):
        return "a string"
    return "a list" if isinstance(obj, list) else "an object"


def json_text(value: Any, limit: int = 40) -> str:
    """A value as JSON text for messages (never a Python repr), cut to ``limit``."""
    if isinstance(value, np.generic):  # np.True_ is "true", as True is
        value = value.item()
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def not_a_number(odd: Any) -> str:
    """Why ``odd`` (a string, a boolean, null) is no number: ``holds the string "12.5"
    where a number is expected`` (the readers' and the API's words)."""
    what = "the string " if isinstance(odd, str) else ""
    return f"holds {what}{json_text(odd)} where a number is expected"


#: The longest id, in characters: ids are held as fixed-width text columns, each row as
#: wide as the longest, so one id of a million characters would make a column of
#: 16,384 rows 61 GB.
MAX_ID_CHARS = 1024


def too_long_id(length: int, key: str = "qid") -> str:
    """The reason an id of ``length`` characters is no id."""
    return f"{key} is {length:,} characters long; an id holds at most {MAX_ID_CHARS:,}"


def shown_id(text: str) -> str:
    """An id as messages show it: itself, or the start of one too long to be an id."""
    return text if len(text) <= MAX_ID_CHARS else f"{text[:40]}... ({len(text):,} characters)"


def ids_fit(*texts: list[str]) -> bool:
    """Whether every id of ``texts`` (lists of id text) is at most :data:`MAX_ID_CHARS`
    long: a bulk reader builds its text columns only then, and leaves a file with a longer
    one to the per-row reader, which rejects that row before any column is built."""
    return all(max(map(len, t), default=0) <= MAX_ID_CHARS for t in texts)


def id_problem(value: Any, key: str = "qid") -> str | None:
    """Why ``value`` cannot be an id (``qid``, ``vid``), or None: ids are integers or
    non-empty strings of at most :data:`MAX_ID_CHARS` characters, without surrounding
    spaces or lone surrogates. A float, even
    ``2579.0``, is refused because its text form differs from the integer's and joins
    would silently miss."""
    if isinstance(value, str):
        if not value:
            return f"{key} is an empty string"
        if len(value) > MAX_ID_CHARS:
            return too_long_id(len(value), key)
        if value != value.strip():
            return f"{key} {json.dumps(value)} has leading or trailing spaces"
        if "\x00" in value:  # numpy text drops trailing NULs: "5\0" would join as "5"
            return f"{key} {json.dumps(value)} contains a NUL character"
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:  # JSON "\ud800": no character, no UTF-8
                return (f"{key} holds a lone surrogate \\u{ord(value[exc.start]):04x}, "
                        "which is not a character; write the character itself")
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return None
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 2**53:
            return (f"{key} {value!r} is written as a float; write it as {int(value)} "
                    f"(an integer) or \"{int(value)}\" (a string)")
        return (f"{key} must be an integer or a string, got the number "
                f"{json.dumps(value) if math.isfinite(value) else str(value)}")
    return f"{key} must be an integer or a string, got {json_kind(value)}"


def in_line_order(problems: list[RowProblem]) -> list[RowProblem]:
    """``problems`` by line within each file, the files in the order they first appear:
    what a stream, reading a file's lines in order, finds first."""
    files: dict[str, int] = {}
    return sorted(problems, key=lambda p: (files.setdefault(p.path, len(files)), p.line))


#: The reason of a prediction row whose video has no known duration starts so.
NO_DURATION = "no duration known"
#: What to pass when rows have no duration (certify without --videos).
VIDEOS_HINT = ("Rows without a duration: pass --videos FILE (API: videos=), any jsonl with "
               "'vid' and 'duration' fields (QVHighlights' highlight_*_release.jsonl files "
               "qualify; no ground truth is needed).")


def raise_on_rejections(problems: list[RowProblem] | ProblemTally, on_error: OnError,
                        what: str, *, videos_given: bool = True) -> None:
    """Under ``on_error='raise'``, turn rejected rows into one clear :class:`InputError`:
    their count and the first five by line (a list, or a
    :class:`~cover.errors.ProblemTally` its stream filled in line order), whatever the
    order the rules found them in. ``videos_given=False`` (certify without ``--videos``):
    rows without a duration add what to pass. Any other ``on_error`` is a ValueError: it
    would read as "reject" here."""
    check_on_error(on_error)
    if on_error != "raise":
        return
    tally = as_tally(in_line_order(problems) if isinstance(problems, list) else problems,
                     KEEP)
    n = tally.count("rejected")
    if n:
        hint = not videos_given and any(
            k.startswith(NO_DURATION) for k in tally.kinds.get("rejected", ()))
        raise InputError(
            f"{n} bad row(s) in {what}:\n"
            f"{summarize(tally.examples('rejected', KEEP), limit=KEEP, total=n)}\n"
            + (VIDEOS_HINT + "\n" if hint else "")
            + "Fix these rows, or pass --on-error reject (API: on_error='reject') to set them "
            "aside with their reasons and go on."
        )


def with_files_of(what: str, late: Sequence[RowProblem]) -> str:
    """``what`` and, after it, every other file ``late`` problems name (a ``--qids``
    list's rows, checked once the predictions are read): the files an error's rows
    come from."""
    return " and ".join([what, *dict.fromkeys(p.path for p in late if p.path != what)])


def outside_video(start: float, end: float, duration: float) -> str:
    """The reason for a predicted interval :func:`wholly_outside` the video."""
    return (f"predicted interval [{start:g}, {end:g}] lies wholly outside the video "
            f"[0, {duration:g}]")


def bad_number(values: NDArray[np.float64], present: NDArray[np.bool_], *,
               positive: bool) -> NDArray[np.bool_]:
    """Present but not a finite number (> 0 when ``positive``, else >= 0)."""
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(values) & ((values > 0) if positive else (values >= 0))
    return present & ~ok


def nonfinite_windows(starts: NDArray[np.float64], ends: NDArray[np.float64],
                      offsets: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Rows with a window holding NaN or inf (windows ``offsets``-grouped by row)."""
    return segment_any(~(np.isfinite(starts) & np.isfinite(ends)), offsets)


def reversed_windows(starts: NDArray[np.float64], ends: NDArray[np.float64],
                     offsets: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Rows with a window whose start is after its end."""
    return segment_any(starts > ends, offsets)


def wholly_outside(ps: Any, pe: Any, t: Any) -> Any:
    """Where a predicted interval ``[ps, pe]`` lies wholly outside ``[0, t]`` (``pe < 0``
    or ``ps > t``), or is a proper interval that clipping would shrink to the point 0 or
    ``t``: clipping it would certify a sliver the grounder never predicted. Arrays or
    plain floats (the one-row certifier)."""
    return (pe < 0) | (ps > t) | ((pe > ps) & ((pe <= 0) | (ps >= t)))


def duplicate_reason(first_line: int) -> str:
    """The reason a repeated qid is rejected, naming the line the qid was first seen on
    (0: not known, e.g. an in-memory table: "seen on an earlier line")."""
    if first_line > 0:
        return f"duplicate qid (first seen on line {first_line})"
    return "duplicate qid (seen on an earlier line)"


def check_clip(clip: Any) -> float:
    """Seconds per relevance value: a finite number > 0 (not a boolean), else an error."""
    if not (isinstance(clip, (int, float)) and not isinstance(clip, bool)
            and math.isfinite(clip) and clip > 0):
        raise InputError(f"clip must be a finite number of seconds > 0, got {clip}")
    return float(clip)


#: Rows per block of the whole-column passes that run in blocks (the validator's plain
#: check, the increasing-ids test, widening, the sampled select; NORM/SEC scoring uses
#: half, :data:`cover.scores.BLOCK_ROWS`): the temporaries of a block (256 kB a float
#: column) stay in the processor's cache instead of making fresh full-length arrays.
#: The five columns of a labelled table's check fit a 2 MB L2 cache at this size (1e6
#: rows: the check about 10 % faster than at 1 << 16, widening 7 %).
BLOCK_ROWS = 1 << 15


def increasing(k: NDArray[Any]) -> bool:
    """Whether ``k`` is strictly increasing, block by block (no full-length mask; stops
    at the first block that is not)."""
    for i in range(0, k.size - 1, BLOCK_ROWS):
        a = k[i:i + BLOCK_ROWS + 1]
        if not bool((a[1:] > a[:-1]).all()):
            return False
    return True


def repeats(keys: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``(rows, first)``: every row whose key was seen on an earlier row, and the row of
    that key's first occurrence. Integer keys in increasing order (``np.arange``) cost
    one comparison pass; text keys are hashed and only rows of a repeated hash are
    compared exactly (a sort of the hashes, never of the strings)."""
    k = np.asarray(keys).reshape(-1)
    none = np.empty(0, dtype=np.int64)
    if k.size < 2:
        return none, none
    if k.dtype.kind in "iu":
        if increasing(k):
            return none, none
        h = k
    else:
        if k.dtype.kind != "U":
            k = k.astype(str)
        h = _text_hash(k)
    order = np.argsort(h, kind="stable")
    hs = h[order]
    same = hs[1:] == hs[:-1]
    if not same.any():
        return none, none
    near = np.zeros(k.size, dtype=bool)
    near[1:] |= same
    near[:-1] |= same
    cand = np.sort(order[near])
    _, first_idx, inverse = np.unique(k[cand], return_index=True, return_inverse=True)
    first = cand[first_idx[inverse.reshape(-1)]]
    dup = first != cand
    return cand[dup].astype(np.int64), first[dup].astype(np.int64)


def _text_hash(text: NDArray[np.str_]) -> NDArray[np.uint64]:
    """A 64-bit polynomial hash of each string, over its UTF-32 code units, two at a time."""
    a = np.ascontiguousarray(text)
    width = a.dtype.itemsize // 4
    codes = a.view(np.uint32).reshape(a.size, width)
    if width % 2:
        codes = np.concatenate([codes, np.zeros((a.size, 1), dtype=np.uint32)], axis=1)
    pairs = np.ascontiguousarray(codes).view(np.uint64)
    h = np.zeros(a.size, dtype=np.uint64)
    mult = np.uint64(0x100000001B3)
    for j in range(pairs.shape[1]):
        h *= mult
        h ^= pairs[:, j]
    return h
