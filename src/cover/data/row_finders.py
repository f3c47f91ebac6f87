"""The validator's row finders: which rows of a table break each row rule, by numpy
passes over whole columns (Python runs only per bad row).

Each finder returns :data:`Found` entries ``(rows, field, reason or reasons)``;
:func:`cover.data.validate.validate_table` keeps, per row, the first rule it breaks.
:func:`plainly_valid` is the fast path: one blocked pass that proves every row keeps
every rule, so the others need not run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.ids import qid_text
from cover.data.rules import (
    BLOCK_ROWS,
    MAX_ID_CHARS,
    PRED_REVERSED,
    TRUTH_NONFINITE,
    TRUTH_REVERSED,
    duplicate_reason,
    id_problem,
    nonfinite_windows,
    repeats,
    reversed_windows,
)
from cover.data.shape import TableShape, raw_ids
from cover.ragged import segment_any

WHITESPACE = np.zeros(0x3001, dtype=bool)  # str.isspace() is False above U+3000
WHITESPACE[[c for c in range(0x3001) if chr(c).isspace()]] = True

#: :data:`WHITESPACE` and one more entry, False, for every code point above U+3000.
_SPACE_OR_ABOVE = np.append(WHITESPACE, False)

Found = list[tuple[NDArray[np.int64], str, str | list[str]]]  # rows, field, reason(s)


def id_rows(raw: NDArray[Any], key: str) -> Found:
    """Rows whose id breaks :func:`id_problem`, by dtype: integer columns pass whole,
    text columns by two character lookups per row and a count of inner NULs (lone
    surrogates only when a code point reaches them), anything else value by value."""
    kind = raw.dtype.kind
    if kind in "iu" or raw.size == 0:
        return []
    if kind == "U":
        codes = np.ascontiguousarray(raw).view(np.uint32).reshape(-1)
        width = codes.size // raw.size
        length = np.strings.str_len(raw)
        first = codes[::width]
        last = codes.take(np.arange(0, codes.size, width) + np.maximum(length - 1, 0))
        space = (_SPACE_OR_ABOVE.take(np.minimum(first, 0x3001))
                 | _SPACE_OR_ABOVE.take(np.minimum(last, 0x3001)))
        odd = (length == 0) | space | (length > MAX_ID_CHARS)
        grid = codes.reshape(raw.size, width)
        # an inner NUL (numpy keeps it; only trailing ones are padding): fewer non-NUL
        # code points than the length
        odd |= np.count_nonzero(grid, axis=1) != length
        if codes.max(initial=0) >= 0xD800:  # a lone surrogate (no character, no UTF-8)
            odd |= ((grid >= 0xD800) & (grid <= 0xDFFF)).any(axis=1)
        rows = np.flatnonzero(odd)
    else:
        rows = np.arange(raw.size, dtype=np.int64)
    whys = [id_why(raw[i], key) for i in rows.tolist()]
    hit = [j for j, w in enumerate(whys) if w is not None]
    return [(rows[hit], key, [whys[j] for j in hit])] if hit else []  # type: ignore[misc]


def id_why(value: Any, key: str) -> str | None:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, bytes):
        return f"{key} must be an integer or a string, got bytes"
    return id_problem(value, key)


def duplicate_rows(table: TableShape) -> Found:
    raw = raw_ids(table)
    keys = raw if raw.dtype.kind in "iuU" else qid_text(raw)
    rows, first = repeats(keys)
    if not rows.size:
        return []
    if table.line is None:
        whys = [f"duplicate qid (first seen at row {f})" for f in first.tolist()]
    else:
        whys = [duplicate_reason(int(table.line[f])) for f in first.tolist()]
    return [(rows, "qid", whys)]


def prediction_rows(table: TableShape) -> tuple[Found, bool]:
    """Rows whose top-1 interval is half missing, infinite or reversed, and whether one
    reaches outside ``[0, T]``. One pass finds the rows plainly inside ``[0, T]``; the
    rules look only at the others (refusals among them)."""
    ps, pe, t = table.pred_start, table.pred_end, table.duration
    with np.errstate(invalid="ignore"):
        plain = ps >= 0
        plain &= ps <= pe
        plain &= pe <= t
    odd = np.flatnonzero(~plain)
    if not odd.size:
        return [], False
    s, e, d = ps[odd], pe[odd], t[odd]
    with np.errstate(invalid="ignore"):
        out = bool(((s < 0) | (e > d)).any())
    field = "pred_start, pred_end"
    return [  # a NaN on either side is a refusal (has_interval), as it always was
        (odd[np.isinf(s) | np.isinf(e)], field, "non-finite number (inf)"),
        (odd[s > e], field, PRED_REVERSED),
    ], out


def plainly_valid(table: TableShape) -> bool:
    """Whether every row plainly keeps the duration, prediction and truth rules: a finite
    ``T > 0``, ``0 <= pred_start <= pred_end <= T`` (no refusal), and one true window
    with ``0 <= start <= end <= T``. One pass in cache-sized blocks (no full-length
    temporaries); any other table (refusals, multi-window truth, a bad row) is checked
    rule by rule to name its rows."""
    tr = table.truth
    if tr is not None and not tr.is_single:
        return False
    t, ps, pe = table.duration, table.pred_start, table.pred_end
    sides = [(ps, pe)] + ([] if tr is None else [(tr.starts, tr.ends)])
    ok = np.empty(min(len(table), BLOCK_ROWS), dtype=bool)
    # The ufuncs' own reductions: a block costs about a dozen calls, and the array
    # methods' Python wrappers added some 8 % to the pass.
    low, high, every = np.minimum.reduce, np.maximum.reduce, np.logical_and.reduce
    le = np.less_equal
    with np.errstate(invalid="ignore"):
        for i in range(0, len(table), BLOCK_ROWS):
            j = i + BLOCK_ROWS
            d = t[i:j]
            if not (low(d) > 0 and high(d) < np.inf):  # NaN fails the min
                return False
            o = ok[:d.size]
            for s, e in sides:  # 0 <= s (a NaN minimum fails), s <= e, e <= T
                s, e = s[i:j], e[i:j]
                if not (low(s) >= 0.0 and every(le(s, e, out=o)) and every(le(e, d, out=o))):
                    return False
    return True


def truth_rows(table: TableShape, plain: bool = False) -> tuple[Found, bool]:
    """Rows whose truth is empty, non-finite or reversed (and whether a window reaches
    outside ``[0, T]``); rows whose relevance holds a non-finite value. ``plain``: the
    windows are known to keep the rules (:func:`_plain`)."""
    found: Found = []
    rel = table.relevance.values
    if rel.size and not np.isfinite(rel).all():
        found.append((np.flatnonzero(segment_any(~np.isfinite(rel), table.relevance.offsets)),
                      "relevance", "non-finite number in relevance"))
    tr = table.truth
    if tr is None or plain:
        return found, False
    t = table.duration if tr.is_single else table.duration[tr.rows]
    with np.errstate(invalid="ignore"):
        inside = tr.starts >= 0  # with a known T, plain windows are finite too
        inside &= tr.starts <= tr.ends
        inside &= tr.ends <= t
    if inside.all() and (tr.is_single or (tr.n_components > 0).all()):
        return found, False
    found += [
        (np.flatnonzero(tr.n_components == 0), "truth", "no true window (no moment)"),
        (np.flatnonzero(nonfinite_windows(tr.starts, tr.ends, tr.offsets)), "truth",
         TRUTH_NONFINITE),
        (np.flatnonzero(reversed_windows(tr.starts, tr.ends, tr.offsets)), "truth",
         TRUTH_REVERSED),
    ]
    with np.errstate(invalid="ignore"):
        return found, bool(((tr.starts < 0) | (tr.ends > t)).any())
