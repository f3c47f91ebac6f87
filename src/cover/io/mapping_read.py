"""Reading a nested JSON document with a :class:`cover.io.mapping.Mapping`.

:func:`read_mapped` walks the document to its records, evaluates every field's source
on each, and hands flat columns to the shared checks (:func:`cover.io.columns.
prediction_table` / :func:`truth_table`), so a mapped file is checked exactly like a
file of any named format. A rows path that finds no record, or a field found in no
record, is an :class:`InputError` that says what is there instead; a value that does
not fit (a window that is not ``[s, e]``, a key the pattern does not match) rejects
its row with a message naming the field. :func:`sniff` says whether a document has
the mapping's shape (the first record gives every field), which is how a named layout
is detected.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from cover.data.relevance import (
    PROPOSALS,
    long_signal_problems,
    long_signal_rows,
    rebuild_relevance,
)
from cover.data.rules import in_line_order, raise_on_rejections
from cover.data.table import DEFAULT_CLIP_SECONDS
from cover.errors import InputError
from cover.io.columns import (
    Columns,
    id_text,
    numbers,
    role_table,
    saliency_column,
    stack_windows,
)
from cover.io.document import key_lines, load_document, read_bytes
from cover.io.generic import Role, field_at
from cover.io.jsonl import OnError, field_column, object_column
from cover.io.mapping import Mapping, Source
from cover.io.qvhighlights import Loaded
from cover.io.row_checks import id_records

#: A value that could not be read (e.g. a string that is not JSON).
BAD = object()


def records(doc: Any, steps: tuple[str, ...], keys: tuple[Any, ...] = ()
            ) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    """``(record, keys walked)`` for every record at ``steps`` below ``doc``."""
    if not steps:
        yield doc, keys
        return
    step, rest = steps[0], steps[1:]
    if step == "*":
        items = (doc.items() if isinstance(doc, dict)
                 else enumerate(doc) if isinstance(doc, list) else ())
        for k, v in items:
            yield from records(v, rest, (*keys, k))
    else:
        v = field_at(doc, step)
        if v is not None:
            yield from records(v, rest, keys)


def _walk(v: Any, path: tuple[str, ...]) -> Any:
    if isinstance(v, dict) and len(path) > 1 and ".".join(path) in v:
        return v[".".join(path)]  # a key with dots in it, as --columns reads them
    for i, part in enumerate(path):
        if part == "*":
            items = v.values() if isinstance(v, dict) else v if isinstance(v, list) else None
            if items is None:
                return None
            out = [_walk(x, path[i + 1:]) for x in items]
            return None if any(x is None for x in out) else out
        v = field_at(v, part)  # one part: no dot in it
        if v is None:
            return None
    return v


def value(src: Source, rec: Any, keys: tuple[Any, ...]) -> Any:
    """The raw value of ``src`` in one record (``BAD`` when a ``json`` string fails)."""
    if src.var == "value":
        v = rec
    elif src.var is not None:
        i = len(keys) - 1 if src.var == "key" else int(src.var[3:]) - 1
        v = keys[i] if 0 <= i < len(keys) else None
    else:
        v = _walk(rec, src.path)
    if src.json and isinstance(v, str):
        try:
            v = json.loads(v)
        except ValueError:
            return BAD
    return v


def evaluate(m: Mapping, rec: Any, keys: tuple[Any, ...]) -> tuple[dict[str, Any], str | None]:
    """Every field of one record, and the first reason it cannot be read (or None)."""
    out: dict[str, Any] = {}
    why = None
    for name, src in m.sources.items():
        v = value(src, rec, keys)
        if v is BAD:
            why = why or f"{name}: {src.text}: the text is not JSON"
            v = None
        if src.pattern is not None and v is not None:
            hit = src.pattern.fullmatch(str(v))
            if hit is None:
                why = why or f"{name}: {v!r} does not match {src.text.split('|', 1)[1]!r}"
                continue
            out.update(hit.groupdict())
        else:
            out[name] = v
    return out, why


def sniff(m: Mapping, doc: Any) -> bool:
    """Whether ``doc``'s first record gives every field of ``m`` (a named layout's test)."""
    first = None if doc is None else next(records(doc, m.rows), None)
    if first is None:
        return False
    got, why = evaluate(m, *first)
    return why is None and all(got.get(f) is not None for f in m.fields)


def read_mapped(path: str | Path, m: Mapping, *, role: Role,
                clip: float = DEFAULT_CLIP_SECONDS, on_error: OnError = "raise",
                doc: Any = None, relevance_from: str | None = None) -> Loaded:
    """Read ``path`` (one JSON document) with ``m`` as predictions or ground truth."""
    name = str(path)
    data = read_bytes(path)
    if doc is None:
        doc = load_document(path, data)
    recs = list(records(doc, m.rows))
    if not recs:
        top = (f"its top level has keys {sorted(doc)[:8]}" if isinstance(doc, dict)
               else f"its top level is a {type(doc).__name__}")
        raise InputError(f"{name}: the mapping's rows={'.'.join(m.rows) or '(the document)'} "
                         f"matches no record; {top}")
    rows, reasons = [], {}
    for i, (rec, keys) in enumerate(recs):
        got, why = evaluate(m, rec, keys)
        rows.append(got)
        if why is not None:
            reasons[i] = why
    for f in sorted(m.fields):
        if all(r.get(f) is None for r in rows):
            raise InputError(f"{name}: no record has a value for {f}={_given(m, f)} "
                             f"(first record: {_shape(recs[0][0])}); see `cover formats "
                             f"--explain {name}`")
    c = _columns(name, m, rows, recs, data, reasons)
    with_vid = "vid" in m.fields
    records_out = object_column([_echo(q, v if with_vid else None, r.get("query"), rec)
                                 for q, v, r, (rec, _) in zip(c.qid.tolist(), c.vid.tolist(),
                                                              rows, recs, strict=True)])
    loaded = role_table(role, c, clip=clip, on_error=on_error, records=records_out,
                        reasons=reasons)
    if role == "predictions" and wants_proposals(m, loaded, relevance_from):
        loaded = with_proposal_relevance(loaded, on_error)
    return loaded


def wants_proposals(m: Mapping | None, loaded: Loaded, relevance_from: str | None) -> bool:
    """Relevance from proposals: asked for (``--relevance-from proposals``, or the mapping's
    ``relevance=proposals``), or a mapped file with scored proposals and no saliency."""
    if relevance_from is not None:
        return relevance_from == "proposals"
    if m is None or m.relevance == "none":
        return False
    t = loaded.table
    many = t.pred_windows is not None and bool((t.pred_windows.lengths > 1).any())
    return m.relevance == "proposals" or ("scores" in m.fields and many
                                           and not t.has_relevance.any())


def with_proposal_relevance(loaded: Loaded, on_error: OnError = "reject") -> Loaded:
    """``loaded`` with its relevance built from its scored windows
    (:func:`cover.data.relevance.proposal_relevance`), over ``[0, T]`` where T is known.
    A row whose T would make that signal too long is rejected with the reason (an
    :class:`InputError` under ``on_error='raise'``), as the certify stage and the
    calibration join reject it: the same row, the same fate, read whole or streamed."""
    t = loaded.table
    over = long_signal_rows(t)
    if over.any():
        long = long_signal_problems(t, over)
        raise_on_rejections(long, on_error, t.source)
        gone = np.flatnonzero(over)
        recs = (t.records[gone].tolist() if t.records is not None else
                id_records(t.qid[gone], t.vid[gone]))
        loaded = replace(
            loaded, table=t.take(~over), problems=in_line_order([*loaded.problems, *long]),
            rejected={**loaded.rejected, **{p.key: r for p, r in zip(long, recs, strict=True)}},
            # the rows set aside still hold their qids for the duplicate rule and the join
            claims=loaded.claims if loaded.claims is not None or t.line is None
            else (t.qid, t.line))
    return replace(loaded, table=rebuild_relevance(loaded.table), relevance=PROPOSALS)


def _given(m: Mapping, f: str) -> str:
    for k, s in m.sources.items():
        if k == f or f in s.names:
            return s.text
    return "?"


def _shape(rec: Any) -> str:
    if isinstance(rec, dict):
        return f"an object with keys {sorted(rec)[:8]}"
    return f"a {type(rec).__name__}"


def _echo(qid: str, vid: str | None, query: Any, rec: Any) -> dict[str, Any]:
    """The record certified output echoes: the ids read (qid as joined), then the
    record's own keys."""
    ids = {"qid": qid} | ({"vid": vid} if vid is not None else {}) | (
        {"query": query} if query is not None else {})
    return ids | (rec if isinstance(rec, dict) else {"value": rec})


def _columns(name: str, m: Mapping, rows: list[dict[str, Any]],
             recs: list[tuple[Any, tuple[Any, ...]]], data: bytes,
             reasons: dict[int, str]) -> Columns:
    f = m.fields
    vid = id_text([r.get("vid") for r in rows])
    if "qid" in f:
        qid = id_text([r.get("qid") for r in rows])
    elif "order" in f:
        qid = np.char.add(np.char.add(vid, "-"), id_text([r.get("order") for r in rows]))
    else:  # positions: joined on (vid, query text)
        qid = np.arange(len(rows)).astype(str)
    if "vid" not in f:
        vid = qid.copy()  # a placeholder the ground truth replaces (load_labelled)
    dur = numbers([r.get("duration") for r in rows])
    per_row, width = row_windows(rows, f, reasons)
    win, off, bad = stack_windows(per_row, width)
    for i in bad:
        reasons.setdefault(i, f"windows={_given(m, 'windows')} must look like "
                              "[[start, end], ...] with one score per window")
    query = field_column(rows, "query") if "query" in f else None
    sal = saliency_column([r.get("saliency") for r in rows]) if "saliency" in f else None
    return Columns(source=name, qid=qid, vid=vid, duration=dur, windows=win, offsets=off,
                   line=_lines(data, recs), query=query, saliency=sal)


def row_windows(rows: list[dict[str, Any]], f: set[str], reasons: dict[int, str]
             ) -> tuple[list[Any], int | None]:
    """One list of windows per row, ``[s, e, score]`` when the mapping gives scores (width
    3; else None: :func:`cover.io.columns.stack_windows` tells)."""
    if "start" in f:
        per = [[[r.get("start"), r.get("end")]] if r.get("start") is not None else None
               for r in rows]
    else:
        per = [r.get("windows") for r in rows]
    if "scores" not in f:
        return per, None
    out: list[Any] = []
    for i, (w, r) in enumerate(zip(per, rows, strict=True)):
        try:
            a = np.asarray(w if w is not None else [], dtype=np.float64).reshape(-1, 2)
            s = np.asarray(r.get("scores"), dtype=np.float64).reshape(-1)
            out.append(np.column_stack([a, np.broadcast_to(s, (a.shape[0],))]).tolist())
        except (TypeError, ValueError):
            reasons.setdefault(i, "windows and scores do not pair up (one score per window)")
            out.append(None)
    return out, 3


def _lines(data: bytes, recs: list[tuple[Any, tuple[Any, ...]]]) -> np.ndarray:
    """The line of each record's last string key (1 for a record reached by position
    only), so a message points into a pretty-printed file; records under one key (a
    video's list) share its line."""
    keys = [next((k for k in reversed(ks) if isinstance(k, str)), None) for _, ks in recs]
    out = np.ones(len(recs), dtype=np.int64)
    if b"\n" not in data.strip():
        return out
    # One search per change of key: the keys are in document order.
    first = [i for i, k in enumerate(keys) if k is not None and (i == 0 or keys[i - 1] != k)]
    if not first:
        return out
    found = key_lines(data, [str(keys[i]) for i in first])
    starts = np.zeros(len(recs), dtype=np.int64)
    starts[first] = np.arange(1, len(first) + 1)
    at = np.maximum.accumulate(starts)
    has = (at > 0) & np.array([k is not None for k in keys], dtype=bool)
    out[has] = found[at[has] - 1]
    return out
