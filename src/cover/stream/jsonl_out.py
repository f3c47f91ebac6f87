"""The output lines of a streamed batch of certified rows, formatted a batch at a time.

Each kept row's line is its input line with ``,"cover":{...}`` spliced before the final
``}`` (:func:`cover.stream.jsonl.splice`), the block being ``json.dumps`` of the
block :func:`cover.io.regions_jsonl.certified_rows` builds. Serialising one dict per
row costs more than parsing the row; here the blocks of a whole batch are built as
text by elementwise operations on object arrays of strings: numbers in ``float.__repr__``
form (which ``json.dumps`` writes), the calibrator's fields dumped once, the pieces
joined column by column. :func:`fast_lines` returns None when a batch needs the row
by row writer (a rejected row, a line that is not spliced byte for byte, a
non-finite number); the bytes are otherwise identical.
"""

from __future__ import annotations

import json
from itertools import repeat
from json.encoder import encode_basestring_ascii
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from cover.data.table import GroundingTable
from cover.regions import Regions
from cover.row_status import row_status, status_reasons

_BRACE = ord("}")
#: Bytes before a line's closing brace that the splice would strip (``bytes.rstrip``'s
#: whitespace) or treat as an empty object: such lines are written row by row.
_NOT_BEFORE_BRACE = np.frombuffer(b" \t\r\x0b\x0c{", np.uint8)


def fast_lines(lines: list[bytes], qid_values: list[Any], vid_values: list[Any],
               table: GroundingTable, regions: Regions,
               meta: dict[str, Any], in_calibration: NDArray[np.bool_] | None,
               compact: bool) -> list[bytes] | None:
    """The output of the kept rows ``table`` (whose input lines and parsed ids are
    ``lines``, ``qid_values`` and ``vid_values``, in order), as pieces to write one
    after the other (each line newline-terminated); None when the row by row writer is
    needed."""
    n = len(lines)
    if n == 0 or n != len(table) or (not compact and not _spliceable(lines)):
        return None
    cols = _block_columns(table, regions, meta, in_calibration)
    if cols is None:
        return None
    if compact:  # json.dumps({"qid": ..., "vid": ..., "cover": block})
        return ["".join(_join_rows(['{"qid": ', _id_text(qid_values), ', "vid": ',
                                    _id_text(vid_values), ', "cover": ', *cols,
                                    "}\n"])).encode()]
    # The line ends as one ASCII text cut at a byte JSON never writes raw (NUL), then
    # the input lines without their last "}" interleaved.
    tails = "\x00".join(_join_rows([',"cover":', *cols, "}\n"])).encode().split(b"\x00")
    parts: list[bytes] = [b""] * (2 * n)
    parts[0::2] = map(bytes.__getitem__, lines, repeat(slice(0, -1)))
    parts[1::2] = tails
    return parts


def _spliceable(lines: list[bytes]) -> bool:
    """Every line is cut before its last byte, "}" (not after whitespace or "{"), and
    none is re-serialised (no NaN/Infinity anywhere in it; a row with a ``cover`` field
    is refused before: :func:`cover.stream.output_fields.refuse_certified`)."""
    ends = b"".join(map(bytes.__getitem__, lines, repeat(slice(-2, None))))
    if len(ends) != 2 * len(lines):
        return False
    pairs = np.frombuffer(ends, np.uint8).reshape(-1, 2)
    if not (pairs[:, 1] == _BRACE).all() or np.isin(pairs[:, 0], _NOT_BEFORE_BRACE).any():
        return False
    # One byte first, as an int: a plain memchr (3x faster than a one-byte bytes).
    for first, word in ((ord("N"), b"NaN"), (ord("I"), b"Infinity")):
        if any(map(bytes.__contains__, lines, repeat(first))) and \
                any(map(bytes.__contains__, lines, repeat(word))):
            return False
    return True


def _obj(a: Any) -> NDArray[np.object_]:
    """``a``, an elementwise sum of object arrays of str (typed for the checker)."""
    return cast("NDArray[np.object_]", a)


def _reprs(x: NDArray[np.float64], *, few: bool = False) -> NDArray[np.object_]:
    """``json.dumps`` of each finite float, as an object array of str. ``few``: a column
    of few distinct values (durations, thresholds) is formatted once per value (told
    apart by their bits: -0.0 is written "-0.0")."""
    if few and x.size:
        bits, back = np.unique(np.ascontiguousarray(x, np.float64).view(np.int64),
                               return_inverse=True)
        return _reprs(bits.view(np.float64))[back]
    out = np.empty(x.size, dtype=object)
    out[:] = list(map(float.__repr__, x.tolist()))
    return out


def _threshold_text(x: NDArray[np.float64]) -> NDArray[np.object_]:
    """``json.dumps(to_json_number(x))``: NaN -> null, +-inf -> "inf" / "-inf"."""
    out = _reprs(x, few=True)
    out[np.isnan(x)] = "null"
    out[x == np.inf] = '"inf"'
    out[x == -np.inf] = '"-inf"'
    return out


def _region_columns(regions: Regions) -> list[Any] | None:
    """``json.dumps`` of each row's ``[[start, end], ...]``, as columns."""
    iv = regions.intervals
    if not (np.isfinite(iv.starts).all() and np.isfinite(iv.ends).all()):
        return None
    starts, ends = _reprs(iv.starts), _reprs(iv.ends)
    per_row = np.diff(iv.offsets)
    if (per_row == 1).all():  # one interval a row: no per-row assembly at all
        return ["[[", starts.tolist(), ", ", ends.tolist(), "]]"]
    comp = _obj("[" + starts + ", " + ends + "]")
    last = iv.offsets[1:][per_row > 0] - 1
    sep = np.full(comp.size, ", ", dtype=object)
    sep[last] = ""
    comp = _obj(comp + sep)
    rows = np.full(per_row.size, "", dtype=object)
    full = per_row > 0
    if full.any():  # object sums: each row's components joined, in C
        rows[full] = np.add.reduceat(comp, iv.offsets[:-1][full])
    return ["[", rows.tolist(), "]"]


def _block_columns(table: GroundingTable, regions: Regions, meta: dict[str, Any],
                   in_calibration: NDArray[np.bool_] | None) -> list[Any] | None:
    """``json.dumps`` of each kept row's block, key order as ``certified_rows``'s, as
    columns (:func:`_join_rows`)."""
    n = len(table)
    dur = regions.duration.astype(np.float64)
    region = _region_columns(regions)
    if region is None or not np.isfinite(dur).all() or len(regions.refused) != n:
        return None
    try:
        meta_text = json.dumps(meta, allow_nan=False)[1:-1]
    except ValueError:
        return None
    refused = np.asarray(regions.refused, dtype=bool)
    status = row_status(regions)
    head = _obj('{"status": "' + status + '", "region": ').tolist()
    mid = np.where(refused, ', "refused": true, "duration": ',
                   ', "refused": false, "duration": ').tolist()
    glue = (", " + meta_text if meta_text else "") + ', "threshold": '
    cols: list[Any] = [head, *region, mid, _reprs(dur, few=True).tolist(), glue,
                       _threshold_text(regions.threshold.astype(np.float64)).tolist()]
    if regions.threshold_end is not None:
        cols += [', "threshold_end": ',
                 _threshold_text(regions.threshold_end.astype(np.float64)).tolist()]
    if in_calibration is not None:
        cols.append(np.where(in_calibration, ', "in_calibration": true', "").tolist())
    if regions.p_value is not None:
        cols += [', "p_value": ', _reprs(regions.p_value.astype(np.float64)).tolist()]
    empty = status_reasons(regions)
    if empty:  # rejected (an empty region) and abstained rows end with their reason
        reason = np.full(n, "", dtype=object)
        for i, why in empty.items():
            reason[i] = ', "reason": ' + json.dumps(why)
        cols.append(reason.tolist())
    return [*cols, "}"]


def _join_rows(cols: list[Any]) -> list[str]:
    """Row ``i``: the columns' texts for row ``i`` joined (one join per row, in C)."""
    # Not strict: the repeated texts are endless; the per-row columns all have n entries.
    return list(map("".join, zip(*(repeat(c) if isinstance(c, str) else c for c in cols),
                                 strict=False)))


def _id_text(ids: list[Any]) -> list[str]:
    """``json.dumps`` of each id (an int or a string: the bulk reader lets nothing else
    through)."""
    return [encode_basestring_ascii(v) if type(v) is str else int.__repr__(v) for v in ids]
