"""The three timed stages: calibration, certification, evaluation.

Each cell of a stage is a list of :class:`Entry` (an implementation, the COVER row its
ratio is taken against, the call, and a check of its output against COVER's), timed
together by :func:`timing.interleaved`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from baselines import (
    np_evaluate,
    np_evaluate_full,
    np_norm_score_partition,
    np_quantile_icdf_threshold,
    np_quantile_threshold,
    np_sort_threshold,
    np_superlevel,
    np_widen,
)
from numpy.typing import NDArray
from peers import (
    ConformalRegressor,
    SplitConformalRegressor,
    crepes_fit,
    crepes_threshold,
    for_peers,
    mapie_fit,
    mapie_threshold,
)
from results import Stage, same, same_arrays
from timing import Contender, Timed, interleaved
from workloads import Data, short

import cover
from cover.scores import DEFAULT_MIN_SCALE as MIN_SCALE

ALPHA = 0.1
F = NDArray[np.float64]
Check = Callable[[Any, dict[str, Any]], str]


@dataclass
class Entry:
    """One implementation in a cell; ``fn`` None means unavailable (``why`` says why)
    unless ``remote`` runs it in another process (``peer_client.RemoteCell``)."""

    name: str
    ref: str
    fn: Callable[[], Any] | None
    check: Check | None = None
    why: str = "not installed"
    remote: Timed | None = None

    @property
    def live(self) -> bool:
        return self.fn is not None or self.remote is not None


def run_cell(st: Stage, col: str, entries: list[Entry], rounds: int) -> dict[str, Any]:
    """Time the available entries interleaved, record them in ``st``; returns results."""
    live = [Contender(e.name, e.fn, remote=e.remote) for e in entries if e.live]
    timings = interleaved(live, rounds)
    results = {c.name: c.result for c in live}
    for e in entries:
        if not e.live:
            st.add(col, e.name, e.ref, None, e.why)
        else:
            verdict = e.check(results[e.name], results) if e.check else ""
            st.add(col, e.name, e.ref, timings[e.name], verdict)
    return results


def calibration(st: Stage, d: Data, rounds: int, peers: Any = None) -> None:
    """Table a); ``peers`` (``peer_rows.Peers``) adds the peers in their own environments."""
    scores = cover.compute_scores(d.table, "norm").values
    q = cover.split_conformal(scores, alpha=ALPHA).value
    split, fit = "COVER split_conformal", "COVER Calibrator(score='norm').fit (scores + threshold)"
    pscores = for_peers(scores)
    safe = q >= 0

    def equal_q(v: Any, _: dict[str, Any]) -> str:
        return same(v, q) if safe else "n/a (q < 0)"

    entries = [
        Entry(split, split, lambda: cover.split_conformal(scores, alpha=ALPHA)),
        Entry(fit, fit, lambda: cover.Calibrator(score="norm", alpha=ALPHA).fit(d.table),
              lambda cal, _: same(cal.threshold_, q)),
        Entry("numpy NORM scores + np.partition", fit,
              lambda: np_norm_score_partition(d, ALPHA), equal_q),
    ]
    for name, fn in (("numpy np.sort + float ceil", np_sort_threshold),
                     ("numpy np.quantile(ceil((n+1)(1-a))/n, method='higher')",
                      np_quantile_threshold),
                     ("numpy np.quantile(ceil((n+1)(1-a))/n, method='inverted_cdf')",
                      np_quantile_icdf_threshold)):
        entries.append(Entry(name, split, lambda fn=fn: fn(scores, ALPHA), equal_q))
    entries += [
        Entry("crepes ConformalRegressor().fit + predict_int", split,
              None if ConformalRegressor is None else lambda: crepes_threshold(pscores, ALPHA),
              equal_q),
        Entry("MAPIE SplitConformalRegressor(identity, prefit) conformalize + predict_interval",
              split, None if SplitConformalRegressor is None
              else lambda: mapie_threshold(pscores, ALPHA), equal_q),
    ]
    if peers is None:
        run_cell(st, d.label, entries, rounds)
        return
    with peers.threshold_entries(pscores, split, equal_q) as remote:
        run_cell(st, d.label, entries + remote, rounds)


def thresholds(cal: Data) -> dict[str, tuple[float, F]]:
    """COVER's threshold and calibration scores per family (SLS only with relevance)."""
    out = {}
    for fam in ("norm", "sec", "sls"):
        if fam == "sls" and cal.dense is None:
            continue
        s = cover.compute_scores(cal.table, fam).values
        out[fam] = (cover.split_conformal(s, alpha=ALPHA).value, s)
    return out


def _clip_pair(out: F, m: int, T: F) -> tuple[F, F]:
    return np.maximum(out[:m, 0], 0.0), np.minimum(out[m:, 1], T)


def certification(st: Stage, d: Data, th: dict[str, tuple[float, F]], rounds: int,
                  max_sls: int) -> dict[str, cover.Regions]:
    m = len(d.table)
    regions: dict[str, cover.Regions] = {}
    for fam in ("norm", "sec"):
        q, cal_scores = th[fam]
        ref = f"COVER build_regions('{fam}')"
        peer_scores = for_peers(cal_scores)

        def same_as_cover(out: Any, res: dict[str, Any], ref: str = ref,
                          safe: bool = q >= 0) -> str:
            iv = res[ref].intervals
            return same_arrays([(out[0], iv.starts), (out[1], iv.ends)]) if safe \
                else "n/a (q < 0)"

        entries = [
            Entry(ref, ref, lambda fam=fam, q=q: cover.build_regions(d.table, fam, q,
                                                                     alpha=ALPHA)),
            Entry(f"numpy widen + clip ({fam})", ref, lambda fam=fam, q=q: np_widen(d, q, fam),
                  same_as_cover),
        ]
        if fam == "norm":
            run_crepes = None
            if ConformalRegressor is not None:
                cr = crepes_fit(peer_scores, sigmas=np.ones_like(peer_scores))

                def run_crepes(cr: Any = cr) -> tuple[F, F]:
                    lenp = d.pe - d.ps
                    scale = np.where(lenp < MIN_SCALE, MIN_SCALE, lenp)
                    out = cr.predict_int(np.concatenate([d.ps, d.pe]),
                                         sigmas=np.concatenate([scale, scale]),
                                         confidence=1 - ALPHA, y_min=0.0)
                    return _clip_pair(out, m, d.T)
            entries.append(Entry("crepes normalized predict_int (sigmas = l; y_min=0, clip to T)",
                                 ref, run_crepes, same_as_cover))
        else:
            run_cr = run_mp = None
            if ConformalRegressor is not None:
                cr = crepes_fit(peer_scores)

                def run_cr(cr: Any = cr) -> tuple[F, F]:
                    out = cr.predict_int(np.concatenate([d.ps, d.pe]), confidence=1 - ALPHA,
                                         y_min=0.0)
                    return _clip_pair(out, m, d.T)
            if SplitConformalRegressor is not None:
                mp = mapie_fit(peer_scores, ALPHA)

                def run_mp(mp: Any = mp) -> tuple[F, F]:
                    _, out = mp.predict_interval(np.concatenate([d.ps, d.pe])[:, None])
                    return _clip_pair(out[:, :, 0], m, d.T)
            entries += [
                Entry("crepes predict_int (± q s; y_min=0, clip to T)", ref, run_cr,
                      same_as_cover),
                Entry("MAPIE predict_interval (identity, ± q s; clip to [0, T])", ref, run_mp,
                      same_as_cover),
            ]
        regions[fam] = run_cell(st, d.label, entries, rounds)[ref]
    ref = "COVER build_regions('sls')"
    dense_name = "numpy dense (m × clips) runs (sls)"
    if "sls" in th and d.dense is not None and m <= max_sls:
        q = th["sls"][0]
        dense = d.dense

        def same_runs(out: Any, res: dict[str, Any]) -> str:
            iv = res[ref].intervals
            return same_arrays([(out[0], iv.rows), (out[1], iv.starts), (out[2], iv.ends)])

        res = run_cell(st, d.label, [
            Entry(ref, ref, lambda: cover.build_regions(d.table, "sls", q, alpha=ALPHA)),
            Entry(dense_name, ref, lambda: np_superlevel(dense, d.T, q, d.table.clip),
                  same_runs),
        ], rounds)
        regions["sls"] = res[ref]
    else:
        why = f"skipped (m > {short(max_sls)})" if m > max_sls else "n/a"
        st.add(d.label, ref, ref, None, why)
        st.add(d.label, dense_name, ref, None, why)
    return regions


def evaluation(st: Stage, d: Data, regions: dict[str, cover.Regions],
               th: dict[str, tuple[float, F]], rounds: int) -> None:
    ref = "COVER evaluate (NORM regions)"
    reg = regions["norm"]
    lo, hi = np_widen(d, th["norm"][0], "norm")

    def same_cov(out: Any, res: dict[str, Any]) -> str:
        ev = res[ref]
        cov, length = out
        ok = cov == ev.marginal.coverage and math.isclose(length, ev.marginal.mean_length_s,
                                                          rel_tol=1e-12)
        return "yes" if ok else f"no (cov {cov:.4f} vs {ev.marginal.coverage:.4f})"

    def same_full(full: Any, res: dict[str, Any]) -> str:
        ev = res[ref]
        want = {k: getattr(ev.marginal, k) for k in
                ("coverage", "mean_length_s", "mean_length_frac", "mean_iou")}
        if d.table.truth is not None and (d.table.truth.n_components == 1).all():
            want["point_iou"] = ev.point_iou
        bad = [k for k, v in want.items() if not math.isclose(full[k], v, rel_tol=1e-9)]
        return "yes" if not bad else "no (" + ", ".join(
            f"{k} {full[k]:.6g} vs {want[k]:.6g}" for k in bad) + ")"

    sls = regions.get("sls")
    run_cell(st, d.label, [
        Entry(ref, ref, lambda: cover.evaluate(reg, d.table)),
        Entry("numpy coverage + mean length (NORM)", ref, lambda: np_evaluate(d, lo, hi),
              same_cov),
        Entry("numpy + length/T, IoU, point-IoU (NORM)", ref,
              lambda: np_evaluate_full(d, lo, hi), same_full),
        Entry("COVER evaluate (SLS regions, multi-interval)", ref,
              None if sls is None else lambda: cover.evaluate(sls, d.table), why="skipped"),
    ], rounds)
