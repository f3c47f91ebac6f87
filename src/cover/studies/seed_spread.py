"""Split robustness as an output: each study cell over N unit-level split seeds.

Per cell: the value at the protocol's seed (the one every other table uses, 42 by
default), the mean, sd, min and max over seeds ``0 .. N - 1``, the share of seeds whose
value lies inside that seed's own 95% test band (coverage cells), and where the paper
reports the cell (:mod:`cover.studies.paper_numbers`) the share of seeds at or below the
paper's number. Cells: study 1's coverage per (family, alpha), study 2's lengths at the
headline targets, study 4's coverage per stratum (diagnostic half, NORM and SEC).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.scores import DEFAULT_MIN_SCALE
from cover.studies.common import HEADLINE_TARGETS, alpha_of, jsonify
from cover.studies.paper_numbers import PaperNumber, paper_number
from cover.studies.protocol import Protocol
from cover.studies.result import StudyResult, Table, fmt
from cover.studies.split_seeds import (
    SPREAD_CAPTION,
    STRATA_ALPHA,
    SeedValues,
    default_seeds,
    seed_values,
)

#: The studies a spread can cover, and the one name the outputs use for it.
SPREAD_STUDIES = ("coverage", "efficiency", "conditional")
STUDY_KEY = "split-seeds"


@dataclass(frozen=True)
class SpreadCell:
    """One study cell over seeds (``values[i]`` is seed ``seeds[i]``; NaN = no value)."""

    study: str
    family: str
    target: float
    quantity: str
    values: NDArray[np.float64]
    inside: NDArray[np.bool_] | None
    protocol_value: float
    protocol_inside: bool | None
    paper: PaperNumber | None

    def _finite(self) -> NDArray[np.float64]:
        return self.values[np.isfinite(self.values)]

    def stats(self) -> dict[str, Any]:
        """Mean, sd (ddof=1), min, max over the seeds with a value; band share; paper
        percentile (share of seeds at or below the paper's number, in percent)."""
        v = self._finite()
        out: dict[str, Any] = {
            "n_seeds": int(v.size),
            "mean": float(v.mean()) if v.size else float("nan"),
            "sd": float(v.std(ddof=1)) if v.size > 1 else float("nan"),
            "min": float(v.min()) if v.size else float("nan"),
            "max": float(v.max()) if v.size else float("nan"),
            "share_inside_band": None, "paper": None, "paper_percentile": None,
        }
        if self.inside is not None:
            ok = np.isfinite(self.values)
            out["share_inside_band"] = float(self.inside[ok].mean()) if ok.any() else None
        if self.paper is not None and v.size:
            out["paper"] = {"value": self.paper.value, "where": self.paper.where}
            out["paper_percentile"] = float(100.0 * np.mean(v <= self.paper.value))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"study": self.study, "family": self.family, "target": self.target,
                "quantity": self.quantity, "protocol_value": self.protocol_value,
                "protocol_inside_band": self.protocol_inside, **self.stats(),
                "values": self.values.tolist()}


@dataclass
class SplitSpread:
    """Every spread cell of one (grounder, dataset) pair."""

    name: str
    dataset: str
    protocol: Protocol
    seeds: tuple[int, ...]
    cells: list[SpreadCell]
    seconds: float = float("nan")

    def to_dict(self) -> dict[str, Any]:
        return jsonify({
            "study": STUDY_KEY, "what": SPREAD_CAPTION, "name": self.name,
            "dataset": self.dataset, "seeds": list(self.seeds),
            "protocol_seed": self.protocol.seed, "protocol": self.protocol.to_dict(),
            "seconds": self.seconds, "cells": [c.to_dict() for c in self.cells]})

    def caption(self) -> str:
        n, p = len(self.seeds), self.protocol
        return (f"Split-seed spread: how much the choice of calibration/test split alone "
                f"moves the number. {n} unit-level splits (seeds {self.seeds[0]}.."
                f"{self.seeds[-1]}, {p.cal_frac:.0%} of the source videos to calibration, "
                f"{p.n_resamples} resamples each); 'Seed {p.seed}' is the protocol's split that "
                "every other table uses (* = outside its own 95% test band). Mean ± sd and "
                "min-max over the seeds; 'in band' = share of seeds whose value lies inside "
                "that seed's own 95% test band (coverage only; a stratum's band uses its own "
                "rows and videos); 'paper' = the paper's number for this grounder and cell "
                "with pN = N% of seeds at or below it (the paper's checkpoints are not "
                "these files).")

    def rows(self) -> list[tuple[str, ...]]:
        out: list[tuple[str, ...]] = []
        for c in self.cells:
            s, d = c.stats(), 3 if c.quantity != "length (s)" else 1
            star = " *" if c.protocol_inside is False else ""
            share = s["share_inside_band"]
            paper = "--" if s["paper"] is None else \
                f"{fmt(s['paper']['value'], d)} (p{s['paper_percentile']:.0f})"
            out.append((self.name, self.dataset, c.study, c.family.upper(), f"{c.target:.2f}",
                        c.quantity, fmt(c.protocol_value, d) + star,
                        f"{fmt(s['mean'], d)} ± {fmt(s['sd'], d)}",
                        f"{fmt(s['min'], d)}-{fmt(s['max'], d)}",
                        "--" if share is None else f"{share:.0%}", paper))
        return out

    def table(self) -> Table:
        header = ("Grounder", "Dataset", "Study", "Family", "1-alpha", "Quantity",
                  f"Seed {self.protocol.seed}", "Mean ± sd", "Min-max", "In band", "Paper")
        return Table("split_seeds", self.caption(), header, tuple(self.rows()))

    def study_result(self) -> StudyResult:
        return StudyResult(STUDY_KEY, "Split-seed spread", f"{self.name} on {self.dataset}",
                           self.to_dict(), [self.table()])


def split_spread(table: Any, *, name: str, dataset: str, protocol: Protocol, n_seeds: int,
                 families: Sequence[str], studies: Sequence[str] = SPREAD_STUDIES,
                 lengths: bool = False, min_scale: float = DEFAULT_MIN_SCALE,
                 target: str = "envelope") -> SplitSpread:
    """The spread of ``studies``' cells over seeds ``0 .. n_seeds - 1`` (plus the protocol's
    seed when outside them). ``lengths`` adds study 1's length per (family, alpha)."""
    if n_seeds < 2:
        raise ValueError(f"n_seeds must be >= 2 (the spread over split seeds needs two), "
                         f"got {n_seeds}")
    t0 = time.perf_counter()
    seeds = default_seeds(n_seeds)
    run = seeds if protocol.seed in seeds else (*seeds, protocol.seed)
    alphas: list[float] = []
    if "coverage" in studies:
        alphas += protocol.alphas
    heads = [alpha_of(t) for t in HEADLINE_TARGETS] if "efficiency" in studies else []
    strata_fams = [f for f in ("norm", "sec") if f in families] \
        if "conditional" in studies else []
    vals = seed_values(table, families=families, protocol=protocol, seeds=run,
                       alphas=tuple(dict.fromkeys(alphas + heads)) or (STRATA_ALPHA,),
                       band_alphas=tuple(alphas), strata_families=strata_fams,
                       min_scale=min_scale, target=target)
    at = run.index(protocol.seed)
    cells = []

    def add(study: str, fam: str, tgt: float, qty: str, v: NDArray[np.float64],
            lo: NDArray[np.float64] | None = None, hi: NDArray[np.float64] | None = None
            ) -> None:
        inside = None if lo is None or hi is None else (lo <= v) & (v <= hi)
        cells.append(SpreadCell(
            study, fam, tgt, qty, v[:len(seeds)], None if inside is None else
            inside[:len(seeds)], float(v[at]), None if inside is None else bool(inside[at]),
            paper_number(name, dataset, study, fam, tgt, qty)))

    for fam in families:
        for a in (protocol.alphas if "coverage" in studies else ()):
            key = (fam, a)
            add("coverage", fam, 1 - a, "coverage", vals.coverage[key], vals.band_lo[key],
                vals.band_hi[key])
            if lengths:
                add("coverage", fam, 1 - a, "length (s)", vals.length[key])
    for tgt, a in zip(HEADLINE_TARGETS if heads else (), heads, strict=False):
        for fam in families:
            add("efficiency", fam, tgt, "length (s)", vals.length[(fam, a)])
    _strata_cells(vals, strata_fams, add)
    return SplitSpread(name, dataset, protocol, seeds, cells, time.perf_counter() - t0)


def _strata_cells(vals: SeedValues, families: Sequence[str], add: Any) -> None:
    for fam in families:
        for (f, stratum), v in vals.strata_coverage.items():
            if f == fam:
                add("conditional", fam, 1 - STRATA_ALPHA, f"coverage: {stratum}", v,
                    vals.strata_lo.get((f, stratum)), vals.strata_hi.get((f, stratum)))
