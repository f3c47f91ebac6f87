"""Per-query conformal p-values of certified rows, from calibration scores kept in the file.

**Definition.** A test row has no truth, so its p-value is that of a *candidate* truth:
for a candidate ``I`` with score ``s(I) = inf{lam : I ⊆ C_lam}`` (the nestedness
contract of :mod:`cover.scores`), the conformal p-value is

``p(I) = (1 + #{i : S_i >= s(I)}) / (n + 1)``

over the ``n`` calibration scores ``S_i`` of the row's group. For the true window it is
super-uniform on exchangeable data (``P(p <= t) <= t``), the property conformal
prediction rests on. COVER reports it for the least informative candidate, **the whole
video** ``[0, T]``: ``s = lam_full``, the smallest ``lam`` whose region is the whole video,
so

``p(row) = (1 + #{i : C_{S_i}(row) = [0, T]}) / (n + 1)``

which is also **the smallest alpha at which the split-conformal region of this row is
narrower than the video**: ``C_{q(alpha)} != [0, T]`` iff ``alpha >= p(row)``. A small
p-value says the whole video is an implausible truth at that level (the prediction is
informative even at high confidence); a p-value near 1 says the region is the whole
video at any useful level. ``cover certify --max-p P`` abstains on the rows with
``p(row) > P`` (their region would be the whole video at ``alpha = P``). A refusal has
``p = 1``. Because the candidate contains the truth, ``p(row) <= p(truth)``: the row's
p-value is not itself super-uniform and is a ranking, not a test of the truth.

**What is kept.** The sorted calibration scores of each group, as ``{"n", "values",
"ranks"}``: all ``n`` when ``n <= KEEP_MAX`` (``ranks`` null: the p-values are exact),
else ``KEEP_MAX`` order statistics at evenly spread ranks (``ranks`` lists them, the
first 1 and the last ``n``). With a sketch, the count ``#{S_i >= lam_full}`` is known
between two kept ranks; the larger end is taken, so the p-value is conservative (never
smaller than the exact one) and at most ``(gap - 1)/(n + 1) < 1/(KEEP_MAX - 1)`` above it,
``gap`` the largest distance between kept ranks. Size cost in the calibrator file: about
20 bytes per kept score (``KEEP_MAX = 5000``: at most ~100 kB per group, ~40 kB more for
the ranks of a sketch).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover._json import from_json_number, to_json_number
from cover.calibrate.calibrator_fields import BadField, dict_field, int_field
from cover.calibrate.registry import GroupThreshold
from cover.regions import Regions

#: Calibration scores kept exactly up to this many per group; a sketch of this many beyond.
KEEP_MAX = 5000


def score_sketch(scores: NDArray[np.float64], labels: NDArray[Any]) -> dict[str, Any]:
    """``{label: {"n", "values", "ranks"}}`` (module docstring) of each group's scores."""
    out: dict[str, Any] = {}
    labels = np.asarray(labels)
    for g in np.unique(labels):
        s = np.sort(np.asarray(scores, dtype=np.float64)[labels == g])
        n = int(s.size)
        ranks = None
        if n > KEEP_MAX:
            r = np.unique(np.linspace(1, n, KEEP_MAX).round().astype(np.int64))
            s, ranks = s[r - 1], r.tolist()
        out[str(g)] = {"n": n, "values": [to_json_number(v) for v in s.tolist()],
                       "ranks": ranks}
    return out


def sketch_field(x: Any, thresholds: dict[str, GroupThreshold]) -> dict[str, Any]:
    """The saved ``calibration_scores``: one entry per threshold group, ``n`` its size,
    values sorted numbers (or "inf"/"-inf"), ranks null (all kept) or increasing from 1
    to ``n``, one per value; a wrong entry is a :class:`BadField`."""
    doc = dict_field(x, "calibration_scores")
    if set(doc) != set(thresholds):
        raise BadField("calibration_scores", "must hold one entry per threshold group")
    for label, raw in doc.items():
        name = f"calibration_scores.{label}"
        entry = dict_field(raw, name)
        if set(entry) != {"n", "values", "ranks"}:
            raise BadField(name, "must hold exactly n, values and ranks")
        n = int_field(entry["n"], f"{name}.n", 1)
        if n != thresholds[label].n:
            raise BadField(f"{name}.n", f"{n} is not the group's n {thresholds[label].n}")
        vals = entry["values"]
        try:
            v = np.array([from_json_number(a) for a in vals], dtype=np.float64) \
                if isinstance(vals, list) else None
        except ValueError:
            v = None
        if v is None or np.isnan(v).any() or (np.diff(v) < 0).any():
            raise BadField(f"{name}.values", "is not a sorted list of numbers")
        ranks = entry["ranks"]
        want = n if ranks is None else len(ranks) if isinstance(ranks, list) else -1
        r = np.asarray(ranks if isinstance(ranks, list) else [], dtype=object)
        if ranks is not None and (
                not all(type(a) is int for a in r.tolist()) or len(r) < 2 or r[0] != 1
                or r[-1] != n or (np.diff(r.astype(np.int64)) <= 0).any()):
            raise BadField(f"{name}.ranks", f"{json.dumps(ranks)[:40]} is not null or "
                           f"increasing ranks from 1 to {n}")
        if v.size != want:
            raise BadField(f"{name}.values", f"holds {v.size} scores, expected {want}")
    return doc


def abstain_above(regions: Regions, max_p: float) -> Regions:
    """``cover certify --max-p``: the rows whose p-value is above ``max_p`` abstain (their
    region would be the whole video at ``alpha = max_p``), with the reason."""
    from cover.calibrate.ltt import mark_abstained

    if regions.p_value is None:
        raise ValueError("no p-values: the calibrator kept no calibration scores")
    p = regions.p_value
    reasons = np.array([f"abstained: p-value {v:.4g} is above --max-p {max_p:g} (the region "
                        f"is the whole video at alpha {max_p:g})" if v > max_p else None
                        for v in p.tolist()], dtype=object)
    return mark_abstained(regions, reasons)


def _whole(regions: Regions) -> NDArray[np.bool_]:
    """Rows whose region is the whole video (up to rounding)."""
    iv = regions.intervals
    t = regions.duration
    return (iv.n_components == 1) & (regions.length >= t - 1e-9 * np.maximum(1.0, t))


def p_values(regions_at: Callable[[NDArray[np.float64]], Regions], entry: dict[str, Any],
             n_rows: int) -> NDArray[np.float64]:
    """``p(row)`` of the module docstring for ``n_rows`` rows of one group, ``regions_at(lam
    per row)`` their regions: a vectorised bisection over the kept scores (about
    ``log2(len(values)) + 1`` region builds)."""
    v = np.array([from_json_number(a) for a in entry["values"]], dtype=np.float64)
    m = v.size
    lo, hi = np.zeros(n_rows, dtype=np.int64), np.full(n_rows, m, dtype=np.int64)
    while (lo < hi).any():
        mid = (lo + hi) // 2
        live = lo < hi
        whole = _whole(regions_at(v[np.minimum(mid, m - 1)]))
        hi = np.where(live & whole, mid, hi)
        lo = np.where(live & ~whole, mid + 1, lo)
    return _p_of_first(lo, entry)


def candidate_p(entry: dict[str, Any], score: NDArray[np.float64]) -> NDArray[np.float64]:
    """``p(I)`` of candidates with scores ``score`` (e.g. the truth's, on labelled rows):
    ``(1 + #{S_i >= score}) / (n + 1)``, conservative with a sketch."""
    v = np.array([from_json_number(a) for a in entry["values"]], dtype=np.float64)
    return _p_of_first(np.searchsorted(v, np.asarray(score, dtype=np.float64), side="left"),
                       entry)


def _p_of_first(first: NDArray[np.int64], entry: dict[str, Any]) -> NDArray[np.float64]:
    """The p-value when ``first`` is the index of the first kept score at or above the
    candidate's (the number kept: none). The scores ranked above the previous kept one
    may reach the candidate: they are counted (conservative with a sketch)."""
    n, m = int(entry["n"]), len(entry["values"])
    ranks = np.arange(1, m + 1) if entry["ranks"] is None else np.asarray(entry["ranks"])
    below = np.where(first > 0, ranks[np.maximum(first - 1, 0)], 0)
    return (1.0 + n - below) / (n + 1.0)
