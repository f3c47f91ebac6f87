"""UAG-OOPS (unusual-activity grounding on Oops! val clips) and the Oops! onset files.

* Ground truth (``uag_oops_dataset_v1.json`` and ``..._start_time_fixed.json``): a JSON
  dict clip name -> ``{video_path, start_time, end_time, description}``, seconds.
  The window is [failure onset, end of clip], so ``end_time`` is the clip length.
* Oops! onsets (``transition_times.json``, 3 workers; ``heldout_transition_times.json``,
  a 4th annotator): clip -> ``{t: [onset s, ...] (-1 = no failure seen), len, ...}``.
* Answer files (``<model>_pred_..._null_fixed.json``): the ground-truth fields plus the
  model's raw text (``videochat2_pred``, ``video_llama2_pred``, ``llama3_pred``) and
  the authors' own parse, ``pred_start`` / ``pred_end``, strings in mixed notations
  or null.

Rows are keyed by clip name (qid = the name; vid = the source compilation the clip
was cut from, the split unit); ``line`` is the line the entry starts on in the file
(pretty-printed files), or its 1-based entry number.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.rules import MAX_ID_CHARS, too_long_id
from cover.errors import InputError, RowProblem
from cover.intervals import Intervals
from cover.io.fields import bad_number, first_reason, float_field, reject_rows, table_of
from cover.io.jsonl import OnError, RawRows, object_column, raise_on_rejections, read_input_bytes
from cover.io.qvhighlights import Loaded
from cover.ragged import Ragged

_TOP_KEY = re.compile(r'^\s{0,8}("(?:[^"\\]|\\.)*")\s*:\s*\{', re.MULTILINE)


def read_keyed_json(path: str | Path) -> RawRows:
    """A JSON object of ``name -> {fields}`` as rows (``qid`` = ``vid`` = the name)."""
    raw_bytes = read_input_bytes(path)  # gunzipped, without a byte-order mark
    try:
        text = raw_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw_bytes.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{path}:{line}: not UTF-8 text (byte {raw_bytes[exc.start]:#04x}); "
                         "a JSON file must be UTF-8") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object keyed by clip name")
    lines: dict[str, int] = {}
    line, pos = 1, 0
    for m in _TOP_KEY.finditer(text):  # count newlines incrementally: linear in the file
        line += text.count("\n", pos, m.start())
        pos = m.start()
        lines.setdefault(json.loads(m.group(1)), line)
    records: list[dict[str, Any]] = []
    at: list[int] = []
    raw = RawRows(str(path), records, np.empty(0, dtype=np.int64))
    for i, (name, rec) in enumerate(data.items(), start=1):
        line = lines.get(name, i) if len(lines) == len(data) else i
        if not isinstance(rec, dict):
            raw.set_aside(RowProblem(str(path), line, name, "entry is not an object",
                                     "rejected"), rec)
            continue
        records.append({**rec, "qid": name, "vid": name})
        at.append(line)
    raw.lines = np.asarray(at, dtype=np.int64)
    return raw


def _number(v: Any) -> Any:
    """A number stored as text ("2.714329") as a float; anything else unchanged."""
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return v
    return v


#: The split unit (SPEC: the source video), as ``cover formats`` names it.
UNIT = ("source compilation: the clip name without its trailing clip index "
        "(`... (May 2017)0` -> `... (May 2017)`)")


def sniff(doc: Any) -> bool:
    """A JSON object of clip name -> entry with ``start_time``, ``end_time`` and
    ``description`` (answer files add a ``<model>_pred`` text: those are for
    ``cover parse-answers``)."""
    first = next(iter(doc.values()), None) if isinstance(doc, dict) else None
    return (isinstance(first, dict) and {"start_time", "end_time", "description"} <= set(first)
            and not any(k.endswith("_pred") for k in first))


def read_uag_ground_truth(path: str | Path, *, on_error: OnError = "raise") -> Loaded:
    """UAG-OOPS ground truth (either version) as a labelled table: qid = the clip name,
    vid = its source compilation (:func:`uag_source_video`, the split unit), truth
    ``[start_time, end_time]``, duration = ``end_time`` (the clip length), query =
    ``description``. Rows with a bad number or ``start > end`` are rejected, and so
    are onsets of -1 (Oops!' "no failure seen": 69 rows of the older version)."""
    raw = read_keyed_json(path)
    s, has_s = float_field(raw, "start_time", get=lambda r: _number(r.get("start_time")))
    e, has_e = float_field(raw, "end_time", get=lambda r: _number(r.get("end_time")))
    size = np.fromiter((len(r["qid"]) for r in raw.records), np.int64, len(raw.records))
    keep = reject_rows(raw, first_reason([
        *[(size == n, too_long_id(int(n))) for n in np.unique(size[size > MAX_ID_CHARS])],
        (s == -1, "start_time is -1: the annotator saw no failure (no true moment)"),
        (~has_s | bad_number(s, has_s, positive=False), "start_time must be a number >= 0"),
        (~has_e | bad_number(e, has_e, positive=True), "end_time must be a number > 0"),
        (np.nan_to_num(s, nan=0.0) > np.nan_to_num(e, nan=np.inf), "start_time > end_time"),
    ]))
    s, e = s[keep], e[keep]
    qid = np.array([r["qid"] for r in raw.records], dtype=str)
    table = table_of(raw, duration=e, truth=Intervals.single(s, e), vid=uag_source_video(qid),
                     query=object_column([r.get("description") for r in raw.records]))
    raise_on_rejections(raw.problems, on_error, raw.path)
    return Loaded(table, raw.problems, raw.rejected)


@dataclass(frozen=True)
class OopsOnsets:
    """Oops! failure-onset labels: one row per clip, ``onsets`` ragged (one value per
    annotator, NaN where the annotator saw no failure, ``-1`` in the file), ``length``
    the clip length in seconds (NaN when the file has none, as in the held-out file)."""

    clip: NDArray[np.str_]
    onsets: Ragged
    length: NDArray[np.float64]
    line: NDArray[np.int64]
    source: str

    def __len__(self) -> int:
        return int(self.clip.size)

    def take_clips(self, clips: NDArray[np.str_]) -> OopsOnsets:
        """Rows for ``clips`` in that order (every clip must be present)."""
        from cover.data.join import index_of

        j, found = index_of(self.clip, np.asarray(clips).astype(str))
        if not found.all():
            missing = np.asarray(clips)[~found]
            raise InputError(f"{self.source}: {missing.size} clip(s) missing, e.g. "
                             f"{str(missing[0])!r}")
        return OopsOnsets(self.clip[j], self.onsets.take(j), self.length[j], self.line[j],
                          self.source)


def read_oops_onsets(path: str | Path) -> OopsOnsets:
    """An official Oops! onset file (``transition_times.json`` or the held-out one)."""
    raw = read_keyed_json(path)
    vals: list[list[float]] = []
    length = np.full(len(raw.records), np.nan)
    for i, rec in enumerate(raw.records):
        t = rec.get("t")
        if not isinstance(t, list) or not all(isinstance(x, (int, float)) for x in t):
            raise InputError(f"{raw.path}:{int(raw.lines[i])} (clip {rec['qid']}): 't' must be "
                             "a list of onsets in seconds")
        vals.append([float(x) if x >= 0 else math.nan for x in t])
        n = rec.get("len")
        if isinstance(n, (int, float)) and not isinstance(n, bool):
            length[i] = float(n)
    clip = np.array([r["qid"] for r in raw.records], dtype=str)
    return OopsOnsets(clip, Ragged.from_lists(vals), length, raw.lines, raw.path)


@dataclass(frozen=True)
class UagAnswers:
    """One UAG-OOPS answer file: per clip the model's raw ``text``, the authors' own
    parse (``authors_start`` / ``authors_end`` in seconds, NaN where they gave null,
    and the strings as written), and the ground truth the file embeds."""

    model_field: str
    clip: NDArray[np.str_]
    text: NDArray[np.object_]
    authors_start: NDArray[np.float64]
    authors_end: NDArray[np.float64]
    authors_raw: NDArray[np.object_]
    gt_start: NDArray[np.float64]
    gt_end: NDArray[np.float64]
    line: NDArray[np.int64]
    source: str

    def __len__(self) -> int:
        return int(self.clip.size)


def authors_seconds(value: Any) -> float:
    """The authors' time string read their way: ``h:m:s``, ``m:s`` or plain seconds
    (NaN for null or anything else)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if not isinstance(value, str):
        return math.nan
    try:
        parts = [float(x) for x in value.strip().split(":")]
    except ValueError:
        return math.nan
    if not 1 <= len(parts) <= 3:
        return math.nan
    total = 0.0
    for x in parts:
        total = total * 60 + x
    return total


def read_uag_answers(path: str | Path) -> UagAnswers:
    """A UAG-OOPS answer file; the text field is the one key ending in ``_pred``."""
    raw = read_keyed_json(path)
    if not raw.records:
        raise InputError(f"{raw.path}: no entries")
    fields = sorted({k for r in raw.records for k in r if k.endswith("_pred")})
    if len(fields) != 1:
        raise InputError(f"{raw.path}: expected one '<model>_pred' text field, found "
                         f"{fields or 'none'}")
    f = fields[0]
    recs = raw.records
    return UagAnswers(
        model_field=f,
        clip=np.array([r["qid"] for r in recs], dtype=str),
        text=object_column([r.get(f) if isinstance(r.get(f), str) else "" for r in recs]),
        authors_start=np.array([authors_seconds(r.get("pred_start")) for r in recs]),
        authors_end=np.array([authors_seconds(r.get("pred_end")) for r in recs]),
        authors_raw=object_column([(r.get("pred_start"), r.get("pred_end")) for r in recs]),
        gt_start=np.array([authors_seconds(_number(r.get("start_time"))) for r in recs]),
        gt_end=np.array([authors_seconds(_number(r.get("end_time"))) for r in recs]),
        line=raw.lines,
        source=raw.path,
    )


_CLIP_INDEX = re.compile(r"\d+$")


def uag_source_video(clip: NDArray[np.str_]) -> NDArray[np.str_]:
    """The source compilation of each clip: its name without the trailing clip index
    (``"... (May 2017)0"`` -> ``"... (May 2017)"``, outer spaces stripped), the split
    unit for UAG-OOPS. A title that itself ends in digits loses them too, which only
    merges units."""
    names = np.asarray(clip).astype(str)
    uniq, inv = np.unique(names, return_inverse=True)
    out = np.array([_CLIP_INDEX.sub("", u).strip() or u for u in uniq.tolist()], dtype=str)
    return out[inv] if out.size else names
