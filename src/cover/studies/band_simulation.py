"""Do COVER's coverage bands attain their nominal rate on clustered data? (a simulation)

Queries of one source video share the video's difficulty: scores are
``S = u_video + e_query`` with ``u ~ N(0, icc)``, ``e ~ N(0, 1 - icc)`` (intraclass
correlation ``icc``; ``S ~ N(0, 1)`` marginally, so the population coverage of a
threshold ``q`` is ``Phi(q)``). Each replicate draws videos (Poisson query counts),
splits them 40/60 by video as ``cover split`` does, calibrates split conformal on the
first part and measures coverage on the second. Per band it counts how often:

* the **calibration band** (:class:`cover.bands.CoverageBands`, clustered) holds the
  population coverage ``Phi(q)`` of the calibrated threshold, and the plain Beta interval
  (exchangeable rows) does;
* the **test band** holds the coverage measured on the test videos, and the band
  ``k/(n+1) ± z sqrt(sd_Beta² + sd_test²)`` without the clustering corrections does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cover.bands import CoverageBands, calibration_clusters
from cover.calibrate.quantile import conformal_rank
from cover.calibrate.split import beta_band, beta_sd
from cover.metrics import cluster_sd

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Scenario:
    """``videos`` source videos with ``queries`` queries each on average."""

    videos: int
    queries: float
    icc: float


@dataclass(frozen=True)
class BandRates:
    """Share of replicates in which each band held its quantity (nominal 0.95)."""

    scenario: Scenario
    reps: int
    calibration_beta: float
    calibration_clustered: float
    test_unclustered: float
    test_clustered: float


def simulate(sc: Scenario, *, alpha: float = 0.1, reps: int = 1000, seed: int = 0,
             cal_frac: float = 0.4) -> BandRates:
    """Rates of the four bands over ``reps`` replicates of scenario ``sc``."""
    from scipy.special import ndtr

    rng = np.random.default_rng(seed)
    hits = np.zeros(4)
    done = 0
    while done < reps:
        sizes = rng.poisson(sc.queries - 1, sc.videos) + 1
        vid = np.repeat(np.arange(sc.videos), sizes)
        s = rng.normal(0, math.sqrt(sc.icc), sc.videos)[vid] + rng.normal(
            0, math.sqrt(1 - sc.icc), vid.size)
        cal = (rng.random(sc.videos) < cal_frac)[vid]
        n, n_test = int(cal.sum()), int((~cal).sum())
        k = conformal_rank(n, alpha)
        if k > n or n_test == 0:
            continue  # too few calibration rows for this alpha: no threshold to judge
        q = np.partition(s[cal], k - 1)[k - 1]
        covered = s[~cal] <= q
        p = float(covered.mean())
        deff, g_cal = calibration_clusters(s[cal], q, vid[cal])
        t_sd = cluster_sd(covered.astype(np.float64), vid[~cal])
        b = CoverageBands.of(n, k, calibration_deff=deff, calibration_units=g_cal,
                             test_sd=t_sd, test_p=p, test_n=n_test,
                             test_units=int(np.unique(vid[~cal]).size))
        assert b.test is not None
        pop = float(ndtr(q))
        lo, hi = beta_band(n, k)
        half = Z95 * math.hypot(beta_sd(n, k), t_sd)
        hits += [lo <= pop <= hi, b.calibration[0] <= pop <= b.calibration[1],
                 abs(p - b.expected) <= half, b.test[0] <= p <= b.test[1]]
        done += 1
    r = hits / reps
    return BandRates(sc, reps, *map(float, r))
