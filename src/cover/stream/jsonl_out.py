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

_BRACE = ord("}")
#: Bytes before a line's closing brace that the splice would strip (``bytes.rstrip``'s
#: whitespace) or treat as an empty object: such lines are written row by row.
_NOT_BEFORE_BRACE = np.frombuffer(b" \t\r\x0b\x0c{", np.uint8)


def fast_lines(lines: list[bytes], qid_values: list[Any], vid_values: list[Any],
               has_cover: bool, table: GroundingTable, regions: Regions,
               meta: dict[str, Any], in_calibration: NDArray[np.bool_] | None,
               compact: bool) -> bytes | None:
    """The output of the kept rows ``table`` (whose input lines and parsed ids are
    ``lines``, ``qid_values`` and ``vid_values``, in order), newline-terminated; None
    when the row by row writer is needed (``has_cover``: some row has a ``cover``
    field, which is replaced, not spliced)."""
    n = len(lines)
    if n == 0 or n != len(table):
        return None
    if not compact:
        joined = b"\n".join(lines)
        # Where each line ends in ``joined``: its last byte must be "}", the one before
        # it neither whitespace nor "{".
        ends = np.cumsum(np.fromiter(map(len, lines), np.int64, n) + 1) - 2
        tail = np.frombuffer(joined, np.uint8)
        if (has_cover or ends.min() < 1 or not (tail[ends] == _BRACE).all()
                or np.isin(tail[ends - 1], _NOT_BEFORE_BRACE).any()
                or (b"N" in joined and b"NaN" in joined)
                or (b"I" in joined and b"Infinity" in joined)):
            return None
    text = _blocks(table, regions, meta, in_calibration)
    if text is None:
        return None
    if compact:
        text = _compact(qid_values, vid_values, text)
        return ("\n".join(text.tolist()) + "\n").encode()
    blocks = "\n".join(text.tolist()).encode().split(b"\n")
    parts: list[bytes] = [b""] * (4 * n)
    parts[0::4] = map(bytes.__getitem__, lines, repeat(slice(0, -1)))
    parts[1::4] = repeat(b',"cover":', n)
    parts[2::4] = blocks
    parts[3::4] = repeat(b"}\n", n)
    return b"".join(parts)


def status_of(regions: Regions) -> NDArray[np.object_]:
    """Each kept row's ``cover.status``."""
    return np.where(regions.refused, "refused", "certified").astype(object)


def _obj(a: Any) -> NDArray[np.object_]:
    """``a``, an elementwise sum of object arrays of str (typed for the checker)."""
    return cast("NDArray[np.object_]", a)


def _reprs(x: NDArray[np.float64]) -> NDArray[np.object_]:
    """``json.dumps`` of each finite float, as an object array of str."""
    out = np.empty(x.size, dtype=object)
    out[:] = list(map(float.__repr__, x.tolist()))
    return out


def _threshold_text(x: NDArray[np.float64]) -> NDArray[np.object_]:
    """``json.dumps(to_json_number(x))``: NaN -> null, +-inf -> "inf" / "-inf"."""
    out = _reprs(x)
    out[np.isnan(x)] = "null"
    out[x == np.inf] = '"inf"'
    out[x == -np.inf] = '"-inf"'
    return out


def _regions_text(regions: Regions) -> NDArray[np.object_] | None:
    """``json.dumps`` of each row's ``[[start, end], ...]``."""
    iv = regions.intervals
    if not (np.isfinite(iv.starts).all() and np.isfinite(iv.ends).all()):
        return None
    comp = "[" + _reprs(iv.starts) + ", " + _reprs(iv.ends) + "]"
    per_row = np.diff(iv.offsets)
    n = per_row.size
    if (per_row == 1).all():
        return _obj("[" + comp + "]")
    last = iv.offsets[1:][per_row > 0] - 1
    sep = np.full(comp.size, ", ", dtype=object)
    sep[last] = ""
    comp = comp + sep
    rows = np.full(n, "", dtype=object)
    full = per_row > 0
    if full.any():
        rows[full] = np.add.reduceat(comp, iv.offsets[:-1][full])
    return _obj("[" + rows + "]")


def _blocks(table: GroundingTable, regions: Regions, meta: dict[str, Any],
            in_calibration: NDArray[np.bool_] | None) -> NDArray[np.object_] | None:
    """``json.dumps`` of each kept row's block, key order as ``certified_rows``'s."""
    n = len(table)
    dur = regions.duration.astype(np.float64)
    region = _regions_text(regions)
    if region is None or not np.isfinite(dur).all() or len(regions.refused) != n:
        return None
    try:
        meta_text = json.dumps(meta, allow_nan=False)[1:-1]
    except ValueError:
        return None
    refused = np.asarray(regions.refused, dtype=bool)
    head = np.where(refused, '{"status": "refused", "region": ',
                    '{"status": "certified", "region": ').astype(object)
    mid = np.where(refused, ', "refused": true, "duration": ',
                   ', "refused": false, "duration": ').astype(object)
    glue = (", " + meta_text if meta_text else "") + ', "threshold": '
    text = head + region + mid + _reprs(dur) + glue + _threshold_text(
        regions.threshold.astype(np.float64))
    if regions.threshold_end is not None:
        text = text + ', "threshold_end": ' + _threshold_text(
            regions.threshold_end.astype(np.float64))
    if in_calibration is not None:
        text = text + np.where(in_calibration, ', "in_calibration": true', "").astype(object)
    return _obj(text + "}")


def _compact(qid_values: list[Any], vid_values: list[Any],
             blocks: NDArray[np.object_]) -> NDArray[np.object_]:
    """``json.dumps({"qid": ..., "vid": ..., "cover": block})`` per row (ids are ints or
    strings: the bulk reader lets nothing else through)."""
    qid = _id_text(qid_values)
    vid = _id_text(vid_values)
    return _obj('{"qid": ' + qid + ', "vid": ' + vid + ', "cover": ' + blocks + "}")


def _id_text(ids: list[Any]) -> NDArray[np.object_]:
    out = np.empty(len(ids), dtype=object)
    out[:] = [encode_basestring_ascii(v) if type(v) is str else int.__repr__(v) for v in ids]
    return out
