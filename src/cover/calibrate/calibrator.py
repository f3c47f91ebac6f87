"""The user-facing calibrator: configuration + fitted threshold, saved as versioned JSON.

>>> import numpy as np, cover
>>> cal_table = cover.GroundingTable.from_arrays(   # end overshoots by i/4 s
...     qid=np.arange(99), duration=150.0, pred_start=np.full(99, 40.0),
...     pred_end=np.full(99, 60.0), truth=(np.full(99, 45.0), 60.0 + np.arange(99) / 4))
>>> cal = cover.Calibrator(score="sec", alpha=0.1).fit(cal_table)
>>> cal.threshold_, cal.k_              # k = ceil(100 * 0.9) = 90 -> score 89/4
(22.25, 90)
>>> cal.certify(cal_table).row(0)      # [40 - 22.25, 60 + 22.25]
[[17.75, 82.25]]
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any, Self

from cover._json import from_json_number, to_json_number
from cover._version import __version__
from cover.calibrate.quantile import AlphaLike, as_fraction
from cover.calibrate.split import Threshold, split_conformal
from cover.data.table import GroundingTable
from cover.errors import CalibratorFileError
from cover.regions import Regions, build_regions
from cover.scores import (
    DEFAULT_MIN_SCALE,
    check_family,
    check_target,
    compute_scores,
)

SCHEMA = "cover.calibrator"
SCHEMA_VERSION = 1
_SCALES = {"norm": "predicted_length", "sec": "seconds", "sls": "relevance"}
RULES = ("split",)


def alpha_text(a: Fraction) -> str:
    """Exact text of ``alpha``: a decimal when it terminates ("0.1"), else "p/q"."""
    d = a.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    if d == 1:
        return str(Decimal(a.numerator) / Decimal(a.denominator))
    return f"{a.numerator}/{a.denominator}"


def _digest(payload: dict[str, Any]) -> str:
    canon = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(canon.encode()).hexdigest()


@dataclass
class Calibrator:
    """Calibrate once on a labelled table, then certify any number of new predictions.

    Parameters
    ----------
    score : {"norm", "sec", "sls"}
        Score family (paper §Method): length-normalised widening, widening in
        seconds, or super-level set of the relevance signal.
    alpha : float
        Target miscoverage; regions contain the truth with probability ``>= 1 - alpha``.
    rule : {"split"}
        Calibration rule.
    min_scale : float
        NORM scale floor in seconds for near-zero-length predictions.
    target : {"envelope", "windows"}
        Cover the envelope of multi-window truth (paper) or every window.

    Fitted attributes end with ``_``: ``threshold_``, ``k_``, ``n_``, ``counts_``.
    """

    score: str = "norm"
    alpha: AlphaLike = 0.1
    rule: str = "split"
    min_scale: float = DEFAULT_MIN_SCALE
    target: str = "envelope"
    threshold_: float | None = field(default=None, init=False)
    k_: int | None = field(default=None, init=False)
    n_: int | None = field(default=None, init=False)
    counts_: dict[str, int] = field(default_factory=dict, init=False)
    clip_: float | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        check_family(self.score)
        check_target(self.target)
        self._alpha = as_fraction(self.alpha)
        if self.rule not in RULES:
            raise ValueError(f"unknown rule {self.rule!r}; choose one of {', '.join(RULES)}")
        if not (isinstance(self.min_scale, (int, float)) and math.isfinite(self.min_scale)
                and self.min_scale > 0):
            raise ValueError(f"min_scale must be a finite number > 0 seconds, "
                             f"got {self.min_scale!r}")

    # ---- fit / certify ------------------------------------------------------------
    def fit(self, table: GroundingTable) -> Self:
        """Score the labelled ``table`` and set ``threshold_`` by the rule."""
        scores = compute_scores(table, self.score, min_scale=self.min_scale, target=self.target)
        th = split_conformal(scores.values, alpha=self._alpha)
        self._set(th, scores.counts(), table.clip)
        return self

    def _set(self, th: Threshold, counts: dict[str, int], clip: float | None) -> None:
        self.threshold_, self.k_, self.n_ = th.value, th.k, th.n
        self.counts_ = counts
        self.clip_ = clip if self.score == "sls" else None

    @property
    def fitted(self) -> bool:
        return self.threshold_ is not None

    def _require_fitted(self) -> float:
        if self.threshold_ is None:
            raise RuntimeError("this Calibrator is not fitted: call fit(table) or load(path)")
        return self.threshold_

    @property
    def alpha_fraction(self) -> Fraction:
        return self._alpha

    def certify(self, table: GroundingTable) -> Regions:
        """Regions at the calibrated threshold for every row (durations required)."""
        q = self._require_fitted()
        if self.score == "sls" and self.clip_ is not None and table.clip != self.clip_:
            raise ValueError(
                f"relevance clips are {table.clip} s here but {self.clip_} s at calibration"
            )
        return build_regions(table, self.score, q, min_scale=self.min_scale,
                             alpha=float(self._alpha))

    @property
    def expected_coverage(self) -> float:
        """``k / (n + 1)``: the mean realised coverage under i.i.d. scores."""
        self._require_fitted()
        assert self.k_ is not None and self.n_ is not None
        return min(self.k_, self.n_ + 1) / (self.n_ + 1)

    # ---- persistence --------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The versioned JSON document (with a sha256 of its own content)."""
        q = self._require_fitted()
        payload: dict[str, Any] = {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "created_by": f"cover {__version__}",
            "score": self.score,
            "scale": _SCALES[self.score],
            "target": self.target,
            "min_scale": float(self.min_scale),
            "clip_seconds": self.clip_,
            "alpha": alpha_text(self._alpha),
            "rule": self.rule,
            "threshold": to_json_number(q),
            "k": self.k_,
            "n_calibration": self.n_,
            "counts": dict(self.counts_),
        }
        payload["sha256"] = _digest(payload)
        return payload

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def from_dict(cls, doc: Any, *, source: str = "<dict>") -> Calibrator:
        """Rebuild a fitted calibrator; a wrong schema, version or checksum is an error."""
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
            raise CalibratorFileError(f"{source}: not a COVER calibrator (schema != {SCHEMA!r})")
        version = doc.get("schema_version")
        if version != SCHEMA_VERSION:
            raise CalibratorFileError(
                f"{source}: calibrator schema version {version!r}, but this COVER "
                f"({__version__}) reads version {SCHEMA_VERSION}; re-run `cover calibrate`"
            )
        body = {k: v for k, v in doc.items() if k != "sha256"}
        if doc.get("sha256") != _digest(body):
            raise CalibratorFileError(
                f"{source}: checksum mismatch: the file was edited or damaged after it was "
                "written; re-run `cover calibrate` rather than editing thresholds by hand"
            )
        try:
            cal = cls(score=doc["score"], alpha=Fraction(doc["alpha"]), rule=doc["rule"],
                      min_scale=doc["min_scale"], target=doc["target"])
            value = from_json_number(doc["threshold"])
            if math.isnan(value):
                raise ValueError("threshold is missing")
            th = Threshold(doc["rule"], cal._alpha, value, int(doc["k"]),
                           int(doc["n_calibration"]))
            clip = doc.get("clip_seconds")
            cal._set(th, dict(doc.get("counts", {})), None if clip is None else float(clip))
        except (KeyError, ValueError, TypeError) as exc:
            raise CalibratorFileError(f"{source}: malformed calibrator field ({exc})") from exc
        return cal

    @classmethod
    def load(cls, path: str | Path) -> Calibrator:
        """Read a calibrator written by :meth:`save`."""
        p = Path(path)
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CalibratorFileError(f"{path}: no such calibrator file") from None
        except OSError as exc:
            raise CalibratorFileError(f"{path}: cannot read calibrator file ({exc.strerror})") \
                from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise CalibratorFileError(f"{path}: corrupt calibrator file (not JSON: {exc})") \
                from None
        return cls.from_dict(doc, source=str(path))

    def __repr__(self) -> str:
        state = f", threshold_={self.threshold_!r}, n_={self.n_}" if self.fitted else ""
        return (f"Calibrator(score={self.score!r}, alpha={float(self._alpha)!r}, "
                f"rule={self.rule!r}{state})")
