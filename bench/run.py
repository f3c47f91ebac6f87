"""COVER vs numpy / crepes / MAPIE: calibration, certification and evaluation.

Run from the repository root::

    .venv/bin/python bench/run.py                      # default: ~1-2 minutes
    .venv/bin/python bench/run.py --sizes 1000 10000 --repeats 3 --out /tmp/r.md

Every implementation runs on the SAME arrays in the SAME process; each cell is the
median of ``--repeats`` timings (``time.perf_counter``; fast calls are looped so one
timing lasts at least ~20 ms). Ratios are ``time / time(COVER)``: above 1 means
slower than COVER. See bench/README.md for what each row measures.

crepes and MAPIE are optional (``pip install -e '.[bench]'``); missing peers are
reported as "not installed". Nothing here is imported by the package or the tests.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import math
import os
import platform
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

import cover
from cover.intervals import CONTAINMENT_ATOL
from cover.io.datasets import find_data_dir
from cover.ragged import Ragged
from cover.scores import DEFAULT_MIN_SCALE as MIN_SCALE

ALPHA = 0.1
CLIP = 2.0
N_CLIPS = 75  # 150 s videos, 2 s clips (QVHighlights)
N_CAL_CERT = 1000  # calibration rows behind the thresholds used in certification
QD_DETR = "qd_detr/video_checkpoint_best_hl_val_preds.jsonl"
GT_VAL = "annotations/highlight_val_release.jsonl"

F = NDArray[np.float64]


# ---------------------------------------------------------------------------------------
# optional peers
# ---------------------------------------------------------------------------------------
def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


try:
    from crepes import ConformalRegressor
except ImportError:  # pragma: no cover - optional
    ConformalRegressor = None

try:
    from mapie.regression import SplitConformalRegressor
    from sklearn.base import BaseEstimator, RegressorMixin

    class IdentityRegressor(RegressorMixin, BaseEstimator):
        """MAPIE only conformalizes an *estimator*; this one returns its single input
        column, so ``X`` carries the precomputed prediction and ``y`` the target."""

        def fit(self, X: Any = None, y: Any = None) -> IdentityRegressor:
            self.n_features_in_ = 1  # what MAPIE's "is it fitted?" check looks for
            return self

        def predict(self, X: Any) -> F:
            return np.asarray(X, dtype=np.float64)[:, 0]

        def __sklearn_is_fitted__(self) -> bool:
            return True

except ImportError:  # pragma: no cover - optional
    SplitConformalRegressor = None


def crepes_fit(residuals: F, sigmas: F | None = None) -> Any:
    return ConformalRegressor().fit(residuals, sigmas=sigmas)


def crepes_threshold(residuals: F, alpha: float) -> float:
    """crepes keeps |residuals|; its threshold is the half-width of an interval at 0."""
    cr = ConformalRegressor().fit(residuals)
    return float(cr.predict_int(np.zeros(1), confidence=1 - alpha)[0, 1])


def mapie_fit(y: F, alpha: float) -> Any:
    """MAPIE split conformal (prefit) on predictions 0, i.e. residuals = |y|."""
    m = SplitConformalRegressor(IdentityRegressor().fit(), confidence_level=1 - alpha,
                                prefit=True)
    return m.conformalize(np.zeros((y.size, 1)), y)


def mapie_threshold(y: F, alpha: float) -> float:
    m = mapie_fit(y, alpha)
    return float(m.predict_interval(np.zeros((1, 1)))[1][0, 1, 0])


# ---------------------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------------------
def measure(fn: Callable[[], Any], repeats: int, min_time: float = 0.05) -> tuple[float, Any]:
    """Median seconds per call over ``repeats`` timings, and the result of one call.

    The first call is a warm-up (and gives the result); calls faster than ``min_time``
    are looped inside each timing."""
    t0 = time.perf_counter()
    out = fn()
    first = time.perf_counter() - t0
    number = max(1, min(10_000, int(min_time / max(first, 1e-9))))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return statistics.median(times), out


def short(n: int) -> str:
    """1000 -> "1e3", 1500 -> "1500"."""
    e = int(math.log10(n)) if n > 0 else 0
    return f"1e{e}" if n == 10**e else str(n)


def fmt_time(t: float) -> str:
    if t < 1e-3:
        return f"{t * 1e6:.1f} µs"
    if t < 1.0:
        return f"{t * 1e3:.2f} ms"
    return f"{t:.2f} s"


# ---------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------
@dataclass
class Data:
    """One workload: a labelled table and the same data as plain arrays."""

    label: str
    table: cover.GroundingTable
    ps: F
    pe: F
    ts: F  # truth envelope
    te: F
    T: F
    dense: F | None = None  # relevance as an (m, clips) matrix, -inf padded
    notes: list[str] = field(default_factory=list)


def synthetic(n: int, rng: np.random.Generator, clips: int = 0) -> Data:
    """QVHighlights-like rows: 150 s videos (10 % shorter), one truth window of
    2-40 s, a top-1 prediction off by N(0, 4 s) at each end, and (if ``clips``) a
    per-clip relevance signal ``N(0, 1) + 2 * [clip centre inside the truth]``."""
    T = np.where(rng.random(n) < 0.1, np.round(rng.uniform(120, 150, n)), 150.0)
    tl = rng.uniform(2, 40, n)
    ts = rng.uniform(0, T - tl)
    te = ts + tl
    a = np.clip(ts + rng.normal(0, 4, n), 0, T)
    b = np.clip(te + rng.normal(0, 4, n), 0, T)
    ps, pe = np.minimum(a, b), np.maximum(a, b)
    rel = None
    dense = None
    if clips:
        centre = (np.arange(clips) + 0.5) * CLIP
        inside = (centre >= ts[:, None]) & (centre <= te[:, None])
        dense = rng.normal(0, 1, (n, clips)) + 2.0 * inside
        rel = Ragged(dense.reshape(-1).copy(), np.arange(n + 1, dtype=np.int64) * clips)
    table = cover.GroundingTable.from_arrays(
        qid=np.arange(n), duration=T, pred_start=ps, pred_end=pe, relevance=rel,
        truth=(ts, te), clip=CLIP)
    return Data(short(n), table, ps, pe, ts, te, T, dense)


def densify(rel: Ragged) -> F:
    m = len(rel)
    width = int(rel.lengths.max()) if m else 0
    out = np.full((m, width), -np.inf)
    r = np.repeat(np.arange(m), rel.lengths)
    i = np.arange(rel.values.size) - rel.offsets[r]
    out[r, i] = rel.values
    return out


def from_table(label: str, table: cover.GroundingTable) -> Data:
    ts, te = table.truth_envelope()
    dense = densify(table.relevance) if table.has_relevance.all() else None
    return Data(label, table, table.pred_start, table.pred_end, ts, te, table.duration, dense)


def load_real(data_dir: Path) -> tuple[Data, Data] | None:
    """QD-DETR (video checkpoint) on QVHighlights val, split 40/60 by video, seed 42."""
    p, g = data_dir / QD_DETR, data_dir / GT_VAL
    if not (p.is_file() and g.is_file()):
        return None
    preds = cover.read_predictions(p)
    gt = cover.read_ground_truth(g)
    table, _problems = cover.attach_truth(preds.table, gt.table)
    split = cover.split_by_unit(table.units, cal_frac=0.4, seed=42)
    cal = table.take(split.calibration)
    test = table.take(split.test)
    return from_table(f"QVH n={len(cal)}", cal), from_table(f"QVH m={len(test)}", test)


# ---------------------------------------------------------------------------------------
# numpy baselines (plain formulas, no validation, no refusal handling)
# ---------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------
@dataclass
class Cell:
    seconds: float | None
    ratio: float | None = None
    agrees: str = ""  # "" = not checked, "yes", or a short reason


@dataclass
class Row:
    impl: str
    ref: str | None  # name of the COVER row the ratio is relative to
    cells: dict[str, Cell] = field(default_factory=dict)


class Stage:
    def __init__(self, title: str, note: str) -> None:
        self.title, self.note = title, note
        self.rows: dict[str, Row] = {}
        self.columns: list[str] = []

    def add(self, col: str, impl: str, ref: str | None, seconds: float | None,
            agrees: str = "") -> None:
        if col not in self.columns:
            self.columns.append(col)
        row = self.rows.setdefault(impl, Row(impl, ref))
        row.cells[col] = Cell(seconds, None, agrees)

    def finish(self) -> None:
        for row in self.rows.values():
            for col, cell in row.cells.items():
                if row.ref is None or cell.seconds is None:
                    continue
                ref = self.rows[row.ref].cells.get(col)
                if ref is not None and ref.seconds:
                    cell.ratio = cell.seconds / ref.seconds

    def markdown(self) -> str:
        head = ["implementation", *self.columns, "agrees with COVER"]
        lines = [f"### {self.title}", "", self.note, "",
                 "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for row in self.rows.values():
            cells = []
            for col in self.columns:
                c = row.cells.get(col)
                if c is None:
                    cells.append("—")
                elif c.seconds is None:
                    cells.append(c.agrees or "n/a")
                elif row.ref is None or row.ref == row.impl or c.ratio is None:
                    cells.append(f"**{fmt_time(c.seconds)}**" if row.ref == row.impl
                                 else fmt_time(c.seconds))
                else:
                    cells.append(f"{fmt_time(c.seconds)} ({c.ratio:.2f}×)")
            checks = [(col, row.cells[col].agrees) for col in self.columns
                      if col in row.cells and row.cells[col].seconds is not None
                      and row.cells[col].agrees]
            if row.ref == row.impl or not checks:
                verdict = "(reference)" if row.ref == row.impl else "—"
            elif all(a == "yes" for _, a in checks):
                verdict = "yes"
            else:
                verdict = "; ".join(f"{col}: {a}" for col, a in checks if a != "yes")
            lines.append(f"| {row.impl} | " + " | ".join(cells) + f" | {verdict} |")
        return "\n".join(lines)


def same(a: float, b: float) -> str:
    return "yes" if a == b else f"no ({a:.6g} vs {b:.6g})"


def same_arrays(pairs: list[tuple[Any, Any]]) -> str:
    for a, b in pairs:
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return f"no (shape {a.shape} vs {b.shape})"
        if not np.array_equal(a, b):
            diff = float(np.max(np.abs(a.astype(float) - b.astype(float))))
            if diff <= 1e-9:
                return f"yes (max abs diff {diff:.1e} s)"
            return f"no (max abs diff {diff:.3g})"
    return "yes"


def for_peers(scores: F) -> F:
    """crepes and MAPIE take |residual|; COVER's scores are signed (negative when the
    prediction strictly contains the truth, -inf for refusals). ``max(S, 0)`` is
    monotone, so its k-th order statistic is ``max(q, 0)``: the peers see exactly
    COVER's threshold whenever ``q >= 0`` (always, in practice)."""
    return np.maximum(scores, 0.0)


# ---------------------------------------------------------------------------------------
# stages
# ---------------------------------------------------------------------------------------
def bench_calibration(st: Stage, d: Data, repeats: int) -> None:
    col = d.label
    scores = cover.compute_scores(d.table, "norm").values
    t, th = measure(lambda: cover.split_conformal(scores, alpha=ALPHA), repeats)
    q = th.value
    st.add(col, "COVER split_conformal", "COVER split_conformal", t)
    t, cal = measure(lambda: cover.Calibrator(score="norm", alpha=ALPHA).fit(d.table), repeats)
    st.add(col, "COVER Calibrator(score='norm').fit (scores + threshold)",
           "COVER Calibrator(score='norm').fit (scores + threshold)", t)
    assert cal.threshold_ == q
    t, v = measure(lambda: np_norm_score_partition(d, ALPHA), repeats)
    st.add(col, "numpy NORM scores + np.partition", "COVER Calibrator(score='norm').fit "
           "(scores + threshold)", t, same(v, q))
    for name, fn in (("numpy np.sort + float ceil", np_sort_threshold),
                     ("numpy np.quantile(ceil((n+1)(1-a))/n, method='higher')",
                      np_quantile_threshold),
                     ("numpy np.quantile(ceil((n+1)(1-a))/n, method='inverted_cdf')",
                      np_quantile_icdf_threshold)):
        t, v = measure(lambda fn=fn: fn(scores, ALPHA), repeats)
        st.add(col, name, "COVER split_conformal", t, same(v, q))
    safe = q >= 0
    pscores = for_peers(scores)
    peers: list[tuple[str, Any, Callable[[F, float], float]]] = [
        ("crepes ConformalRegressor().fit + predict_int", ConformalRegressor, crepes_threshold),
        ("MAPIE SplitConformalRegressor(identity, prefit) conformalize + predict_interval",
         SplitConformalRegressor, mapie_threshold),
    ]
    for name, avail, fn in peers:
        if avail is None:
            st.add(col, name, "COVER split_conformal", None, "not installed")
            continue
        t, v = measure(lambda fn=fn: fn(pscores, ALPHA), repeats)
        st.add(col, name, "COVER split_conformal", t, same(v, q) if safe else "n/a (q < 0)")


def cert_thresholds(cal: Data) -> dict[str, tuple[float, F]]:
    out = {}
    for fam in ("norm", "sec", "sls"):
        if fam == "sls" and cal.dense is None:
            continue
        s = cover.compute_scores(cal.table, fam).values
        out[fam] = (cover.split_conformal(s, alpha=ALPHA).value, s)
    return out


def bench_certification(st: Stage, d: Data, th: dict[str, tuple[float, F]], repeats: int,
                        max_sls: int) -> dict[str, cover.Regions]:
    col = d.label
    m = len(d.table)
    regions: dict[str, cover.Regions] = {}
    for fam in ("norm", "sec"):
        q, cal_scores = th[fam]
        ref = f"COVER build_regions('{fam}')"
        t, reg = measure(lambda fam=fam, q=q: cover.build_regions(d.table, fam, q,
                                                                  alpha=ALPHA), repeats)
        regions[fam] = reg
        st.add(col, ref, ref, t)
        iv = reg.intervals
        t, (lo, hi) = measure(lambda fam=fam, q=q: np_widen(d, q, fam), repeats)
        st.add(col, f"numpy widen + clip ({fam})", ref, t,
               same_arrays([(lo, iv.starts), (hi, iv.ends)]))
        safe = q >= 0
        peer_scores = for_peers(cal_scores)
        if fam == "norm":
            name = "crepes normalized predict_int (sigmas = l; y_min=0, clip to T)"
            if ConformalRegressor is None:
                st.add(col, name, ref, None, "not installed")
            else:
                cr = crepes_fit(peer_scores, sigmas=np.ones_like(peer_scores))

                def run_crepes(cr: Any = cr) -> tuple[F, F]:
                    lenp = d.pe - d.ps
                    scale = np.where(lenp < MIN_SCALE, MIN_SCALE, lenp)
                    out = cr.predict_int(np.concatenate([d.ps, d.pe]),
                                         sigmas=np.concatenate([scale, scale]),
                                         confidence=1 - ALPHA, y_min=0.0)
                    return out[:m, 0], np.minimum(out[m:, 1], d.T)

                t, (lo, hi) = measure(run_crepes, repeats)
                st.add(col, name, ref, t, same_arrays([(lo, iv.starts), (hi, iv.ends)])
                       if safe else "n/a (q < 0)")
        else:
            for name, avail in (("crepes predict_int (± q s; y_min=0, clip to T)",
                                 ConformalRegressor),
                                ("MAPIE predict_interval (identity, ± q s; clip to [0, T])",
                                 SplitConformalRegressor)):
                if avail is None:
                    st.add(col, name, ref, None, "not installed")
                    continue
                if avail is ConformalRegressor:
                    cr = crepes_fit(peer_scores)

                    def run_peer(cr: Any = cr) -> tuple[F, F]:
                        out = cr.predict_int(np.concatenate([d.ps, d.pe]),
                                             confidence=1 - ALPHA, y_min=0.0)
                        return out[:m, 0], np.minimum(out[m:, 1], d.T)
                else:
                    mp = mapie_fit(peer_scores, ALPHA)

                    def run_peer(mp: Any = mp) -> tuple[F, F]:
                        _, out = mp.predict_interval(np.concatenate([d.ps, d.pe])[:, None])
                        return np.maximum(out[:m, 0, 0], 0.0), np.minimum(out[m:, 1, 0], d.T)

                t, (lo, hi) = measure(run_peer, repeats)
                st.add(col, name, ref, t, same_arrays([(lo, iv.starts), (hi, iv.ends)])
                       if safe else "n/a (q < 0)")
    ref = "COVER build_regions('sls')"
    if "sls" in th and d.dense is not None and m <= max_sls:
        q = th["sls"][0]
        t, reg = measure(lambda: cover.build_regions(d.table, "sls", q, alpha=ALPHA), repeats)
        regions["sls"] = reg
        st.add(col, ref, ref, t)
        dense = d.dense
        t, (r, s, e) = measure(lambda: np_superlevel(dense, d.T, q, d.table.clip), repeats)
        iv = reg.intervals
        st.add(col, "numpy dense (m × clips) runs (sls)", ref, t,
               same_arrays([(r, iv.rows), (s, iv.starts), (e, iv.ends)]))
    else:
        why = f"skipped (m > {short(max_sls)})" if m > max_sls else "n/a"
        st.add(col, ref, ref, None, why)
        st.add(col, "numpy dense (m × clips) runs (sls)", ref, None, why)
    return regions


def bench_evaluation(st: Stage, d: Data, regions: dict[str, cover.Regions],
                     th: dict[str, tuple[float, F]], repeats: int) -> None:
    col = d.label
    ref = "COVER evaluate (NORM regions)"
    reg = regions["norm"]
    t, ev = measure(lambda: cover.evaluate(reg, d.table), repeats)
    st.add(col, ref, ref, t)
    lo, hi = np_widen(d, th["norm"][0], "norm")
    t, (cov, length) = measure(lambda: np_evaluate(d, lo, hi), repeats)
    ok = cov == ev.marginal.coverage and math.isclose(length, ev.marginal.mean_length_s,
                                                      rel_tol=1e-12)
    st.add(col, "numpy coverage + mean length (NORM)", ref, t,
           "yes" if ok else f"no (cov {cov:.4f} vs {ev.marginal.coverage:.4f})")
    t, full = measure(lambda: np_evaluate_full(d, lo, hi), repeats)
    want = {k: getattr(ev.marginal, k) for k in
            ("coverage", "mean_length_s", "mean_length_frac", "mean_iou")}
    if d.table.truth is not None and (d.table.truth.n_components == 1).all():
        want["point_iou"] = ev.point_iou
    bad = [k for k, v in want.items() if not math.isclose(full[k], v, rel_tol=1e-9)]
    st.add(col, "numpy + length/T, IoU, point-IoU (NORM)", ref, t,
           "yes" if not bad else "no (" + ", ".join(
               f"{k} {full[k]:.6g} vs {want[k]:.6g}" for k in bad) + ")")
    name = "COVER evaluate (SLS regions, multi-interval)"
    if "sls" in regions:
        reg_sls = regions["sls"]
        t, _ = measure(lambda: cover.evaluate(reg_sls, d.table), repeats)
        st.add(col, name, ref, t)
    else:
        st.add(col, name, ref, None, "skipped")


# ---------------------------------------------------------------------------------------
# agreement of thresholds with the exact k-th order statistic
# ---------------------------------------------------------------------------------------
def rank_of(sorted_scores: F, v: float) -> int | float:
    """1-based rank of ``v`` among distinct sorted scores (inf when v is inf)."""
    if not math.isfinite(v):
        return math.inf
    i = int(np.searchsorted(sorted_scores, v))
    return i + 1 if i < sorted_scores.size and sorted_scores[i] == v else math.nan


def peer_thresholds(s: F, alpha: float) -> dict[str, float | str]:
    out: dict[str, float | str] = {
        "numpy float ceil": np_sort_threshold(s, alpha),
        "np.quantile higher": np_quantile_threshold(s, alpha),
        "np.quantile inverted_cdf": np_quantile_icdf_threshold(s, alpha),
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out["crepes"] = crepes_threshold(s, alpha) if ConformalRegressor else "not installed"
        if SplitConformalRegressor is None:
            out["MAPIE"] = "not installed"
        else:
            try:
                out["MAPIE"] = mapie_threshold(s, alpha)
            except ValueError:
                out["MAPIE"] = "raises"
    return out


def agreement(ns: list[int], alphas: list[float], rng: np.random.Generator) -> str:
    peers = ["numpy float ceil", "np.quantile higher", "np.quantile inverted_cdf", "crepes",
             "MAPIE"]
    head = ["n", "alpha", "exact k (COVER)", *peers]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for n in ns:
        s = rng.exponential(1.0, n)  # distinct, positive: |S| = S for crepes/MAPIE
        ss = np.sort(s)
        for a in alphas:
            th = cover.split_conformal(s, alpha=a, warn=False)
            cells = [str(n), str(a), str(th.k) if th.k <= n else f"{th.k} > n (inf)"]
            for p, v in peer_thresholds(s, a).items():
                del p
                if isinstance(v, str):
                    if v == "raises":
                        v = "**raises ✗**" if th.finite else "raises (COVER: inf)"
                    cells.append(v)
                    continue
                r = rank_of(ss, v)
                rk = "inf" if r == math.inf else str(r)
                if v == th.value:
                    cells.append(f"{rk} ✓")
                else:
                    diff = "" if not (isinstance(r, int) and th.k <= n) else f" ({r - th.k:+d})"
                    cells.append(f"**{rk}{diff} ✗**")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def scan(n_max: int, alphas: list[float]) -> str:
    """Every n in 1..n_max: the n where a peer's threshold is not COVER's."""
    lines = ["| alpha | peer | n with another threshold | n where it raises although "
             "k <= n | n where it raises and k > n | first n that differ |",
             "|---|---|---|---|---|---|"]
    found: dict[tuple[float, str], tuple[list[int], list[int], list[int]]] = {}
    for n in range(1, n_max + 1):
        s = np.arange(1.0, n + 1.0)
        for a in alphas:
            th = cover.split_conformal(s, alpha=a, warn=False)
            for p, v in peer_thresholds(s, a).items():
                wrong, raised, raised_inf = found.setdefault((a, p), ([], [], []))
                if v == "raises":
                    (raised if th.finite else raised_inf).append(n)
                elif not isinstance(v, str) and v != th.value:
                    wrong.append(n)
    for (a, p), (wrong, raised, raised_inf) in found.items():
        first = ", ".join(map(str, sorted(wrong + raised)[:6]))
        lines.append(f"| {a} | {p} | {len(wrong)} | {len(raised)} | {len(raised_inf)} "
                     f"| {first or '—'} |")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=float, nargs="+", default=[1e3, 1e4, 1e5, 1e6],
                    help="calibration sizes n and test sizes m (default 1e3 1e4 1e5 1e6)")
    ap.add_argument("--repeats", type=int, default=7, help="timings per cell (median)")
    ap.add_argument("--max-sls-rows", type=float, default=1e5,
                    help="largest m for SLS certification (75 clips per row; default 1e5)")
    ap.add_argument("--scan-max", type=int, default=1000,
                    help="agreement scan over every n in 1..N (0 to skip; default 1000)")
    ap.add_argument("--scan-alphas", type=float, nargs="+", default=[0.05, 0.1, 0.2, 0.7],
                    help="alphas of the scan (0.7 is the README's float example)")
    ap.add_argument("--data-dir", type=Path, default=None,
                    help="folder holding qvhighlights/... (default: ../shared/data); the "
                         "real-data column is skipped when absent")
    ap.add_argument("--no-real", action="store_true", help="skip the real-data column")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("results.md"))
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes]
    max_sls = int(args.max_sls_rows)
    rng = np.random.default_rng(args.seed)
    t_start = time.perf_counter()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t_start:6.1f}s] {msg}", file=sys.stderr, flush=True)

    calib = Stage(
        "a) Calibration: threshold from n NORM scores, alpha = 0.1",
        "Ratio = time / COVER `split_conformal` (threshold rows) or / COVER "
        "`Calibrator.fit` (rows that also compute the scores from the table). crepes and "
        "MAPIE are handed the same scores as residuals, clamped at 0 outside the timing "
        "(they use |residual|; `max(S, 0)` keeps the k-th order statistic when q >= 0); "
        "their threshold is read off a one-row interval at prediction 0.")
    cert = Stage(
        "b) Certification: regions for m test rows at a fixed threshold",
        f"Thresholds from {N_CAL_CERT} synthetic calibration rows (real column: from the "
        "QVHighlights calibration split). Ratio = time / COVER `build_regions` of the same "
        "family. crepes/MAPIE are fitted once outside the timing; the timed call is their "
        "interval prediction (+ the per-row clip to [0, T] they cannot do themselves). "
        "The dense numpy SLS baseline gets the relevance as an (m, clips) matrix, built "
        "outside the timing.")
    evals = Stage(
        "c) Evaluation: coverage and length of the NORM regions",
        "Ratio = time / COVER `evaluate` on the same regions. COVER computes the whole "
        "metric set for unions of intervals (coverage, miss rate, length, length/T, IoU, "
        "components, refusal split, the grounder's point-IoU). The first numpy row is "
        "coverage + mean length only; the second adds length/T, IoU and point-IoU, all for "
        "one interval per row.")

    for n in sizes:
        log(f"calibration n={n}")
        bench_calibration(calib, synthetic(n, rng), args.repeats)
    cal_cert = synthetic(N_CAL_CERT, rng, clips=N_CLIPS)
    th = cert_thresholds(cal_cert)
    for m in sizes:
        log(f"certification + evaluation m={m}")
        d = synthetic(m, rng, clips=N_CLIPS if m <= max_sls else 0)
        regions = bench_certification(cert, d, th, args.repeats, max_sls)
        bench_evaluation(evals, d, regions, th, args.repeats)
        del d, regions

    real_note = "real data: not used (--no-real)"
    if not args.no_real:
        try:
            real = load_real(find_data_dir(args.data_dir) / "qvhighlights")
        except cover.InputError:
            real = None
        if real is None:
            real_note = f"real data: not found under {args.data_dir}; column skipped"
            log(real_note)
        else:
            cal_r, test_r = real
            log(f"real data: {cal_r.label}, {test_r.label}")
            real_note = (f"real data: QD-DETR video checkpoint predictions on QVHighlights val "
                         f"({QD_DETR}), truth from {GT_VAL}, split by video 40/60 (seed 42): "
                         f"{len(cal_r.table)} calibration rows, {len(test_r.table)} test rows")
            bench_calibration(calib, cal_r, args.repeats)
            th_r = cert_thresholds(cal_r)
            regions = bench_certification(cert, test_r, th_r, args.repeats, max_sls)
            bench_evaluation(evals, test_r, regions, th_r, args.repeats)

    log("agreement")
    agree_ns, agree_alphas = [9, 19, 29, 99, 999], [0.1, 0.05]
    agree = agreement(agree_ns, agree_alphas, rng)
    scan_md = ""
    if args.scan_max > 0:
        log(f"agreement scan n=1..{args.scan_max}")
        scan_md = scan(args.scan_max, args.scan_alphas)
    for st in (calib, cert, evals):
        st.finish()

    versions = ", ".join(f"{d} {_version(d) or 'not installed'}" for d in
                         ("cover-grounding", "numpy", "crepes", "mapie", "scikit-learn"))
    parts = [
        "## COVER benchmark results",
        "",
        f"- generated {_dt.datetime.now().isoformat(timespec='seconds')} by "
        f"`{' '.join(['bench/run.py', *(sys.argv[1:] if argv is None else argv)])}`",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}, {platform.system()}",
        f"- versions: {versions}",
        f"- median of {args.repeats} timings per cell (`time.perf_counter`); synthetic "
        "columns are labelled by n (or m), BLAS/thread settings left as found",
        f"- {real_note}",
        "",
        calib.markdown(), "", cert.markdown(), "", evals.markdown(), "",
        "### Agreement with COVER's exact k-th order statistic",
        "",
        "Each cell is the rank (1-based, among the n scores) of the threshold that "
        "implementation returns; COVER returns rank `k = ceil((n + 1)(1 - alpha))` in "
        "exact rational arithmetic. Scores are distinct positive draws (so the absolute "
        "residuals crepes/MAPIE use change nothing). `inf` = whole-video region; "
        "raises = the library refuses with an error (a disagreement when COVER's k <= n).",
        "",
        agree,
    ]
    if scan_md:
        parts += ["", f"Scan over every n = 1..{args.scan_max} (scores 1..n):", "", scan_md]
    md = "\n".join(parts) + "\n"
    print(md)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(md, encoding="utf-8")
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
