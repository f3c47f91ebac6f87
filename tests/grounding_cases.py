"""Labelled grounding tables with the awkward rows on purpose, and per-row oracles.

The generator :func:`cases` builds small tables: refusals, predictions that are
zero-length / shorter than ``min_scale`` / hanging over the video, truth that is a
point / starts at 0 / ends at T / sits on the clip grid (also a hair inside or
outside a clip boundary), multi-window truth, relevance signals shorter or longer
than the video, and tied relevance values. :func:`thresholds` draws per-row ``lam``:
the row's own score (the boundary must be covered), a hair below it (must not be),
random, +inf, -inf and negative. Shared by ``test_scores.py`` and ``test_regions.py``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from hypothesis import assume, settings
from hypothesis import strategies as st

from cover.data.table import GroundingTable
from cover.intervals import CONTAINMENT_ATOL, Intervals
from cover.ragged import Ragged
from cover.regions import build_regions
from cover.scores import TARGETS, compute_scores, truth_target

SETTINGS = settings(max_examples=200, deadline=None, derandomize=True, database=None)
ATOL = CONTAINMENT_ATOL
#: Random thresholds closer than this (in seconds, |S - lam| * l) to a row's own
#: score are skipped for the interval families: regions there are float arithmetic.
MARGIN_S = 1e-5
CLIPS = (2.0, 1.0, 0.5, 1.5, 0.3)
# Offsets of truth endpoints from the clip grid: inside / outside the tolerance.
GRID_OFFSETS = (0.0, 0.5e-6, -0.5e-6, 2e-6, -2e-6, 1e-3, -1e-3)


def unchecked_table(**kw: object) -> GroundingTable:
    """A table as ``GroundingTable.from_arrays`` builds it but without its validation:
    predictions hanging over or wholly outside the video, bad durations, ... reach the
    kernels (scores, regions) untouched, which must still handle them."""
    qid = np.asarray(kw["qid"]).reshape(-1)
    n = qid.size

    def col(v: object) -> np.ndarray:
        if v is None:
            return np.full(n, np.nan)
        return np.broadcast_to(np.asarray(v, dtype=np.float64).reshape(-1), (n,)).copy()

    truth = kw.get("truth")
    if truth is not None and not isinstance(truth, Intervals):
        truth = Intervals.single(col(truth[0]), col(truth[1]))  # type: ignore[index]
    rel = kw.get("relevance")
    if rel is None:
        rel = Ragged(np.empty(0), np.zeros(n + 1, dtype=np.int64))
    elif not isinstance(rel, Ragged):
        rel = Ragged.from_lists(rel)  # type: ignore[arg-type]
    return GroundingTable(qid=qid, vid=qid, duration=col(kw["duration"]),
                          pred_start=col(kw.get("pred_start")), pred_end=col(kw.get("pred_end")),
                          relevance=rel, clip=float(kw.get("clip", 2.0)),  # type: ignore[arg-type]
                          truth=truth)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Case:
    table: GroundingTable
    family: str
    target: str
    min_scale: float

    @property
    def n(self) -> int:
        return len(self.table)


def clips_in_video(duration: float, clip: float) -> int:
    """Number of clips that start strictly before T (by the same products i*c)."""
    k = max(math.ceil(duration / clip) + 2, 1)
    return int(np.sum(np.arange(k) * clip < duration))


# ---- the generator -----------------------------------------------------------------------
# Hypothesis chooses the *kind* of every row, window and threshold (these are what
# shrinking should minimise); the continuous values come from a numpy generator seeded
# by Hypothesis, which keeps drawing cheap.
WINDOW_KINDS = ("random", "point", "end", "end_point", "start", "grid", "grid_point", "tiny",
                "whole")
# Windows shorter than the slack: near-points that still have two distinct endpoints.
TINY_LENGTHS = (0.5e-6, 1.8e-6, 2e-6, 2.5e-6, 3e-6)
PRED_KINDS = ("normal", "normal", "zero", "short", "overhang", "whole", "nan", "nan_end")

# The strategies drawn from, built once: a strategy made inside a draw is built and
# validated again at every example (most of a small example's cost).
_N_WINDOWS = st.sampled_from((1, 1, 2, 3))
_WINDOW_KIND = st.sampled_from(WINDOW_KINDS)
_GRID_OFFSET = st.sampled_from(GRID_OFFSETS)
_TINY_LENGTH = st.sampled_from(TINY_LENGTHS)
_CLIP = st.sampled_from(CLIPS)
_MIN_SCALE = st.sampled_from((1.0, 0.5, 3.0))
_TARGET = st.sampled_from(TARGETS)
_SEED = st.integers(0, 2**32 - 1)
_T_KIND = st.sampled_from(("grid", "float", "short"))
_PRED_KIND = st.sampled_from(PRED_KINDS)
_SIGNAL_LENGTH = st.sampled_from(("full", "full", "shorter", "empty", "longer"))
_SIGNAL_MODE = st.sampled_from(("ties", "normal", "constant"))
_LAM_MODE = st.sampled_from(("own", "own", "below", "above", "random", "negative", "inf",
                             "ninf", "clip_value"))
_STEP = st.sampled_from((2e-5, 1e-4, 1e-2))
_NEGATIVE = st.floats(0.0, 5.0)
_FREE = st.floats(-5.0, 20.0)


@st.composite
def truth_windows(draw, rng: np.random.Generator, duration: float,
                  clip: float) -> list[list[float]]:
    n_windows = draw(_N_WINDOWS)
    rows = []
    for _ in range(n_windows):
        kind = draw(_WINDOW_KIND)
        u, v = rng.uniform(size=2)
        if kind == "random":
            a, b = u * duration, v * duration
        elif kind == "point":
            a = b = u * duration
        elif kind == "end":
            a, b = u * duration, duration
        elif kind == "end_point":
            a = b = duration
        elif kind == "start":
            a, b = 0.0, u * duration
        elif kind in ("grid", "grid_point", "tiny"):
            n_grid = int(duration // clip) + 1
            i, j = rng.integers(0, n_grid + 1, size=2)
            off_a, off_b = draw(_GRID_OFFSET), draw(_GRID_OFFSET)
            a = i * clip + off_a
            if kind == "grid_point":
                b = a
            elif kind == "tiny":  # straddling / hugging a clip boundary
                b = a + draw(_TINY_LENGTH)
            else:
                b = j * clip + off_b
        else:
            a, b = 0.0, duration
        a, b = sorted((min(max(a, 0.0), duration), min(max(b, 0.0), duration)))
        rows.append([float(a), float(b)])
    return rows


@st.composite
def cases(draw, family: str, *, max_rows: int = 5) -> Case:
    """A labelled table for ``family``. SLS signals are empty (refusal), shorter than
    the video, exactly the clips that start before T, or longer (clips at or past T)."""
    n = draw(st.integers(1, max_rows))
    clip = draw(_CLIP)
    min_scale = draw(_MIN_SCALE)
    target = draw(_TARGET)
    rng = np.random.default_rng(draw(_SEED))
    durations, ps, pe, truth, relevance = [], [], [], [], []
    for _ in range(n):
        t_kind = draw(_T_KIND)
        if family == "sls":
            t = {"grid": int(rng.integers(1, 31)) * clip, "float": rng.uniform(0.2, 40.0),
                 "short": rng.uniform(0.05, clip)}[t_kind]
        else:
            t = {"grid": 150.0, "float": rng.uniform(0.2, 4000.0),
                 "short": rng.uniform(0.05, 1.0)}[t_kind]
        t = float(t)
        durations.append(t)
        truth.append(draw(truth_windows(rng, t, clip)))
        s = e = math.nan
        vals: list[float] = []
        if family != "sls":
            # Prediction (NORM/SEC); NaN marks a refusal.
            kind = draw(_PRED_KIND)
            u, v = np.sort(rng.uniform(size=2))
            if kind == "normal":
                s, e = u * t, v * t
            elif kind == "zero":
                s = e = u * t
            elif kind == "short":
                s = u * t
                e = s + 0.9 * v * min_scale
            elif kind == "overhang":
                s, e = u * t - 3.0 * v, v * t + 3.0 * u
            elif kind == "whole":
                s, e = 0.0, t
            elif kind == "nan_end":
                s = u * t
        else:
            # Relevance (SLS); an empty signal is a refusal.
            full = clips_in_video(t, clip)
            which = draw(_SIGNAL_LENGTH)
            length = {"full": full, "shorter": int(rng.integers(0, full + 1)), "empty": 0,
                      "longer": full + int(rng.integers(1, 4))}[which]
            mode = draw(_SIGNAL_MODE)
            if mode == "ties":
                vals = rng.integers(-2, 3, size=length).astype(float).tolist()
            elif mode == "normal":
                vals = rng.normal(size=length).tolist()
            else:
                vals = [float(rng.integers(-2, 3))] * length
        ps.append(float(s))
        pe.append(float(e))
        relevance.append(vals)
    table = unchecked_table(  # overhanging predictions must reach the kernels unclipped
        qid=np.arange(n), duration=np.asarray(durations), pred_start=np.asarray(ps),
        pred_end=np.asarray(pe), relevance=relevance, truth=Intervals.from_lists(truth),
        clip=clip)
    return Case(table, family, target, min_scale)


def oracle_scale(case: Case) -> np.ndarray:
    """``l``: predicted length floored at min_scale (NORM), 1 s (SEC), 1 (SLS)."""
    tb = case.table
    if case.family == "norm":
        return np.maximum(tb.pred_end - tb.pred_start, case.min_scale)
    return np.ones(case.n)


@st.composite
def thresholds(draw, case: Case, scores: np.ndarray) -> np.ndarray:
    """One ``lam`` per row; random draws too close to the row's score are rejected for
    the interval families (never the exact boundary ``lam == S``)."""
    scale = oracle_scale(case)
    lam = np.empty(case.n)
    for i in range(case.n):
        s = float(scores[i])
        mode = draw(_LAM_MODE)
        finite = math.isfinite(s)
        drawn_freely = False
        if mode == "own":
            lam[i] = s
        elif mode in ("below", "above") and finite:
            sign = -1.0 if mode == "below" else 1.0
            if case.family == "sls":  # exact comparisons: the next float suffices
                lam[i] = math.nextafter(s, sign * math.inf)
            else:
                step = draw(_STEP)
                lam[i] = s + sign * step / scale[i]
        elif mode == "inf":
            lam[i] = math.inf
        elif mode == "ninf":
            lam[i] = -math.inf
        elif mode == "clip_value" and case.table.relevance.lengths[i] > 0:
            vals = case.table.relevance.row(i)
            lam[i] = -float(vals[draw(st.integers(0, vals.size - 1))])
        elif mode == "negative":
            lam[i] = -draw(_NEGATIVE)
            drawn_freely = True
        else:
            lam[i] = draw(_FREE)
            drawn_freely = True
        if case.family != "sls" and finite and drawn_freely:
            assume(abs(s - lam[i]) * scale[i] > MARGIN_S)
    return lam


# ---- oracles -----------------------------------------------------------------------------
def interval_score_oracle(case: Case) -> np.ndarray:
    tb = case.table
    out = np.empty(case.n)
    scale = oracle_scale(case)
    for i in range(case.n):
        s, e = tb.pred_start[i], tb.pred_end[i]
        windows = tb.truth.row(i)
        if not (math.isfinite(s) and math.isfinite(e)):
            out[i] = -math.inf
            continue
        ts = min(w[0] for w in windows)
        te = max(w[1] for w in windows)
        out[i] = max((s - ts) / scale[i], (te - e) / scale[i])
    return out


def sls_region_oracle(values: np.ndarray, clip: float, duration: float,
                      lam: float) -> list[tuple[float, float]]:
    """Selected clips ``f_i >= -lam`` that start before T, merged when adjacent."""
    comps: list[list[float]] = []
    for i, f in enumerate(values):
        if not (f >= -lam and i * clip < duration):
            continue
        s, e = i * clip, min((i + 1) * clip, duration)
        if comps and comps[-1][1] >= s:
            comps[-1][1] = max(comps[-1][1], e)
        else:
            comps.append([s, e])
    return [(s, e) for s, e in comps]


def covers(comps: list[tuple[float, float]], windows: list[list[float]]) -> bool:
    """Every window inside one component, up to the containment tolerance."""
    return all(any(cs <= a + ATOL and ce >= b - ATOL for cs, ce in comps) for a, b in windows)


def sls_score_oracle(case: Case) -> np.ndarray:
    """Brute force: the smallest candidate ``lam`` (some ``-f_i``, or +inf) whose
    oracle region covers the target truth; -inf for a refusal."""
    tb = case.table
    truth = truth_target(tb, case.target)
    out = np.empty(case.n)
    for i in range(case.n):
        vals = tb.relevance.row(i)
        if vals.size == 0:
            out[i] = -math.inf
            continue
        windows = truth.row(i)
        out[i] = math.inf
        for lam in sorted(set((-vals).tolist())):
            if covers(sls_region_oracle(vals, tb.clip, tb.duration[i], lam), windows):
                out[i] = lam
                break
    return out


def score_oracle(case: Case) -> np.ndarray:
    return sls_score_oracle(case) if case.family == "sls" else interval_score_oracle(case)


def scores_of(case: Case) -> np.ndarray:
    return compute_scores(case.table, case.family, min_scale=case.min_scale,
                          target=case.target).values


def check_nestedness(case: Case, scores: np.ndarray, lam: np.ndarray) -> np.ndarray:
    reg = build_regions(case.table, case.family, lam, min_scale=case.min_scale)
    contained = reg.intervals.contains(truth_target(case.table, case.target))
    expected = scores <= lam
    bad = np.flatnonzero(contained != expected)
    assert bad.size == 0, [
        dict(row=int(i), score=float(scores[i]), lam=float(lam[i]),
             contained=bool(contained[i]), truth=case.table.truth.row(i),
             region=reg.row(i), duration=float(case.table.duration[i]),
             pred=(float(case.table.pred_start[i]), float(case.table.pred_end[i])),
             relevance=case.table.relevance.row(i).tolist(), clip=case.table.clip)
        for i in bad[:3]]
    return contained


# ---- THE property ------------------------------------------------------------------------
