"""Declarative mappings from nested JSON to rows: a file layout is data, not code.

A mapping says where the records are and where each field lives in a record::

    rows=results.*              # the path from the document to the records; each `*`
                                # walks every entry of an object (binding its key) or
                                # of a list (binding its position)
    vid=$key|<vid>-<order>      # the last key walked, split by a pattern
    query=query                 # a key of the record (`a.b`, `a.0` go deeper)
    windows=timestamp           # [[s, e(, score)], ...], or one bare [s, e]
    scores=*.score              # a `*` inside a field maps over a list record

Sources: a dotted path in the record, as ``--columns`` has always read;
``$key`` the last key walked, ``$key1`` .. ``$keyN`` the N-th (outermost first);
``$value`` the record itself. Modifiers after ``|``: ``json`` parses a string that
holds JSON (``"[[s, e]]"``); a pattern with ``<name>`` parts must match the whole
text and sets each named field (a part named ``_`` is dropped; ``<order>`` matches
digits only, so ``<vid>-<order>`` splits at the last ``-``).

Fields: ``qid``, ``vid``, ``query``, ``duration``, ``start`` + ``end`` or
``windows``, ``scores`` (one per window: ranked proposals), ``saliency``, and
``order`` (the position of the query among its video's queries). The join to ground
truth follows from what the mapping gives: by ``qid``; else by ``order`` within each
video (the qid becomes ``<vid>-<order>``); else on (vid, query text). A mapping with
no ``vid`` leaves it to the ground truth (:func:`cover.io.labelled.load_labelled`
takes it from there and says so). The engine that turns a document into rows is
:mod:`cover.io.mapping_read`; the named layouts are :mod:`cover.io.layouts`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from cover.errors import InputError

Join = Literal["qid", "order", "content"]
FIELDS = ("qid", "vid", "query", "duration", "start", "end", "windows", "scores", "saliency",
          "order")
#: Keys of a mapping that are not fields.
SETTINGS = ("rows", "relevance")
#: Sources a nested mapping may use and a flat ``--columns`` mapping never does.
_NESTED = re.compile(r"(^|[.|])(\*|\$)|\|")
_PART = re.compile(r"<(\w+)>")


@dataclass(frozen=True)
class Source:
    """Where one field's value comes from in a record (see the module docstring)."""

    text: str
    path: tuple[str, ...] = ()
    var: str | None = None
    json: bool = False
    pattern: re.Pattern[str] | None = None
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class Mapping:
    """A parsed mapping: the rows path, each field's :class:`Source`, and settings."""

    rows: tuple[str, ...]
    sources: dict[str, Source]
    given: dict[str, str] = field(default_factory=dict)
    relevance: str | None = None

    @property
    def fields(self) -> set[str]:
        """Every field the mapping sets (pattern parts included)."""
        out: set[str] = set()
        for name, s in self.sources.items():
            out |= set(s.names) if s.pattern is not None else {name}
        return out - {"_"}

    @property
    def join(self) -> Join:
        f = self.fields
        return "qid" if "qid" in f else "order" if "order" in f else "content"

    def describe(self) -> str:
        """The mapping as one ``--columns`` string."""
        return ",".join(f"{k}={v}" for k, v in self.given.items())


def is_nested(spec: str | dict[str, str], flag: str = "--columns") -> bool:
    """Whether a mapping needs this engine (a rows path, ``$key``, ``*``, ``|``, or a
    field the flat column reader does not know) rather than the flat column reader
    (:mod:`cover.io.generic`)."""
    items = spec_items(spec, flag=flag)
    return any(k in SETTINGS or k in ("scores", "order") or _NESTED.search(v)
               for k, v in items.items())


def spec_items(spec: str | dict[str, str], known: tuple[str, ...] = (),
               what: str = "SOURCE", flag: str = "--columns") -> dict[str, str]:
    """``"a=x,b=y"`` (or the same as a dict) -> ``{"a": "x", "b": "y"}``; a part without
    ``=`` or a value (``expected FIELD=<what>``), a key given twice, or a key not
    ``known`` when that is given, is an :class:`InputError`."""
    if isinstance(spec, dict):
        out = {str(k): str(v) for k, v in spec.items()}
    else:
        out = {}
        for part in filter(None, (p.strip() for p in spec.split(","))):
            key, eq, value = part.partition("=")
            if not eq or not value.strip():
                raise InputError(f"{flag}: expected FIELD={what}, got {part!r}")
            key, value = key.strip(), value.strip()
            if key in out:  # the last would win silently: a typo that reads another column
                raise InputError(f"{flag}: {key}= given twice ({key}={out[key]} and "
                                 f"{key}={value}); give each field once")
            out[key] = value
    unknown = sorted(set(out) - set(known)) if known else []
    if unknown:
        raise InputError(f"{flag}: unknown field(s) {', '.join(unknown)}; expected some of "
                         f"{', '.join(known)}")
    return out


def field_sources(spec: str | dict[str, str], known: tuple[str, ...],
                  flag: str = "--columns") -> dict[str, Source]:
    """The ``FIELD=SOURCE`` items of ``spec`` (only ``known`` fields) as sources, each
    read and checked as a mapping's (paths, ``$value``, ``|json``), with no rows or join:
    what a mapping says about one record."""
    return {k: _source(k, v, flag) for k, v in spec_items(spec, known, flag=flag).items()}


def parse_mapping(spec: str | dict[str, str], flag: str = "--columns") -> Mapping:
    """``"rows=results.*,vid=$key|<vid>-<order>,windows=timestamp"`` (or the same as a
    dict) -> a checked :class:`Mapping`; a wrong key or source is an
    :class:`InputError` naming it and ``flag`` (``--gt-columns`` for the ground truth)."""
    items = spec_items(spec, FIELDS + SETTINGS, flag=flag)
    rows = tuple(p for p in items.get("rows", "").split(".") if p)
    relevance = items.get("relevance")
    if relevance not in (None, "proposals", "none"):
        raise InputError(f"{flag}: relevance={relevance} must be 'proposals' or 'none'")
    sources = {k: _source(k, v, flag) for k, v in items.items() if k not in SETTINGS}
    m = Mapping(rows, sources, items, relevance)
    f = m.fields
    if ("start" in f) != ("end" in f):
        raise InputError(f"{flag}: give both start= and end=, or windows=")
    if m.join == "order" and "vid" not in f:
        raise InputError(f"{flag}: order= joins by position within each video and needs "
                         "vid= too")
    if m.join == "content" and not {"vid", "query"} <= f:
        raise InputError(f"{flag}: the mapping gives no qid, so rows join to ground truth "
                         "by order within a video (vid= and order=) or on the query text "
                         "(vid= and query=); give one of them")
    return m


def _source(name: str, text: str, flag: str) -> Source:
    where, *mods = text.split("|")
    var = None
    path: tuple[str, ...] = ()
    if where.startswith("$"):
        var = where[1:]
        if not re.fullmatch(r"key\d*|value", var):
            raise InputError(f"{flag}: {name}={text}: expected $key, $key1.., or $value")
        if var != "key" and var != "value" and int(var[3:]) < 1:
            raise InputError(f"{flag}: {name}={text}: keys count from $key1")
    else:
        path = tuple(where.split(".")) if where else ()
    is_json = False
    pattern: re.Pattern[str] | None = None
    names: tuple[str, ...] = ()
    for mod in mods:
        if mod == "json":
            is_json = True
        elif _PART.search(mod):
            names = tuple(_PART.findall(mod))
            if name not in names:
                raise InputError(f"{flag}: {name}={text}: the pattern must have a "
                                 f"<{name}> part")
            bad: list[str] = sorted(set(names) - set(FIELDS) - {"_"})
            if bad:
                raise InputError(f"{flag}: {name}={text}: unknown part(s) "
                                 f"{', '.join(f'<{b}>' for b in bad)}")
            pattern = re.compile(_regex(mod))
        else:
            raise InputError(f"{flag}: {name}={text}: unknown modifier {mod!r} (expected "
                             "json, or a pattern such as <vid>-<order>)")
    return Source(text, path, var, is_json, pattern, names)


def _regex(pattern: str) -> str:
    """``<vid>-<order>`` -> ``(?P<vid>.+)-(?P<order>\\d+)``: text parts literal; the
    first parts greedy, so a vid holding the separator (``v_0bosp4-pyTM-3``) splits
    at its last one."""
    out, at = [], 0
    for m in _PART.finditer(pattern):
        out.append(re.escape(pattern[at:m.start()]))
        name = m.group(1)
        group = "(?:" if name == "_" else f"(?P<{name}>"
        out.append(group + (r"\d+" if name == "order" else ".+") + ")")
        at = m.end()
    out.append(re.escape(pattern[at:]))
    return "".join(out)
