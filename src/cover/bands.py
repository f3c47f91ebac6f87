"""The two coverage bands COVER reports, by name, and the clustering they account for.

Split conformal at rank ``k`` of ``n`` calibration scores has expected coverage
``k/(n+1)``; around it COVER reports two different intervals, and always says which:

* **calibration band**: where the realised coverage of *one calibration set* falls
  over calibration sets. For exchangeable rows it is the central interval of
  ``Beta(k, n + 1 - k)`` (paper Prop. A.4). Queries of one source video are not
  exchangeable with each other, so when the calibration rows cluster in videos the
  Beta interval is widened about ``k/(n+1)`` by ``sqrt(deff) * t_{G-1} / z`` (``deff``
  the design effect of the coverage indicator over the ``G`` calibration videos).
* **test band**: where coverage *measured on a finite test sample* falls:
  ``k/(n+1) ± t_{G-1} * sqrt(deff * sd_Beta² + sd_test²)``, ``sd_test`` the
  video-clustered sd of the test mean (CR1: ``sqrt(G/(G-1))`` small-sample factor),
  ``deff`` its design effect, ``G`` the fewer of test and calibration videos.

Both are clipped to ``[0, 1]``. The clustering unit is the source video everywhere
(:data:`CLUSTER_UNIT`); ``docs/bands.md`` checks by simulation that each band attains
its nominal rate on clustered data (``docs/bands.py``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from cover.errors import counted

if TYPE_CHECKING:
    from cover.calibrate.calibrator import Calibrator
    from cover.data.table import GroundingTable

CALIBRATION_BAND = "calibration band"
#: The calibration band's Beta interval alone, where how the calibration rows cluster
#: in videos is not known (``cover evaluate`` reads the regions, not those rows).
BETA_BAND = "Beta band"
TEST_BAND = "test band"
CLUSTER_UNIT = "source video"
LEVEL = 0.95


@functools.lru_cache(maxsize=4096)
def t_quantile(level: float, df: float) -> float:
    """Two-sided ``level`` quantile of Student's t with ``df`` degrees of freedom (the
    normal one when ``df`` is infinite); scipy.special spares the import of scipy.stats."""
    from scipy.special import ndtri, stdtrit

    p = 0.5 + level / 2
    return float(ndtri(p)) if not math.isfinite(df) else float(stdtrit(max(df, 1.0), p))


def cr1_factor(n_units: int) -> float:
    """``sqrt(G / (G - 1))``: the small-sample correction of a cluster-robust sd (1 for
    G <= 1, where no correction is defined)."""
    return math.sqrt(n_units / (n_units - 1)) if n_units > 1 else 1.0


def design_effect(clustered_sd: float, p: float, n: int) -> float:
    """``deff = clustered_sd² / (p (1 - p) / n)``, at least 1: how much the clustering of
    rows in videos inflates the variance of a mean coverage ``p`` over ``n`` rows."""
    iid_var = p * (1.0 - p) / n if n > 0 else 0.0
    if not (iid_var > 0 and math.isfinite(clustered_sd)):
        return 1.0
    return max(1.0, clustered_sd**2 / iid_var)


#: Unit codes counted this many rows at a time.
_CODE_SLICE = 1 << 21


def calibration_clusters(scores: NDArray[np.float64], threshold: float, units: NDArray[Any]
                         ) -> tuple[float, int]:
    """``(design effect, videos)`` of the calibration rows' coverage (``score <=
    threshold``) clustered by ``units`` (source videos): what widens the calibration band
    (:meth:`CoverageBands.of`)."""
    return unit_design_effect(np.asarray(scores) <= threshold, units)


def fitted_clusters(cal: Calibrator, pool: GroundingTable) -> tuple[float, int] | None:
    """:func:`calibration_clusters` of the rows ``pool`` that ``cal`` was fitted on: their
    scores (as the fit computed them) at its one threshold, by source video; None for a
    rule of several thresholds (the band is then the Beta band, named so)."""
    if cal.threshold_ is None:
        return None
    from cover.scores import compute_scores

    scores = compute_scores(pool, cal.score, min_scale=cal.min_scale, target=cal.target)
    return calibration_clusters(scores.values, cal.threshold_, pool.units)


def unit_design_effect(y: NDArray[np.bool_], units: NDArray[Any]) -> tuple[float, int]:
    """``(deff, G)`` of the mean of indicators ``y`` clustered by ``units`` (CR1 sd)."""
    from cover.metric_sums import cluster_sd_of

    n = int(y.size)
    if n == 0:
        return 1.0, 0
    u, yy = np.asarray(units), np.asarray(y)
    sums: NDArray[Any]
    if (u.dtype.kind in "iu" and yy.dtype == np.bool_ and int(u.min()) >= 0
            and int(u.max()) < 2 * n + 1024):
        # codes (ranks of the units, e.g. a stream's): counted by code, the units with
        # rows kept in code order; np.unique over every row would hold ~20 bytes a row
        m = int(u.max()) + 1
        counts, trues = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.int64)
        for a in range(0, n, _CODE_SLICE):  # a slice at a time: bincount copies to int64
            part = u[a:a + _CODE_SLICE]
            counts += np.bincount(part, minlength=m)
            trues += np.bincount(part[yy[a:a + _CODE_SLICE]], minlength=m)
        have = counts > 0  # sums of a 0/1 y: counts of its true rows (exact as floats)
        sums, counts = trues[have].astype(np.float64), counts[have]
        del trues, have
    else:
        _, inv = np.unique(u, return_inverse=True)
        sums, counts = np.bincount(inv, weights=yy), np.bincount(inv)
    g = int(counts.size)
    sd = cluster_sd_of(sums, counts, n) * cr1_factor(g)
    return design_effect(sd, float(np.mean(y)), n), g


def clustered_half_width(values: NDArray[np.float64], units: NDArray[Any],
                         level: float = LEVEL) -> NDArray[np.float64]:
    """Half-width of the ``level`` interval of the mean of each row of ``values`` (``(n,)``
    or ``(R, n)``, columns = rows of a sample clustered by ``units``): ``t_{G-1}`` times
    the CR1 cluster-robust sd of the mean (:func:`cover.metric_sums.cluster_sd_of`),
    ``G`` the number of units (the normal quantile when ``G <= 1``). One per row."""
    from cover.metric_sums import cluster_sd_of

    v = np.atleast_2d(np.asarray(values, dtype=np.float64))
    n = v.shape[1]
    if n == 0:
        return np.full(v.shape[0], np.nan)
    _, inv = np.unique(units, return_inverse=True)
    counts = np.bincount(inv)
    g = int(counts.size)
    t = t_quantile(level, g - 1 if g > 1 else math.inf)
    sds = [cluster_sd_of(np.bincount(inv, weights=row, minlength=g), counts, n) for row in v]
    return t * cr1_factor(g) * np.asarray(sds, dtype=np.float64)


@functools.lru_cache(maxsize=4096)
def beta_interval(n: int, k: int, level: float = LEVEL) -> tuple[float, float]:
    """Central ``level`` interval of ``Beta(k, n + 1 - k)``; ``(1, 1)`` when ``k > n``
    (cached: studies over many splits ask for the same few ``(n, k)``)."""
    from cover.calibrate.split import beta_band

    return beta_band(n, k, level)


def _clip(lo: float, hi: float) -> tuple[float, float]:
    return max(0.0, lo), min(1.0, hi)


@dataclass(frozen=True)
class CoverageBands:
    """Expected coverage ``k/(n+1)`` with its calibration band and (given a test sample)
    its test band. ``deff``/``units`` describe the clustering by :data:`CLUSTER_UNIT`."""

    n: int
    k: int
    level: float
    calibration: tuple[float, float]
    beta_sd: float
    calibration_deff: float = 1.0
    calibration_units: int | None = None
    test: tuple[float, float] | None = None
    test_sd: float | None = None
    test_deff: float | None = None
    test_units: int | None = None

    @property
    def expected(self) -> float:
        return min(self.k, self.n + 1) / (self.n + 1)

    @property
    def calibration_name(self) -> str:
        """:data:`CALIBRATION_BAND` when the calibration rows' videos were counted (the
        band widens for them), else :data:`BETA_BAND`: the interval is Beta's alone."""
        return CALIBRATION_BAND if self.calibration_units else BETA_BAND

    @classmethod
    def of(cls, n: int, k: int, level: float = LEVEL, *, calibration_deff: float = 1.0,
           calibration_units: int | None = None, test_sd: float | None = None,
           test_p: float | None = None, test_n: int | None = None,
           test_units: int | None = None) -> CoverageBands:
        """Both bands from ``(n, k)``. The calibration band widens for clustering when
        ``calibration_deff > 1``; the test band needs ``test_sd`` (the plain clustered sd
        of the test mean), ``test_p`` (its coverage), ``test_n`` and ``test_units``."""
        from cover.calibrate.split import beta_sd

        lo, hi = beta_interval(n, k, level)
        e = min(k, n + 1) / (n + 1)
        b_sd = beta_sd(n, k)
        z = t_quantile(level, math.inf)
        if calibration_deff > 1 and calibration_units:
            w = math.sqrt(calibration_deff) * t_quantile(level, calibration_units - 1) / z
            lo, hi = e - (e - lo) * w, e + (hi - e) * w
        bands = cls(n, k, level, _clip(lo, hi), b_sd, calibration_deff, calibration_units)
        if test_sd is None:
            return bands
        g = int(test_units or 0)
        sd = float(test_sd) * cr1_factor(g) if math.isfinite(test_sd) else 0.0
        deff = design_effect(sd, float(test_p if test_p is not None else e), int(test_n or 0))
        g_min = min(g, calibration_units) if calibration_units else g
        t = t_quantile(level, g_min - 1 if g_min > 1 else math.inf)
        half = t * math.sqrt(deff * b_sd**2 + sd**2)
        return cls(n, k, level, bands.calibration, b_sd, calibration_deff, calibration_units,
                   _clip(e - half, e + half), sd, deff, g)

    def to_dict(self) -> dict[str, Any]:
        """JSON fields. ``band_lo``/``band_hi`` (the band a coverage is checked against) are
        the test band when there is one, else the calibration band; ``band`` names it."""
        band = self.test if self.test is not None else self.calibration
        out: dict[str, Any] = {
            "n_calibration": self.n, "k": self.k, "expected": self.expected,
            "band": TEST_BAND if self.test is not None else self.calibration_name,
            "band_lo": band[0], "band_hi": band[1], "band_level": self.level,
            "calibration_band": list(self.calibration),
            "calibration_band_name": self.calibration_name, "beta_sd": self.beta_sd,
            "calibration_design_effect": (self.calibration_deff if self.calibration_units
                                          else None),
            "calibration_units": self.calibration_units, "cluster_unit": CLUSTER_UNIT,
        }
        if self.test is not None:
            out |= {"test_band": list(self.test), "test_sd": self.test_sd,
                    "test_design_effect": self.test_deff, "test_units": self.test_units}
        return out

    def describe(self, digits: int = 4) -> str:
        """One line naming each band, e.g. for the console."""
        f = f"{{:.{digits}f}}"
        lv = f"{self.level:.0%}"
        cal = f"[{f.format(self.calibration[0])}, {f.format(self.calibration[1])}]"
        text = f"{lv} {self.calibration_name} {cal}"
        if self.calibration_units:
            text += (f" (Beta(k, n+1-k), {counted(self.calibration_units, CLUSTER_UNIT)}, "
                     f"design effect {self.calibration_deff:.2f})")
        else:  # no calibration rows counted: not widened for queries sharing a video
            text += " (Beta(k, n+1-k); the calibration queries' videos not counted)"
        if self.test is not None:
            tb = f"[{f.format(self.test[0])}, {f.format(self.test[1])}]"
            text += (f"; {lv} {TEST_BAND} {tb} (adds the test sample's noise, clustered by "
                     f"{CLUSTER_UNIT}: {counted(self.test_units or 0, 'video')}, design "
                     f"effect {self.test_deff:.2f})")
        return text
