"""Plain numpy baselines: the formulas a user would write, no validation, no refusals."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray
from workloads import Data

from cover.intervals import CONTAINMENT_ATOL
from cover.scores import DEFAULT_MIN_SCALE as MIN_SCALE

F = NDArray[np.float64]


def np_float_rank(n: int, alpha: float) -> int:
    return math.ceil((n + 1) * (1 - alpha))  # float arithmetic on purpose


def np_sort_threshold(s: F, alpha: float) -> float:
    k = np_float_rank(s.size, alpha)
    return float(np.sort(s)[k - 1]) if k <= s.size else math.inf


def np_quantile_threshold(s: F, alpha: float) -> float:
    level = np_float_rank(s.size, alpha) / s.size
    return float(np.quantile(s, level, method="higher")) if level <= 1 else math.inf


def np_quantile_icdf_threshold(s: F, alpha: float) -> float:
    level = np_float_rank(s.size, alpha) / s.size
    return float(np.quantile(s, level, method="inverted_cdf")) if level <= 1 else math.inf


def np_norm_score_partition(d: Data, alpha: float) -> float:
    lenp = d.pe - d.ps
    scale = np.where(lenp < MIN_SCALE, MIN_SCALE, lenp)
    s = np.maximum((d.ps - d.ts) / scale, (d.te - d.pe) / scale)
    k = np_float_rank(s.size, alpha)
    return float(np.partition(s, k - 1)[k - 1])


def np_widen(d: Data, q: float, family: str) -> tuple[F, F]:
    if family == "norm":
        lenp = d.pe - d.ps
        scale = np.where(lenp < MIN_SCALE, MIN_SCALE, lenp)
        lo, hi = d.ps - q * scale, d.pe + q * scale
    else:
        lo, hi = d.ps - q, d.pe + q
    return np.maximum(lo, 0.0), np.minimum(hi, d.T)


def np_superlevel(dense: F, T: F, q: float, clip: float) -> tuple[Any, F, F]:
    """Runs of clips with f >= -q on a dense (m, clips) matrix."""
    i = np.arange(dense.shape[1])
    sel = (dense >= -q) & (i * clip < T[:, None])
    prev = np.zeros_like(sel)
    prev[:, 1:] = sel[:, :-1]
    nxt = np.zeros_like(sel)
    nxt[:, :-1] = sel[:, 1:]
    r0, c0 = np.nonzero(sel & ~prev)
    r1, c1 = np.nonzero(sel & ~nxt)
    return r0, c0 * clip, np.minimum((c1 + 1) * clip, T[r1])


def np_evaluate(d: Data, lo: F, hi: F) -> tuple[float, float]:
    covered = (lo <= d.ts + CONTAINMENT_ATOL) & (hi >= d.te - CONTAINMENT_ATOL)
    return float(covered.mean()), float((hi - lo).mean())


def _iou(a0: F, a1: F, b0: F, b1: F) -> F:
    inter = np.maximum(np.minimum(a1, b1) - np.maximum(a0, b0), 0.0)
    union = (a1 - a0) + (b1 - b0) - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / union, 0.0)


def np_evaluate_full(d: Data, lo: F, hi: F) -> dict[str, float]:
    """Coverage, mean length, length / T, region IoU and the grounder's point-IoU for
    one interval per row (truth = envelope; COVER's point-IoU takes the best truth
    window instead, so that one is not compared on multi-window truth)."""
    covered = (lo <= d.ts + CONTAINMENT_ATOL) & (hi >= d.te - CONTAINMENT_ATOL)
    length = hi - lo
    return {
        "coverage": float(covered.mean()),
        "mean_length_s": float(length.mean()),
        "mean_length_frac": float((length / d.T).mean()),
        "mean_iou": float(_iou(lo, hi, d.ts, d.te).mean()),
        "point_iou": float(np.nan_to_num(_iou(d.ps, d.pe, d.ts, d.te)).mean()),
    }




# ---- table d): calibrate + certify from arrays, NORM, one group ------------------------
# The numpy contenders of table d), from the slowest correct script to the floor. Each takes
# the calibration arrays (ps, pe, ts, te) and the test arrays (ps, pe, T) and returns the
# widened, clipped test intervals; the float ceil gives COVER's exact rank at alpha = 0.1
# (the agreement scan shows where it does not: alpha = 0.7).


def np_shortest(cal: Data, test: Data, alpha: float) -> tuple[F, F]:
    """The shortest correct script: NORM scores, np.partition for the k-th smallest,
    widen and clip."""
    l = np.maximum(cal.pe - cal.ps, MIN_SCALE)  # noqa: E741
    s = np.maximum((cal.ps - cal.ts) / l, (cal.te - cal.pe) / l)
    k = math.ceil((s.size + 1) * (1 - alpha))
    q = np.partition(s, k - 1)[k - 1]
    w = q * np.maximum(test.pe - test.ps, MIN_SCALE)
    return np.maximum(test.ps - w, 0.0), np.minimum(test.pe + w, test.T)


def np_sampled_select(s: F, k: int) -> float:
    """The k-th smallest (1-based) by a sampled bracket (Floyd-Rivest): a sorted strided
    sample of about 4096 values brackets rank k within 4 binomial standard deviations;
    the values below the bracket are counted and the k-th is selected among those
    inside it. A bracket that misses (adversarial order) falls back to np.partition."""
    n = s.size
    sample = np.sort(s[:: max(n // 4096, 1)])
    m, p = sample.size, (k - 0.5) / n
    d = 4 * math.sqrt(p * (1 - p) * m) + 2
    lo, hi = sample[max(math.floor(p * m - d), 0)], sample[min(math.ceil(p * m + d), m - 1)]
    r = k - np.count_nonzero(s < lo)
    inside = s[(s >= lo) & (s <= hi)]
    if 1 <= r <= inside.size:
        return float(np.partition(inside, r - 1)[r - 1])
    return float(np.partition(s, k - 1)[k - 1])


def np_tuned(cal: Data, test: Data, alpha: float, sampled: bool = False) -> tuple[F, F]:
    """The same script in place: every temporary reused, one division (l > 0, so
    max(a/l, b/l) == max(a, b)/l), the scores partitioned in place (they are its own);
    ``sampled``: the k-th score by :func:`np_sampled_select` instead."""
    l = np.subtract(cal.pe, cal.ps)  # noqa: E741
    np.maximum(l, MIN_SCALE, out=l)
    s = np.subtract(cal.ps, cal.ts)
    b = np.subtract(cal.te, cal.pe)
    np.maximum(s, b, out=s)
    s /= l
    k = math.ceil((s.size + 1) * (1 - alpha))
    if sampled:
        q = np_sampled_select(s, k)
    else:
        s.partition(k - 1)
        q = s[k - 1]
    same = s.size == test.ps.size  # the calibration buffers serve as many test rows
    w = np.subtract(test.pe, test.ps, out=l if same else None)
    np.maximum(w, MIN_SCALE, out=w)
    w *= q
    lo = np.subtract(test.ps, w, out=b if same else None)
    np.maximum(lo, 0.0, out=lo)
    hi = np.add(test.pe, w, out=w)
    np.minimum(hi, test.T, out=hi)
    return lo, hi


def np_copy_floor(cal: Data, test: Data) -> list[F]:
    """The floor: a copy of the 7 input arrays (each read once, written once)."""
    return [x.copy() for x in (cal.ps, cal.pe, cal.ts, cal.te, test.ps, test.pe, test.T)]
