"""The base grounder's windows of a certified row read back for evaluation, and the
named layout a row was read in.

A certified row carries the grounder's prediction under the names its input had:
Moment-DETR's ``pred_relevant_windows``, a table's ``start`` and ``end`` (DisTime's
Charades-STA rows too, :func:`base_windows`), or a named layout's own fields (TGN's
proposals under ``value``, Shuffling Videos' ``timestamp`` and ``score``, DisTime's
``prediction`` as a JSON string). Those are read by the layout's sources
(:func:`layout_sources`, :func:`windows_of`), the layout given by ``--format`` or
detected from the first row (:func:`detected_layout`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from cover.errors import InputError
from cover.io.mapping import Source
from cover.io.mapping_read import BAD, row_windows, value

__all__ = ["RowSources", "base_windows", "detected_layout", "layout_sources", "record_field",
           "record_windows", "sources_for", "windows_of"]

#: The JSON numbers (a boolean is no number).
_NUMBER = (int, float)
#: What certify adds to the record it echoes (:func:`cover.io.mapping_read._echo`).
_ECHO_IDS = frozenset({"qid", "vid", "query", "cover"})


def record_field(src: Source, name: str, rec: Any) -> Any:
    """Field ``name`` of one record as ``src`` reads it (a pattern's ``<name>`` part: the
    ``<qid>`` of ``qid|QVHighlight_<qid>``); None when the record does not have it."""
    v = value(src, rec, ())
    if v is BAD or v is None or src.pattern is None:
        return None if v is BAD else v
    hit = src.pattern.fullmatch(str(v))
    return None if hit is None else hit.groupdict().get(name)


def record_windows(sources: dict[str, Source], rec: Any) -> Any:
    """The windows ``sources`` (``windows``, or ``start`` and ``end``; ``scores``) give one
    record, as a mapped read gives a row its windows
    (:func:`cover.io.mapping_read.row_windows`); None for none. A value that cannot be
    read (not JSON, windows and scores that do not pair up) gives a text saying why,
    which is no list of windows: the caller's shape check rejects the row, naming the
    sources."""
    vals: dict[str, Any] = {}
    for name, src in sources.items():
        v = value(src, rec, ())
        if v is BAD:
            return f"{src.text}: the text is not JSON"
        vals[name] = v
    reasons: dict[int, str] = {}
    per, _ = row_windows([vals], set(sources), reasons)
    return reasons.get(0, per[0])


class RowSources(NamedTuple):
    """Where a JSON-lines regions row's base windows are (:func:`windows_of`): the
    sources' text (named in a row's problem), the windows of a row, and its qid when
    the sources rewrite it (a layout's ``qid|QVHighlight_<qid>``: the echoed record keeps
    the grounder's own text)."""

    name: str
    windows: Callable[[dict[str, Any]], Any]
    qid: Callable[[dict[str, Any]], Any] | None = None


def windows_of(spec: str) -> RowSources:
    """Where the base grounder's windows of a JSON-lines regions row are, as ``--columns``
    names them in the mapping language of the named layouts (:mod:`cover.io.mapping`:
    paths, ``$value``, ``|json``, patterns): ``windows=SOURCE`` (a list of ``[start,
    end]``), with ``scores=SOURCE``, or ``start=SOURCE,end=SOURCE`` (``timestamp.0``: a
    list's item), and ``qid=SOURCE`` when the row's qid field is the grounder's own text
    (``qid|QVHighlight_<qid>``). Anything else is an error naming the flag (the vid and
    the ``cover`` block are read by their names). A value read is checked as
    ``pred_relevant_windows`` is: a string or a boolean rejects its row."""
    from cover.io.mapping import field_sources

    src = field_sources(spec, ("qid", "windows", "start", "end", "scores"))
    qid = src.pop("qid", None)
    if not ({"windows"} <= set(src) <= {"windows", "scores"} or set(src) == {"start", "end"}):
        raise InputError("--columns: for JSON-lines regions, name the base grounder's "
                         "prediction: windows=SOURCE (and scores=SOURCE), or "
                         "start=SOURCE,end=SOURCE")

    def own(row: dict[str, Any]) -> Any:
        # certify echoes a record that is not an object as {ids..., "value": record}
        mine = [k for k in row if k not in _ECHO_IDS]
        return row["value"] if mine == ["value"] else row

    def qid_of(row: dict[str, Any]) -> Any:
        assert qid is not None
        got = record_field(qid, "qid", own(row))
        return row.get("qid") if got is None else got

    return RowSources(", ".join(s.text for s in src.values()),
                      lambda row: record_windows(src, own(row)),
                      qid_of if qid is not None and qid.var is None else None)


def layout_sources(name: str) -> str:
    """The ``--columns`` of JSON-lines regions certified from the named layout's
    predictions: its mapping's ``qid`` / ``windows`` / ``start``, ``end`` / ``scores``
    (certify echoes each record's own fields, so the layout's sources read the rows)."""
    from cover.io.layouts import by_name

    layout = by_name(name)
    if layout is None or layout.role != "predictions":
        raise InputError(f"--format {name}: not a named layout of predictions")
    return ",".join(f"{k}={v}" for k, v in layout.mapping.items()
                    if k in ("qid", "windows", "start", "end", "scores"))


def detected_layout(row: Any) -> str | None:
    """The named layout whose sources read a base prediction from ``row`` (a certified
    row with neither ``pred_relevant_windows`` nor ``start`` and ``end`` numbers), when
    exactly one does (each layout's windows: a list of windows of numbers; its qid, where
    it rewrites one, matched): the layout its predictions were read in. None otherwise."""
    from cover.io.layouts import LAYOUTS

    if (not isinstance(row, dict) or "pred_relevant_windows" in row
            or base_windows(row) is not None):
        return None
    hits = []
    for layout in LAYOUTS:
        if layout.role != "predictions":
            continue
        src = windows_of(layout_sources(layout.name))
        got = src.windows(row)
        plain = isinstance(got, list) and bool(got) and all(
            isinstance(w, list) and len(w) in (2, 3)
            and all(type(x) in _NUMBER and math.isfinite(x) for x in w) for w in got)
        if plain and (src.qid is None or src.qid(row) != row.get("qid")):
            hits.append(layout.name)
    return hits[0] if len(hits) == 1 else None


def sources_for(path: str | Path, columns: str | None
                ) -> tuple[RowSources | None, str | None]:
    """Where the rows of JSON-lines regions ``path`` carry the base prediction, for every
    reader of them (the command, the stream, :func:`cover.io.read_regions`): ``columns``
    when given; else the named layout detected from the first row (its name returned, for
    the caller to say); else None (:func:`base_windows`)."""
    if columns is not None:
        return windows_of(columns), None
    from cover.io.peek import peek

    found = detected_layout(peek(path).first_row)
    return (windows_of(layout_sources(found)), found) if found is not None else (None, None)


def base_windows(rec: dict[str, Any]) -> Any:
    """The base grounder's windows a certified row carries: Moment-DETR's
    ``pred_relevant_windows`` when the row has that field, else ``[[start, end]]`` when
    its ``start`` and ``end`` both hold numbers (a row of another layout, echoed by
    certify: DisTime's), else None (no window: its IoU is not known). The rule of CSV
    regions, whose ``start`` and ``end`` columns are read by name."""
    if "pred_relevant_windows" in rec:
        return rec["pred_relevant_windows"]
    s, e = rec.get("start"), rec.get("end")
    return [[s, e]] if type(s) in _NUMBER and type(e) in _NUMBER else None
