"""Agreement of every peer's threshold with COVER's exact k-th order statistic."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
from baselines import np_quantile_icdf_threshold, np_quantile_threshold, np_sort_threshold
from numpy.typing import NDArray
from peers import ConformalRegressor, SplitConformalRegressor, crepes_threshold, mapie_threshold

import cover

F = NDArray[np.float64]


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


def _remote(peers: Any, cases: list[dict[str, Any]]) -> dict[str, list[float | str]]:
    return {} if peers is None else peers.thresholds(cases)


def agreement(ns: list[int], alphas: list[float], rng: np.random.Generator,
              peers: Any = None) -> str:
    """The rank of each peer's threshold per (n, alpha); ``peers`` (``peer_rows.Peers``)
    adds the peers in their own environments (one request per worker)."""
    cases = []
    for n in ns:
        s = rng.exponential(1.0, n)  # distinct, positive: |S| = S for crepes/MAPIE
        cases += [(s, a) for a in alphas]
    remote = _remote(peers, [{"scores": s.tolist(), "alpha": a} for s, a in cases])
    names = ["numpy float ceil", "np.quantile higher", "np.quantile inverted_cdf", "crepes",
             "MAPIE", *remote]
    head = ["n", "alpha", "exact k (COVER)", *names]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for i, (s, a) in enumerate(cases):
        n, ss = s.size, np.sort(s)
        th = cover.split_conformal(s, alpha=a, warn=False)
        cells = [str(n), str(a), str(th.k) if th.k <= n else f"{th.k} > n (inf)"]
        values = list(peer_thresholds(s, a).values()) + [v[i] for v in remote.values()]
        for v in values:
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


def scan(n_max: int, alphas: list[float], peers: Any = None) -> str:
    """Every n in 1..n_max: the n where a peer's threshold is not COVER's."""
    lines = ["| alpha | peer | n with another threshold | n where it raises although "
             "k <= n | n where it raises and k > n | first n that differ |",
             "|---|---|---|---|---|---|"]
    found: dict[tuple[float, str], tuple[list[int], list[int], list[int]]] = {}
    keys = [(n, a) for n in range(1, n_max + 1) for a in alphas]
    remote = _remote(peers, [{"arange": n, "alpha": a} for n, a in keys])
    absent: dict[str, str] = {}  # peer -> why it has no threshold at all (not installed, ...)
    for i, (n, a) in enumerate(keys):
        s = np.arange(1.0, n + 1.0)
        th = cover.split_conformal(s, alpha=a, warn=False)
        values = [*peer_thresholds(s, a).items(), *((p, vs[i]) for p, vs in remote.items())]
        for p, v in values:
            if isinstance(v, str) and v != "raises":
                absent[p] = v
                continue
            wrong, raised, raised_inf = found.setdefault((a, p), ([], [], []))
            if v == "raises":
                (raised if th.finite else raised_inf).append(n)
            elif v != th.value:
                wrong.append(n)
    for (a, p), (wrong, raised, raised_inf) in found.items():
        first = ", ".join(map(str, sorted(wrong + raised)[:6]))
        lines.append(f"| {a} | {p} | {len(wrong)} | {len(raised)} | {len(raised_inf)} "
                     f"| {first or '—'} |")
    lines += [f"| all | {p} | {why} | | | |" for p, why in absent.items()]
    return "\n".join(lines)
