"""Detection of a file's format, and reading a file in it.

The formats themselves (:data:`FORMATS`: each :class:`Format` with a name, a role,
a sniff function, a reader and an example row) are :mod:`cover.io.format_catalogue`'s,
re-exported here with :class:`Options`. :func:`detect` returns the first format whose
sniff accepts the file; a valid JSON file of no known shape is "unrecognised format:
expected one of ...", with the first row's keys, never "malformed JSON".
:func:`read_truth` reads a ground truth as the compact columns a stream holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from cover._memory import trim
from cover.errors import InputError, RowProblem
from cover.io.charades_rf import no_moment_qids
from cover.io.format_catalogue import (  # noqa: F401  (re-exported here)
    COLUMNS_EXAMPLE,
    COLUMNS_FORMAT,
    FORMATS,
    Format,
    Options,
    Reader,
    Role,
)
from cover.io.gt_compact import compact_truth
from cover.io.gt_lean import read_truth_compact
from cover.io.mapping import Mapping
from cover.io.opener import TABLE_SUFFIXES, kind_suffix
from cover.io.peek import Peek, peek
from cover.io.qvhighlights import Loaded
from cover.io.row_checks import RejectedRows
from cover.io.truth_index import CompactTruth


def by_name(name: str) -> Format:
    for f in FORMATS:
        if f.name == name:
            return f
    names = ", ".join([f.name for f in FORMATS] + [COLUMNS_FORMAT])
    raise InputError(f"unknown format {name!r}; expected one of {names}")


def names(role: Role) -> list[str]:
    return [f.name for f in FORMATS if f.role == role] + [COLUMNS_FORMAT]


class OtherRole(InputError):
    """A file given in one role (predictions, ground truth) that is of the other; its
    message names the flag the file belongs under."""

    def __init__(self, path: str | Path, found: Format) -> None:
        flag = "--gt" if found.role == "ground_truth" else "--preds"
        super().__init__(f"{path}: this is a {found.role.replace('_', ' ')} file "
                         f"({found.name}); give it as {flag}")
        self.found = found


def detect(path: str | Path, role: Role) -> tuple[Format, Peek]:
    """The format of ``path``; an error when it is of the other role (:class:`OtherRole`)
    or of none."""
    p = peek(path)
    if kind_suffix(p.path) in TABLE_SUFFIXES:
        raise InputError(f"{path}: a {kind_suffix(p.path)} table needs a column mapping, e.g. "
                         f"{COLUMNS_EXAMPLE.split('  ')[0]}")
    for f in FORMATS:
        if f.sniff(p):
            if f.role != role:
                raise OtherRole(path, f)
            return f, p
    if p.doc is None and p.first_row is None and p.head.lstrip()[:1] in (b"{", b"["):
        # Not one JSON value and its first line is not JSON: a real syntax problem;
        # let the JSON-lines reader name the line.
        return by_name("moment-detr" if role == "predictions" else "moment-detr-gt"), p
    first = p.first_row if p.first_row is not None else (
        next(iter(p.doc.values())) if isinstance(p.doc, dict) else None)
    hint = (" (a file with vid and duration but no windows is a durations file: "
            "--gt-durations / --videos)" if isinstance(first, dict) and "duration" in first
            else "")
    if (answers := p.answer_field()) is not None:
        hint = (f" (free-text answers in field {answers!r}: `cover parse-answers {path}` "
                "turns them into a prediction file)")
    raise InputError(f"{path}: unrecognised format: expected one of "
                     f"{', '.join(names(role))}; got {p.keys()}{hint}. "
                     "`cover formats` shows an example of each; any other table reads with "
                     "--columns")


@dataclass(frozen=True)
class Read:
    """A file read in a named format."""

    loaded: Loaded
    format: str
    native_qids: bool
    #: False when the mapping names no vid: the vid is a placeholder (the qid) that the
    #: ground truth replaces (:func:`cover.io.labelled.load_labelled`).
    vid_given: bool = True
    #: The mapping the file was read with (named layout or ``--columns``), if any.
    mapping: Mapping | None = None


def read(path: str | Path, role: Role, *, format: str | None = None,
         options: Options | None = None) -> Read:
    """Read ``path`` as ``role``: with ``options.columns`` the column-mapping reader
    (the nested-JSON engine, :mod:`cover.io.mapping_read`, when the mapping needs it),
    with ``format`` that format, else the detected one."""
    o = options or Options()
    if o.columns is not None or format == COLUMNS_FORMAT:
        if o.columns is None:
            raise InputError(f"--format {COLUMNS_FORMAT} needs --columns FIELD=COLUMN,...")
        return _read_columns(path, role, o)
    if format is not None:
        f, p = by_name(format), peek(path)
        if f.role != role:
            raise InputError(f"format {f.name} is a {f.role.replace('_', ' ')} format")
    else:
        f, p = detect(path, role)
    loaded = f.read(Path(path), o, p)
    if f.mapping is None and o.relevance_from == "proposals" and role == "predictions":
        from cover.io.mapping_read import with_proposal_relevance

        loaded = with_proposal_relevance(loaded, o.on_error)
    return Read(loaded, f.name, f.native_qids, mapping=f.mapping,
                vid_given=f.mapping is None or "vid" in f.mapping.fields)


def _read_columns(path: str | Path, role: Role, o: Options) -> Read:
    """``--columns``: :func:`cover.io.mapping_guard.read_columns`."""
    from cover.io.mapping_guard import read_columns

    assert o.columns is not None
    loaded, native, vid_given, m = read_columns(path, role, o.columns, clip=o.clip,
                                                on_error=o.on_error,
                                                relevance_from=o.relevance_from)
    return Read(loaded, COLUMNS_FORMAT, native, vid_given=vid_given, mapping=m)


#: The ground-truth format read straight into compact columns.
LEAN_FORMAT = "moment-detr-gt"


@dataclass
class TruthRead:
    """A ground-truth file read as compact columns: the truth, the reader's problems, the
    format's name, whether its qids are ids (not positions) and whether some query has
    no relevant moment (Charades-RF)."""

    truth: CompactTruth
    problems: list[RowProblem]
    format: str
    native_qids: bool = True
    no_moment: bool = False
    #: The rows the reader rejected, with their records: a join by order within each
    #: video keeps their places (:func:`cover.io.order_join.order_keys`).
    rejected: RejectedRows = field(default_factory=dict)


def read_truth(path: str | Path, *, format: str | None = None,
               columns: str | dict[str, str] | None = None,
               durations: str | Path | None = None,
               on_error: Literal["raise", "reject"] = "raise",
               labels: bool = True) -> TruthRead:
    """The ground truth of ``path`` as compact columns (what a stream holds): a
    :data:`LEAN_FORMAT` file that is plainly clean straight into them
    (:func:`read_truth_compact`), any other file or format as
    :func:`read` reads it, then compacted (the table let go). ``labels=False``: the
    highlight labels are checked as always but not kept (a stream that scores no
    highlights: at 1e6 QVHighlights rows they are ~700 MB)."""
    lean = columns is None and format in (None, LEAN_FORMAT) and (
        format is not None or detect(path, "ground_truth")[0].name == LEAN_FORMAT)
    truth = read_truth_compact(path, labels=labels) if lean else None
    trim()  # what the read freed goes back before the stream starts
    if truth is not None:
        return TruthRead(truth, [], LEAN_FORMAT)
    # the per-row reader's rows are dropped by the compaction; a lean file not plainly
    # clean goes to that reader at once (not through the typed read a second time)
    got = read(path, "ground_truth", format=format, options=Options(
        on_error=on_error, durations=durations, columns=columns, keep_records=lean))
    table = got.loaded.table if labels else replace(got.loaded.table, truth_saliency=None)
    return TruthRead(compact_truth(table), got.loaded.problems, got.format,
                     got.native_qids, bool(no_moment_qids(got.loaded)), got.loaded.rejected)
