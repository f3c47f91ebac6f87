"""One validator at the Python API's boundary: the readers' row rules on in-memory arrays.

:meth:`GroundingTable.from_arrays <cover.data.table.GroundingTable.from_arrays>` and
:meth:`Calibrator.fit` / :meth:`~cover.calibrate.calibrator.Calibrator.certify` (on a
table that did not come through it) call :func:`validate_table`. A row is rejected
(first failing rule wins) for:

* a ``qid`` / ``vid`` that is no id (:func:`cover.data.rules.id_problem`: a bool,
  a float, an object, an empty or space-padded string), a repeated qid;
* a duration that is not a finite number > 0 (NaN, "unknown", is allowed only in a
  table of predictions that is not being fitted or certified);
* a number column holding something else (``"150"``, ``True``);
* an infinite ``pred_start`` / ``pred_end`` (NaN, on either side, is a refusal),
  ``start > end``, or an interval wholly outside ``[0, T]``;
* a non-finite relevance value; a row without a true window, a non-finite true window,
  ``start > end``, or truth wholly outside ``[0, T]``.

Windows partly outside ``[0, T]`` are clipped and counted (a ``clipped`` problem and
one :class:`~cover.errors.CoverWarning`), or rejected with ``strict=True``: the
readers' join does the same with the same functions (:mod:`cover.data.join`). Under
``on_error="raise"`` any rejection is one :class:`~cover.errors.InputError` naming each
row (``row 3 (qid=7): ...``, or ``file:line`` for a table read from a file), the field
and the reason; under ``"reject"`` the rows are set aside and ``table.problems`` says
why. Every check is a numpy pass over whole columns; Python runs only per bad row.
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cover.data.join import clip_predictions, clip_truth
from cover.data.row_finders import (
    Found,
    duplicate_rows,
    id_rows,
    plainly_valid,
    prediction_rows,
    truth_rows,
)
from cover.data.rules import (
    DURATION_RULE,
    OnError,
    json_text,
    not_a_number,
    raise_on_rejections,
)
from cover.data.shape import ANSWERED, T, TableShape, raw_ids, require_table
from cover.data.shape import replace_keeping_ids as _replace
from cover.errors import CoverWarning, InputError, RowProblem

#: What a table has been checked for: the row rules (and clipping), unique qids, and
#: a known duration on every row. Fitting needs all three, certifying the first and last.
ROWS, UNIQUE, DURATIONS = "rows", "unique", "durations"
#: A mark of ``table.checked``: every qid and vid keeps the id rule, judged on the very
#: values :func:`validate_table` would judge (:func:`ids_checked`).
IDS = "ids"
FOR_FIT = frozenset({ROWS, UNIQUE, DURATIONS})
FOR_CERTIFY = frozenset({ROWS, DURATIONS})



def numbers(values: ArrayLike, name: str) -> tuple[NDArray[np.float64], dict[int, str]]:
    """A number column as floats, and row -> reason where an entry is not a number (NaN
    there): a string ``"150"`` or a boolean is never read as a number (as in the
    readers); None is NaN."""
    a = np.asarray(values)
    if a.dtype.kind in "iuf":
        return a.astype(np.float64, copy=False), {}
    flat = a.reshape(-1)
    out = np.full(flat.shape, np.nan)
    bad: dict[int, str] = {}
    for i, v in enumerate(flat.tolist()):  # only columns that are not numbers get here
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[i] = v
        elif v is not None:
            bad[i] = f"{name} {not_a_number(v)}"
    return out.reshape(a.shape), bad


def per_row_numbers(values: ArrayLike, n: int, name: str,
                    bad: dict[int, tuple[str, str]]) -> NDArray[np.float64]:
    """One float per row: a scalar is repeated, an array must have ``n`` values; an
    entry that is not a number (a string, a boolean) is NaN and noted in ``bad`` (row ->
    field, reason); a wrong count of values is an error naming the field."""
    a, why = numbers(values, name)
    if a.ndim == 0 or (a.shape == (1,) and n != 1):
        out = np.full(n, float(a.reshape(-1)[0]))
        for i in range(n) if why else ():
            bad.setdefault(i, (name, why[0]))
        return out
    if a.shape != (n,):
        raise InputError(f"{name} has shape {a.shape}; expected {n} values (one per qid)")
    for i, w in why.items():
        bad.setdefault(i, (name, w))
    return a


def validate_table(table: T, *, on_error: OnError = "raise",
                   strict: bool = False, need: frozenset[str] = frozenset({ROWS, UNIQUE}),
                   bad: Found | None = None, what: str = "the table given"
                   ) -> T:
    """``table`` with its bad rows rejected (or an :class:`InputError` under ``"raise"``)
    and windows partly outside ``[0, T]`` clipped; the result is marked checked for
    ``need`` and carries what was found in ``problems``. ``bad`` adds rows the caller
    already found (e.g. a number column holding a string); ``what`` names the input in
    the error of an in-memory table."""
    n = len(table)
    found: Found = list(bad or [])
    if IDS not in table.checked:
        found += id_rows(raw_ids(table), "qid")
        if raw_ids(table, "vid") is not raw_ids(table):
            found += id_rows(raw_ids(table, "vid"), "vid")
    if UNIQUE in need:
        found += duplicate_rows(table)
    t = table.duration
    plain = plainly_valid(table)
    all_known = plain
    if not plain:  # some row breaks a rule or needs clipping: find which, rule by rule
        with np.errstate(invalid="ignore"):
            t_ok = (t > 0) & (t < np.inf)  # False for NaN
        all_known = bool(t_ok.all())
        if not all_known:
            unknown_ok = DURATIONS not in need and table.truth is None
            found.append((np.flatnonzero(~t_ok & ~np.isnan(t) if unknown_ok else ~t_ok),
                          "duration", DURATION_RULE))
    pred_found, pred_out = ([], False) if plain else prediction_rows(table)
    truth_found, truth_out = truth_rows(table, plain)
    found += pred_found + truth_found
    rejected = _first_reasons(found)
    memory = table.line is None
    work = table
    if rejected or pred_out or truth_out:  # problems name rows: lines 1..n stand for them
        work = _replace(table, line=np.arange(1, n + 1, dtype=np.int64)) if memory else table
    problems = [_problem(work, i, f, w) for i, (f, w) in sorted(rejected.items())]
    if rejected:
        if on_error == "raise":
            _raise(table, problems, what)
        keep = np.ones(n, dtype=bool)
        keep[list(rejected)] = False
        work = work.take(keep)
    if pred_out or truth_out:
        work, more = _clip(work, strict)
        problems += more
        if on_error == "raise":
            _raise(table, problems, what)
        if memory:
            work = _replace(work, line=None)
    clipped = sum(p.action == "clipped" for p in problems)
    if clipped:
        warnings.warn(CoverWarning(f"{clipped} window(s) reaching outside [0, T] clipped to "
                                   "it (strict=True rejects them); see table.problems"),
                      stacklevel=3)
    checked = set(need) | {ROWS}
    if all_known or (rejected and np.isfinite(work.duration).all()):
        checked.add(DURATIONS)
    else:
        checked.discard(DURATIONS)
    if plain and not rejected:
        checked.add(ANSWERED)
    object.__setattr__(work, "checked", frozenset(checked))
    object.__setattr__(work, "problems", tuple(_named(table, problems)))
    return work


def ensure_valid(table: T, need: frozenset[str], what: str) -> T:
    """``table`` when already checked for ``need`` (one set test), else validated
    (``on_error="raise"``; ``what`` names it, e.g. ``the table given to fit``): the gate
    at the top of :meth:`Calibrator.fit` and ``certify``."""
    require_table(table, what)
    if need <= table.checked:
        return table
    return validate_table(table, need=need, what=what)


def ids_checked(table: T) -> T:
    """``table`` marked :data:`IDS` (a copy), for a caller that has rejected every row
    whose qid or vid :func:`id_reasons` refuses: :func:`validate_table` then does not
    judge them again. Only integer or text ids: those :func:`id_reasons` judges as
    given, where other values reach it as text (``cover.data.table.ids_as_given``)."""
    if any(raw_ids(table, name).dtype.kind not in "iuU" for name in ("qid", "vid")):
        return table
    out = copy.copy(table)
    object.__setattr__(out, "checked", table.checked | {IDS})
    return out


def id_reasons(ids: NDArray[Any], key: str = "qid") -> dict[int, str]:
    """Row -> why ``ids[i]`` is no id (:func:`cover.io.row_checks.id_problem`): for text,
    an empty or space-padded string; two character lookups per row."""
    return {i: why for rows, _, whys in id_rows(np.asarray(ids), key)
            for i, why in zip(rows.tolist(), whys, strict=True)}


def _named(table: TableShape, problems: list[RowProblem]) -> list[RowProblem]:
    """Problems of an in-memory table name the row index (``row 3``), not a line."""
    if table.line is not None:
        return problems
    return [RowProblem(f"row {p.line - 1}", 0, p.qid, p.problem, p.action) for p in problems]


def _raise(table: TableShape, problems: list[RowProblem], what: str) -> None:
    where = what if table.line is None else table.source
    raise_on_rejections(_named(table, problems), "raise", where)


def _first_reasons(found: Found) -> dict[int, tuple[str, str]]:
    """Row -> (field, reason) of the first rule it breaks."""
    out: dict[int, tuple[str, str]] = {}
    for rows, field, why in found:
        for j, i in enumerate(rows.tolist()):
            if i not in out:
                out[i] = (field, why if isinstance(why, str) else why[j])
    return out


def _problem(work: TableShape, i: int, field: str, why: str) -> RowProblem:
    """A problem at row ``i`` of ``work`` (whose ``line`` is set); the field is named
    unless the reason starts with it."""
    text = why if field in why else f"{field}: {why}"
    raw = raw_ids(work)[i]
    raw = raw.item() if isinstance(raw, np.generic) else raw
    qid = str(raw) if type(raw) in (int, str) else json_text(raw)  # never a Python repr
    return RowProblem(work.source, int(work.line[i]), qid, text, "rejected")  # type: ignore[index]


def _clip(work: T, strict: bool) -> tuple[T, list[RowProblem]]:
    """The join's clipping (:func:`clip_truth`, :func:`clip_predictions`) of windows
    reaching outside ``[0, T]``; rows of unknown T (NaN) are clipped at 0 only."""
    problems: list[RowProblem] = []
    if work.truth is not None:
        work, more = clip_truth(work, strict=strict)
        problems += [_at(p, "truth") for p in more]
    t = work.duration
    work, more = clip_predictions(
        _replace(work, duration=np.where(np.isnan(t), np.inf, t)), strict=strict)
    problems += [_at(p, "pred_start, pred_end") for p in more]
    d = work.duration
    return _replace(work, duration=np.where(np.isinf(d), np.nan, d)), problems


def _at(p: RowProblem, field: str) -> RowProblem:
    text = p.problem if field in p.problem else f"{field}: {p.problem}"
    return RowProblem(p.path, p.line, p.qid, text, p.action)
