"""``--columns`` on a file: the flat reader or the nested engine, and the guard that
keeps a JSON wrapper from being read as rows of its top-level keys.

A JSON object ``key -> row`` is a table to the flat reader (:mod:`cover.io.generic`);
``{"config": {...}, "predictions": {qid: [s, e]}}`` is not: read that way it is "2
rows" whose qids are ``config`` and ``predictions``. :func:`check_flat_rows` stops
when a mapped column is in no row, and names the entry that holds the rows with the
mapping that reads them (``rows=predictions.*,qid=$key,windows=$value``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cover.data.relevance import PROPOSALS
from cover.errors import InputError
from cover.io.document import load_document
from cover.io.generic import Role, field_at, keyed_rows, kind_suffix, parse_columns, read_table
from cover.io.mapping import Mapping, is_nested, parse_mapping
from cover.io.qvhighlights import Loaded


def read_columns(path: str | Path, role: Role, spec: str | dict[str, str], *, clip: float,
                 on_error: Any, relevance_from: str | None
                 ) -> tuple[Loaded, bool, bool, Mapping | None]:
    """``(loaded, qids native, vid given, mapping)`` of ``path`` read with ``spec``."""
    from cover.io import mapping_read

    flag = "--gt-columns" if role == "ground_truth" else "--columns"
    m = parse_mapping(spec, flag) if is_nested(spec, flag) else None
    if m is not None:
        loaded = mapping_read.read_mapped(path, m, role=role, clip=clip, on_error=on_error,
                                          relevance_from=relevance_from)
        return loaded, m.join == "qid", "vid" in m.fields, m
    m_flat = parse_columns(spec, flag)
    if role == "predictions":
        refuse_csv_proposals(path, relevance_from, "--relevance-from proposals")
    check_flat_rows(path, m_flat)
    loaded = read_table(path, m_flat, role=role, clip=clip, on_error=on_error)
    if relevance_from == "proposals" and role == "predictions":
        loaded = mapping_read.with_proposal_relevance(loaded, on_error)
    return loaded, True, "vid" in m_flat, None


def refuse_csv_proposals(path: str | Path, relevance: str | None, why: str) -> None:
    """An :class:`InputError` naming ``path`` and ``why`` (the flag, or the calibrator
    that asks for it) when the relevance is to be built from proposals and ``path`` is a
    CSV/TSV file: a CSV row holds one window and no score (``--columns windows=`` needs
    list columns), so there are no proposals to build it from."""
    if relevance == PROPOSALS and kind_suffix(path) in (".csv", ".tsv"):
        raise InputError(f"{path}: relevance from proposals needs each row's scored "
                         "windows, which a CSV row cannot hold (one start= and end=); "
                         "convert the file to Parquet or JSON lines with a windows= list "
                         f"column ({why})")


def check_flat_rows(path: str | Path, m: dict[str, str]) -> None:
    """For a JSON object read as ``key -> row``: every mapped column is in some row;
    else an :class:`InputError` naming the column, and the wrapper entry if one holds
    the rows."""
    if kind_suffix(path) != ".json":
        return
    doc = load_document(path)
    if (rows := keyed_rows(doc)) is None:
        return
    missing = [f"{f}={w}" for f, w in m.items()
               if all(field_at(r, w) is None for r in rows)]
    if not missing:
        return
    # The entry holding the rows: most entries, each itself an object or a list.
    big = max(doc, key=lambda k: (all(isinstance(x, (dict, list)) for x in doc[k].values()),
                                  len(doc[k])))
    hint = ""
    if len(doc[big]) > len(doc):  # a wrapper: one entry holds more rows than the top level
        inner = next(iter(doc[big].values()))
        kind = (f"each an object with keys {sorted(inner)[:6]}" if isinstance(inner, dict)
                else f"each a {type(inner).__name__}, e.g. {str(inner)[:40]}")
        hint = (f"; it looks like a wrapper: {big!r} holds {len(doc[big])} entries "
                f"({kind}). Read them with a rows path, e.g. --columns "
                f"'rows={big}.*,qid=$key,{_suggest(inner)}'")
    raise InputError(f"{path}: read as a table of its top-level keys "
                     f"({', '.join(map(repr, list(doc)[:6]))}), "
                     f"no row has {', '.join(missing)}{hint}")


def _suggest(v: Any) -> str:
    if isinstance(v, list):
        return "windows=$value"
    if isinstance(v, dict):
        for k in ("timestamp", "windows", "pred_relevant_windows", "prediction"):
            if k in v:
                return f"windows={k}"
    return "windows=FIELD"
