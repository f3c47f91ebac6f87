"""The calibrator file: versioned JSON (schema version 2), validated field by field.

Layout::

    {"schema": "cover.calibrator", "schema_version": 2, "created_by": "cover 0.1.0",
     "score": "norm", "scale": "predicted_length", "target": "envelope",
     "min_scale": 1.0, "clip_seconds": null, "alpha": "0.1",
     "rule": "split", "params": {},
     "groups": {"kind": "all"},
     "thresholds": {"all": {"n": 623, "value": 1.23, "k": 561}},
     "fallback": [],
     "counts": {"rows": 623, "refused": 0, ...},
     "fitted_on": {"count": 623, "sha256": "...", "qids": ["...", ...]},
     "sha256": "..."}

A per-boundary rule's group record is ``{"n": .., "start": {"value", "k"}, "end":
{"value", "k"}}``. Thresholds are numbers or "inf" (never -inf or NaN); ``k`` is the
rank the rule prescribes (``ceil((n+1)(1-alpha))`` for split; ``k > n`` only with
"inf"), or null for rules that are not rank-based. ``alpha`` is exact text ("0.1",
"1/3"). ``fitted_on`` has the count and sha256 of the sorted, newline-joined
calibration qids, and the qids themselves up to 5000 rows. A calibrator fitted with
``keep_scores`` also holds ``calibration_scores`` (an optional field): each group's
sorted scores, a sketch beyond 5000 (:mod:`cover.calibrate.pvalues`, which states the
p-value error and the size cost, about 20 bytes a score). An SLS calibrator whose
relevance signal was built from the scored proposals holds ``"relevance": "proposals"``
(the other optional field; ``cover certify`` builds the same signal); a file without it
reads as ``"saliency"``, the grounder's own signal, so the files written before the
field existed, and every NORM/SEC/SIGMA file, keep their bytes and their meaning. A
COVER that predates the field refuses such a file (not a calibrator field) rather than
certify it on the wrong signal.

The ``sha256`` field is a checksum of the other fields (canonical JSON): it detects
damage and careless edits (**integrity**), not who wrote the file (it is not a
signature: anyone can recompute it). That is why every field is also checked against
the others on load (:mod:`cover.calibrate.calibrator_check`, whose field lists are
re-exported here), and a failure names the field.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any, Protocol, TypeVar

from cover._json import to_json_number
from cover._version import __version__
from cover.calibrate.calibrator_check import (  # noqa: F401  (re-exported here)
    COUNTS,
    FIELDS,
    OPTIONAL,
    SCALES,
    check_document,
)
from cover.calibrate.calibrator_fields import BadField, alpha_text
from cover.calibrate.registry import Fallback, GroupThreshold
from cover.data.relevance import SALIENCY
from cover.errors import CalibratorFileError

SCHEMA = "cover.calibrator"
SCHEMA_VERSION = 2
#: The first bytes of a gzip file.
GZIP_MAGIC = b"\x1f\x8b"


class Fitted(Protocol):
    """What of a fitted :class:`cover.calibrate.calibrator.Calibrator` its file holds.

    This module works on that shape rather than importing the class, so the calibrator
    can import its file format and not the other way round (no import circle)."""

    score: str
    target: str
    min_scale: float
    rule: str
    groups: str
    thresholds_: dict[str, GroupThreshold]
    params_: dict[str, Any]
    group_params_: dict[str, Any]
    fallback_: list[Fallback]
    counts_: dict[str, int]
    fitted_on_: dict[str, Any] | None
    clip_: float | None
    relevance: str
    score_sketch_: dict[str, Any] | None

    @property
    def alpha_fraction(self) -> Fraction: ...


F = TypeVar("F", bound=Fitted)


def _digest(payload: dict[str, Any]) -> str:
    canon = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(canon.encode()).hexdigest()


def _record(rec: GroupThreshold) -> dict[str, Any]:
    out: dict[str, Any] = {"n": rec.n}
    for side, s in rec.sides.items():
        entry = {"value": to_json_number(s.value), "k": s.k}
        if side == "both":
            out.update(entry)
        else:
            out[side] = entry
    return out


def to_document(cal: Fitted) -> dict[str, Any]:
    """The JSON document of a fitted calibrator, sealed with its sha256."""
    payload: dict[str, Any] = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "created_by": f"cover {__version__}",
        "score": cal.score,
        "scale": SCALES[cal.score],
        "target": cal.target,
        "min_scale": float(cal.min_scale),
        "clip_seconds": cal.clip_,
        "alpha": alpha_text(cal.alpha_fraction),
        "rule": cal.rule,
        "params": dict(cal.params_),
        "groups": {"kind": cal.groups, **cal.group_params_},
        "thresholds": {label: _record(r) for label, r in sorted(cal.thresholds_.items())},
        "fallback": [f.to_dict() for f in cal.fallback_],
        "counts": dict(cal.counts_),
        "fitted_on": dict(cal.fitted_on_ or {}),
    }
    if cal.score_sketch_ is not None:
        payload["calibration_scores"] = cal.score_sketch_
    if cal.relevance != SALIENCY:  # absent means saliency: older files keep their bytes
        payload["relevance"] = cal.relevance
    payload["sha256"] = _digest(payload)
    return payload


def read_document(path: str | Path) -> Any:
    """The parsed JSON of a calibrator file (a clear error when it cannot be read); a
    gzip-compressed file is read too (recognised by its bytes, whatever its name), as
    COVER's other readers do."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise CalibratorFileError(f"{path}: no such calibrator file") from None
    except IsADirectoryError:
        raise CalibratorFileError(f"{path}: is a folder, not a calibrator file") from None
    except OSError as exc:
        raise CalibratorFileError(f"{path}: cannot read calibrator file ({exc.strerror})") \
            from None
    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error):
            raise CalibratorFileError(f"{path}: corrupt calibrator file (a damaged or "
                                      "truncated gzip file)") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CalibratorFileError(
            f"{path}: corrupt calibrator file (not UTF-8 text: byte 0x{data[exc.start]:02x} "
            f"at offset {exc.start})") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" and _first_line_object(text):
            raise CalibratorFileError(
                f"{path}: not a calibrator file: it holds one JSON object per line (a "
                "prediction or regions file?); give the JSON file `cover calibrate` wrote"
            ) from None
        raise CalibratorFileError(f"{path}: corrupt calibrator file (not JSON: {exc})") from None


def _first_line_object(text: str) -> bool:
    """Whether the first line of ``text`` is a whole JSON object (JSON lines)."""
    try:
        return isinstance(json.loads(text.lstrip().split("\n", 1)[0]), dict)
    except (json.JSONDecodeError, RecursionError):
        return False


def from_document(cls: Callable[..., F], doc: Any, *, source: str = "<dict>") -> F:
    """Rebuild a fitted calibrator; a wrong schema, version, checksum or any field that
    disagrees with the others is a :class:`CalibratorFileError` naming the field."""
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise CalibratorFileError(f"{source}: not a COVER calibrator (schema != {SCHEMA!r})")
    version = doc.get("schema_version")
    if type(version) is float and version == SCHEMA_VERSION:
        # 2.0 equals 2 in Python, but the writer only ever writes the integer.
        raise CalibratorFileError(f"{source}: invalid calibrator field schema_version: "
                                  f"{json.dumps(version)} is not the integer {SCHEMA_VERSION}")
    if isinstance(version, bool) or version != SCHEMA_VERSION:
        hint = ("; version 1 files do not record the rows they were fitted on, so they "
                "cannot be migrated" if version == 1 and not isinstance(version, bool) else "")
        raise CalibratorFileError(
            f"{source}: calibrator schema version {version!r}, but this COVER "
            f"({__version__}) reads version {SCHEMA_VERSION}{hint}; re-run `cover calibrate`"
        )
    body = {k: v for k, v in doc.items() if k != "sha256"}
    if doc.get("sha256") != _digest(body):
        raise CalibratorFileError(
            f"{source}: checksum mismatch: the file was edited or damaged after it was "
            "written; re-run `cover calibrate` rather than editing thresholds by hand"
        )
    try:
        v = check_document(doc)
    except BadField as exc:
        raise CalibratorFileError(f"{source}: invalid calibrator {exc}") from None
    try:
        cal = cls(score=v["score"], alpha=v["alpha"], rule=v["rule"], min_scale=v["min_scale"],
                  target=v["target"], params=v["params"], groups=v["kind"],
                  group_params=v["gparams"], keep_scores=v["sketch"] is not None,
                  relevance=v["relevance"])
    except ValueError as exc:
        raise CalibratorFileError(f"{source}: invalid calibrator settings ({exc})") from None
    cal.thresholds_ = v["thresholds"]
    cal.params_ = v["params"]
    cal.group_params_ = v["gparams"]
    cal.fallback_ = v["fallback"]
    cal.counts_ = v["counts"]
    cal.fitted_on_ = v["fitted_on"]
    cal.clip_ = v["clip"]
    cal.score_sketch_ = v["sketch"]
    return cal
