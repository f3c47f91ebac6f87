"""CSV (or TSV) regions for ``cover evaluate``: the output of ``cover certify`` on a CSV
file, read a batch of lines at a time.

Each row carries the cover columns (:data:`cover.stream.csv.COVER_COLUMNS`: status,
region as JSON text, refused, duration, threshold, threshold_end, reason) after the
input's own; qid and vid (and query, and the predicted top-1 ``start``/``end``, which
the field's metrics use) come through ``--columns`` as for Parquet regions, by default
the columns of those names. A batch becomes the records a JSON line would give, so
every check and message is :func:`cover.io.regions_jsonl.regions_from_rows`'s.

A CSV carries no calibrator fields (score, alpha, k, n_calibration, the calibration
digest). With ``--calibrator`` (the file certify used) they are those of the Parquet
metadata (:func:`cover.stream.arrow.calibrator_metadata`) and the test band is
reported; without it the coverage is measured as ever but the band is not known.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from cover.errors import InputError, RowProblem
from cover.io.generic import CSV_SUFFIXES, kind_suffix
from cover.io.jsonl import RawRows
from cover.io.regions_read import Thresholds
from cover.stream.csv import COVER_COLUMNS, csv_batches

_STRINGS = ("cover_status", "cover_region", "cover_refused")
#: ``cover_refused`` as certify writes it; any other text is kept for the reader to reject.
_BOOLS = {"true": True, "false": False}
_NUMBERS = ("cover_duration", "cover_threshold")
_META_KEYS = ("score", "rule", "alpha", "k", "n_calibration", "relevance")


def is_csv(path: str | Path) -> bool:
    """``.csv`` / ``.tsv`` (gzipped or not)."""
    return kind_suffix(path) in CSV_SUFFIXES


def calibrator_fields(path: str | Path | None) -> dict[str, Any]:
    """The ``cover`` block's calibrator fields from a saved calibrator (all None without
    one: the regions are evaluated, the test band is not known)."""
    if path is None:
        return dict.fromkeys(_META_KEYS)
    from cover.calibrate.calibrator import Calibrator
    from cover.stream.arrow import calibrator_metadata

    return block_fields(calibrator_metadata(Calibrator.load(path))[b"cover.calibrator"])


def block_fields(metadata: bytes) -> dict[str, Any]:
    """The ``cover`` block's calibrator fields of the ``cover.calibrator`` metadata
    (:func:`cover.stream.arrow.calibrator_metadata`)."""
    cal = json.loads(metadata)
    meta = {k: cal.get(k) for k in _META_KEYS}
    if cal.get("fitted_on"):
        meta["calibration_sha256"] = cal["fitted_on"]
    return meta


def calibrator_thresholds_of(path: str | Path | None) -> Thresholds | None:
    """The thresholds the calibrator at ``path`` gives (None without one): each CSV row's
    ``cover_threshold`` must be one, else the rows came from another calibrator. A rule
    with a threshold per row from its covariates (``conditional``) has no list to check
    against: None, its rows pass as JSON-lines rows of that rule do."""
    if path is None:
        return None
    from cover.calibrate.calibrator import Calibrator
    from cover.calibrate.registry import get_rule

    cal = Calibrator.load(path)
    if get_rule(cal.rule).per_row is not None:
        return None
    # cover.threshold of a row is the start side's, as certify writes it
    lams = [lam_start for lam_start, _ in cal.group_lams().values()]
    return Thresholds(np.unique(np.array(lams, dtype=np.float64)), str(path))


def csv_region_batches(path: str | Path, batch_rows: int, columns: str | None,
                       meta: dict[str, Any]) -> Iterator[RawRows]:
    """Rows of a CSV ``cover certify`` output, ``batch_rows`` lines at a time, as the
    records a JSON line would give (``meta``: the calibrator fields of every block)."""
    import pyarrow as pa

    from cover.io.generic import parse_columns

    given = parse_columns(columns) if columns else {"qid": "qid"}
    csv_in = csv_batches(path, given, batch_rows)  # checks the mapped columns are there
    missing = [c for c in COVER_COLUMNS[:4] if c not in csv_in.names]
    if missing:
        raise InputError(f"{path}:1: no column {missing[0]!r} in the header (is this the "
                         "CSV output of `cover certify`?)")
    if not columns:
        given |= {f: f for f in ("vid", "query", "start", "end") if f in csv_in.names}
    mapping = {f: c for f, c in given.items() if f in ("qid", "vid", "query", "start", "end")}
    types = {c: pa.string() for c in _STRINGS}
    types |= {c: pa.float64() for c in _NUMBERS}
    types |= {mapping[f]: pa.string() for f in ("qid", "vid", "query") if f in mapping}
    types |= {mapping[f]: pa.float64() for f in ("start", "end") if f in mapping}
    for batch, table, lines, bad in csv_in.parsed(types):
        records = _records({c: table.column(c).to_pylist() for c in types}, mapping, meta)
        yield _set_aside(str(path), batch, records, lines, bad)


def _set_aside(name: str, batch: list[tuple[int, bytes]], records: list[dict[str, Any]],
               lines: Any, bad: dict[int, str]) -> RawRows:
    """A batch's records as rows, those of the lines pyarrow cannot read (``bad``: row ->
    why, :func:`cover.io.csv_lines.parse_lines`) rejected with their reason."""
    if not bad:
        return RawRows(name, records, lines)
    keep = [i for i in range(len(records)) if i not in bad]
    raw = RawRows(name, [records[i] for i in keep], lines[keep])
    for i, why in sorted(bad.items()):
        qid = records[i].get("qid") or None
        raw.problems.append(RowProblem(name, int(lines[i]), qid, why, "rejected"))
        raw.rejected[int(lines[i])] = batch[i][1].decode("utf-8", "backslashreplace")
    return raw


def _records(cols: dict[str, list[Any]], mapping: dict[str, str], meta: dict[str, Any]
             ) -> list[dict[str, Any]]:
    """One record per row: ids, query, the top-1 window, the ``cover`` block."""
    n = len(cols["cover_status"])
    start = cols[mapping["start"]] if "start" in mapping else [None] * n
    end = cols[mapping["end"]] if "end" in mapping else [None] * n
    out = []
    for i in range(n):
        rec: dict[str, Any] = {f: cols[mapping[f]][i] for f in ("qid", "vid", "query")
                               if f in mapping}
        s, e = start[i], end[i]
        rec["pred_relevant_windows"] = [] if s is None or e is None else [[s, e]]
        rec["cover"] = {"status": cols["cover_status"][i],
                        "region": _region(cols["cover_region"][i]),
                        "refused": _BOOLS.get(cols["cover_refused"][i],
                                              cols["cover_refused"][i]),
                        "duration": cols["cover_duration"][i], **meta,
                        "threshold": cols["cover_threshold"][i]}
        out.append(rec)
    return out


def _region(text: str) -> Any:
    """The region's JSON (the text itself when it is not JSON: the reader rejects it)."""
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text
