"""Nonconformity scores: the smallest ``lam`` whose region contains the truth.

Four families (paper §Method, SPEC §3):

* **NORM**: ``S = max((s_hat - s*)/l, (e* - e_hat)/l)`` with ``l = max(e_hat - s_hat, min_scale)``.
* **SEC**: the same with ``l = 1`` (seconds).
* **SIGMA**: per-side scales, the boundary uncertainty the grounder reports:
  ``S = max((s_hat - s*)/l_s, (e* - e_hat)/l_e)``, ``l_s = max(start_std, min_scale)``,
  ``l_e = max(end_std, min_scale)`` (widen by multiples of the reported std).
* **SLS**: ``S = -min f`` over every clip the truth needs, for a per-clip relevance ``f``.

The interval families also give per-side scores ``S_s = (s_hat - s*)/l_s`` and
``S_e = (e* - e_hat)/l_e`` (``S = max(S_s, S_e)``) for per-boundary rules.

Refused rows (no usable prediction for the family) score ``-inf``: their region is
the whole video for every ``lam``, so they are always covered. Every score obeys
the nestedness contract ``S <= lam  <=>  truth ⊆ C_lam`` (see :mod:`cover.regions`).

The family names, the truth targets and the input each family needs (a file with none of
it is an error, not a table of refusals) are in :mod:`cover.families`, re-exported here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from cover.data.table import ANSWERED, GroundingTable
from cover.families import (  # noqa: F401  (re-exported: cover.scores.FAMILIES, ...)
    ALL_FAMILIES,
    DEFAULT_MIN_SCALE,
    FAMILIES,
    FAMILY_INPUT,
    INTERVAL_FAMILIES,
    TARGETS,
    Family,
    Target,
    check_family,
    check_target,
    missing_family_input,
    refused_for,
    require_family_input,
    require_inputs,
)
from cover.intervals import CONTAINMENT_ATOL, Intervals
from cover.ragged import Ragged, offsets_from_lengths, row_ids, segment_max

_NO_FLAGS: NDArray[np.bool_] = np.zeros(0, dtype=bool)

#: Rows per block of the NORM / SEC scoring pass: half the other blocked passes'
#: (:data:`cover.data.rules.BLOCK_ROWS`), as a block here holds seven arrays (four
#: inputs, the scores, two scratch) that share a 2 MB L2 cache (fit 6 % less CPU at 1e6
#: rows than at 1 << 15, 2 % at 1e7).
BLOCK_ROWS = 1 << 14


def interval_scale(
    pred_start: NDArray[np.float64],
    pred_end: NDArray[np.float64],
    family: Family,
    min_scale: float = DEFAULT_MIN_SCALE,
    *,
    with_floored: bool = True,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Scale ``l``: ``max(e_hat - s_hat, min_scale)`` for NORM, 1 for SEC.

    Returns ``(l, floored)`` where ``floored`` marks NORM rows whose predicted length
    was below ``min_scale`` (a zero-length prediction would otherwise divide by zero);
    ``with_floored=False`` (certifying: no counts) skips it and gives an empty array.
    """
    if family == "sec":
        return np.ones_like(pred_start), np.zeros(pred_start.shape, dtype=bool)
    if not min_scale > 0:
        raise ValueError(f"min_scale must be > 0, got {min_scale}")
    length = np.asarray(pred_end - pred_start, dtype=np.float64)
    floored = (length < min_scale) & np.isfinite(length) if with_floored else _NO_FLAGS
    # max(length, min_scale) in place == where(length < min_scale, min_scale, length),
    # NaN included (no second full-length array).
    return np.maximum(length, min_scale, out=length), floored


def side_scales(
    table: GroundingTable, family: Family, min_scale: float = DEFAULT_MIN_SCALE, *,
    with_floored: bool = True,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """``(l_s, l_e, floored)``: NORM/SEC use :func:`interval_scale` on both sides; SIGMA
    ``l = max(std, min_scale)`` per side (NaN where the std is missing: a refusal)."""
    if family != "sigma":
        scale, floored = interval_scale(table.pred_start, table.pred_end, family, min_scale,
                                        with_floored=with_floored)
        return scale, scale, floored
    require_inputs(table, family)
    assert table.start_std is not None and table.end_std is not None
    if not min_scale > 0:
        raise ValueError(f"min_scale must be > 0, got {min_scale}")
    ss, se = table.start_std, table.end_std
    floored = ((ss < min_scale) | (se < min_scale)) & np.isfinite(ss) & np.isfinite(se)
    return (np.where(np.isnan(ss), np.nan, np.maximum(ss, min_scale)),
            np.where(np.isnan(se), np.nan, np.maximum(se, min_scale)), floored)


def interval_score(
    pred_start: NDArray[np.float64],
    pred_end: NDArray[np.float64],
    true_start: NDArray[np.float64],
    true_end: NDArray[np.float64],
    scale: NDArray[np.float64],
) -> NDArray[np.float64]:
    """``S = max((s_hat - s*)/l, (e* - e_hat)/l)`` (paper Eq. 1); negative when the
    prediction strictly contains the truth."""
    return np.maximum((pred_start - true_start) / scale, (true_end - pred_end) / scale)


def superlevel_score(
    relevance: Ragged,
    clip: float,
    truth: Intervals,
    duration: NDArray[np.float64],
    atol: float = CONTAINMENT_ATOL,
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """``S = -min f`` over the clips every truth window needs (paper Eq. 2).

    Clip ``i`` spans ``[i*c, min((i+1)*c, T)]``; runs of selected clips merge, and a
    window ``[a, b]`` is inside a run from clip ``j`` to ``l`` iff ``j*c <= a + atol`` and
    ``(l+1)*c >= b - atol``. With ``lo = floor((a + atol)/c)``, ``hi = ceil((b - atol)/c) - 1``
    the window needs every clip ``lo..hi`` when ``hi >= lo`` (``S_w = -min f``), and any
    one clip of ``hi..lo`` otherwise (a point-like window: ``S_w = -max f``). Clips past
    the end of the signal, or starting at or after ``T``, count as ``-inf`` (never in a
    region), giving ``S = +inf``.

    Returns ``(S, beyond_signal)``; ``beyond_signal`` marks rows that needed such clips.
    """
    n = len(truth)
    w_row = truth.rows
    size = relevance.lengths[w_row]
    lo_f = np.floor((truth.starts + atol) / clip)
    hi_f = np.ceil((truth.ends - atol) / clip) - 1
    need_all = hi_f >= lo_f
    # A window needing every clip lo..hi needs one past the signal (or at or after T)
    # iff its first or its last does: decided without listing the clips, which a long
    # video's window would make millions. Cast once clamped: 1e300 s must not wrap round.
    past = need_all & ((lo_f < 0) | (hi_f >= size) | (hi_f * clip >= duration[w_row]))
    lo = np.clip(lo_f, -1, size).astype(np.int64)
    hi = np.clip(hi_f, -1, size).astype(np.int64)
    first = np.minimum(lo, hi)
    counts = np.where(past, 1, np.abs(hi - lo) + 1)
    off = offsets_from_lengths(counts)
    k = row_ids(off)
    clip_idx = first[k] + (np.arange(off[-1], dtype=np.int64) - off[k])
    row = w_row[k]
    valid = (clip_idx >= 0) & (clip_idx < relevance.lengths[row]) & (
        clip_idx * clip < duration[row])
    flat = np.where(valid, relevance.offsets[row] + clip_idx, 0)
    values = relevance.values[flat] if relevance.values.size else np.zeros(flat.size)
    f = np.where(valid, values, -np.inf)
    f_min = np.minimum.reduceat(f, off[:-1]) if f.size else np.empty(0)
    f_max = np.maximum.reduceat(f, off[:-1]) if f.size else np.empty(0)
    window_score = np.where(past, np.inf, -np.where(need_all, f_min, f_max))
    beyond_window = np.isposinf(window_score)
    scores = segment_max(window_score, truth.offsets, empty=-np.inf)
    beyond = np.bincount(w_row, weights=beyond_window, minlength=n) > 0
    return scores, beyond


@dataclass(frozen=True)
class Scores:
    """Scores of one family on a labelled table, with the counts that explain them;
    ``start``/``end`` are the per-side scores (interval families only)."""

    family: Family
    values: NDArray[np.float64]
    refused: NDArray[np.bool_]
    floored: NDArray[np.bool_]
    beyond_signal: NDArray[np.bool_]
    start: NDArray[np.float64] | None = None
    end: NDArray[np.float64] | None = None

    def counts(self) -> dict[str, int]:
        """Rows, and the rows of each mask."""
        return {
            "rows": int(self.values.size),
            "refused": int(np.count_nonzero(self.refused)),
            "min_scale_floored": int(np.count_nonzero(self.floored)),
            "beyond_signal": int(np.count_nonzero(self.beyond_signal)),
        }


def truth_target(table: GroundingTable, target: Target) -> Intervals:
    """The truth to cover: the envelope of the windows (paper) or every window."""
    truth = table.require_truth()
    if target == "windows":
        return truth
    return Intervals.single(*truth.envelope())


def answered_block(p0: NDArray[np.float64], p1: NDArray[np.float64],
                   ok: NDArray[np.bool_], work: NDArray[np.bool_],
                   refused: NDArray[np.bool_]) -> NDArray[np.bool_]:
    """``ok = isfinite(p0) & isfinite(p1)`` into ``ok`` (``work`` a scratch buffer of
    the same size) and its negation into ``refused``: the rows of one block with a
    prediction (a refusal has NaN), for the blocked passes of scoring and widening."""
    np.isfinite(p0, out=ok)
    ok &= np.isfinite(p1, out=work)
    np.logical_not(ok, out=refused)
    return ok


def compute_scores(
    table: GroundingTable,
    family: str,
    *,
    min_scale: float = DEFAULT_MIN_SCALE,
    target: str = "envelope",
    sides: bool = True,
) -> Scores:
    """Scores of ``family`` for every row of a labelled table (refusals score -inf);
    ``sides=False``: NORM and SEC leave the per-side scores out (``start``/``end``
    None), for rules that read only ``values``."""
    fam = check_family(family)
    tgt = check_target(target)
    n = len(table)
    if fam == "sls":
        refused = refused_for(table, fam)
        s, beyond = superlevel_score(table.relevance, table.clip, truth_target(table, tgt),
                                     table.duration)
        s = np.where(refused, -np.inf, s)
        return Scores(fam, s, refused, np.zeros(n, dtype=bool), beyond & ~refused)
    # Interval families: covering every window == covering their envelope.
    ts, te = table.truth_envelope()
    if fam != "sigma":
        return _interval_scores(table, fam, ts, te, min_scale, sides)
    refused = refused_for(table, fam)
    l_s, l_e, floored = side_scales(table, fam, min_scale)
    # In place: (s_hat - s*)/l_s, then -inf on refused rows (== np.where(refused, -inf, .)).
    with np.errstate(invalid="ignore"):
        s_start = np.subtract(table.pred_start, ts)
        s_end = np.subtract(te, table.pred_end)
        if fam != "sec":  # SEC's scale is 1: x / 1 == x
            s_start /= l_s
            s_end /= l_e
    if refused.any():
        s_start[refused] = -np.inf
        s_end[refused] = -np.inf
    s = np.maximum(s_start, s_end)
    return Scores(fam, s, refused, floored & ~refused, np.zeros(n, dtype=bool), s_start, s_end)


def _interval_scores(table: GroundingTable, fam: Family, ts: NDArray[np.float64],
                     te: NDArray[np.float64], min_scale: float, sides: bool) -> Scores:
    """NORM / SEC scores, per-side scores, refusals and floored rows, computed block by
    block (:data:`BLOCK_ROWS`): the same operations in the same order
    as :func:`interval_scale` and :func:`interval_score` (identical values), with the
    scale and the masks in cache-sized scratch arrays instead of full-length ones.
    ``sides=False`` keeps no per-side scores (two full-length arrays fewer)."""
    if not min_scale > 0:
        raise ValueError(f"min_scale must be > 0, got {min_scale}")
    n = len(table)
    ps, pe = table.pred_start, table.pred_end
    answered = ANSWERED in table.checked  # no refusal, every length finite: no tests
    s_start, s_end = (np.empty(n), np.empty(n)) if sides else (None, None)
    s = np.empty(n)
    refused, floored = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    width = min(n, BLOCK_ROWS)
    scale, other = np.empty(width), np.empty(width)
    fin, flag = np.empty(width, dtype=bool), np.empty(width, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        for i in range(0, n, BLOCK_ROWS):
            b = slice(i, i + BLOCK_ROWS)
            p0, p1 = ps[b], pe[b]
            m = p0.size
            ok = None if answered else answered_block(p0, p1, fin[:m], flag[:m], refused[b])
            a = np.subtract(p0, ts[b], out=s[b] if s_start is None else s_start[b])
            z = np.subtract(te[b], p1, out=other[:m] if s_end is None else s_end[b])
            if fam == "norm":
                sc = np.subtract(p1, p0, out=scale[:m])
                fl = np.less(sc, min_scale, out=floored[b])  # a finite length below the floor
                if ok is not None:
                    fl &= np.isfinite(sc, out=flag[:m])
                    fl &= ok  # refusals are not counted as floored
                np.maximum(sc, min_scale, out=sc)
                if s_start is None:
                    # l > 0 and division rounds monotonically: max(a/l, z/l) == max(a, z)/l
                    # bit for bit, one division instead of two.
                    np.maximum(a, z, out=a)
                    a /= sc
                    if ok is not None and not ok.all():
                        a[~ok] = -np.inf
                    continue
                a /= sc
                z /= sc
            if ok is not None and not ok.all():
                a[~ok] = -np.inf
                z[~ok] = -np.inf
            np.maximum(a, z, out=s[b])
    return Scores(fam, s, refused, floored, np.zeros(n, dtype=bool), s_start, s_end)


