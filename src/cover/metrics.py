"""Metrics of certified regions against ground truth (paper §Metrics, SPEC §5).

Coverage (truth inside region), miss rate, mean region length (seconds and share
of T), IoU between region and truth, connected components, refusal rate and the
base grounder's point-IoU, marginally and conditional on non-refusal.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.split import beta_band, beta_sd
from cover.data.table import GroundingTable
from cover.ragged import segment_max
from cover.regions import Regions
from cover.scores import Target, check_target, truth_target

RefusalPolicy = Literal["whole-video", "miss", "drop"]
REFUSAL_POLICIES: tuple[RefusalPolicy, ...] = ("whole-video", "miss", "drop")


@dataclass(frozen=True)
class MetricSet:
    """Means over one set of rows (NaN when the set is empty)."""

    n: int
    coverage: float
    miss_rate: float
    mean_length_s: float
    mean_length_frac: float
    mean_iou: float
    mean_components: float

    @classmethod
    def of(cls, mask: NDArray[np.bool_], covered: NDArray[np.bool_], length: NDArray[np.float64],
           duration: NDArray[np.float64], iou: NDArray[np.float64],
           components: NDArray[np.int64]) -> MetricSet:
        n = int(mask.sum())
        every = n == mask.size  # the marginal set: no row selection (no copies)

        def mean(x: NDArray[Any]) -> float:
            if not n:
                return float("nan")
            return float(np.mean(x if every else x[mask]))

        cov = mean(covered.astype(np.float64))
        return cls(n, cov, 1.0 - cov if n else float("nan"), mean(length),
                   mean(length / duration), mean(iou), mean(components.astype(np.float64)))


@dataclass(frozen=True)
class Evaluation:
    """Named result of :func:`evaluate`; ``to_dict()`` is what the CLI writes."""

    marginal: MetricSet
    non_refused: MetricSet
    refusal_rate: float
    point_iou: float
    counts: dict[str, int]
    refusal_policy: str
    covered: NDArray[np.bool_] = field(repr=False)
    reference: dict[str, float] | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "marginal": asdict(self.marginal),
            "non_refused": asdict(self.non_refused),
            "refusal_rate": self.refusal_rate,
            "point_iou": self.point_iou,
            "refusal_policy": self.refusal_policy,
            "counts": dict(self.counts),
        }
        if self.reference is not None:
            out["reference"] = dict(self.reference)
        return out


def point_iou(table: GroundingTable) -> NDArray[np.float64]:
    """IoU of the top-1 interval with the truth, max over the truth windows (the
    official QVHighlights "MR-full" definition); 0 for rows without a prediction."""
    truth = table.require_truth()
    single = truth.is_single
    r: slice | NDArray[np.int64] = truth.rows if not single else slice(None)
    ps, pe = table.pred_start[r], table.pred_end[r]
    with np.errstate(invalid="ignore", divide="ignore"):
        inter = np.maximum(np.minimum(pe, truth.ends) - np.maximum(ps, truth.starts), 0.0)
        union = (pe - ps) + (truth.ends - truth.starts) - inter
        iou = np.where(union > 0, inter / union, 0.0)
    iou = np.nan_to_num(iou, nan=0.0, copy=False)
    return iou if single else segment_max(iou, truth.offsets, empty=0.0)


def coverage_reference(n: int, k: int, level: float = 0.95,
                       test_sd: float | None = None) -> dict[str, float]:
    """The finite-sample reference: realised coverage ~ ``Beta(k, n + 1 - k)`` (paper
    Prop. A.4), mean ``k/(n+1)``.

    Without ``test_sd`` the band is the central ``level`` interval of that Beta law (the
    spread over calibration sets). Coverage measured on a finite test sample also carries
    that sample's own noise, so with ``test_sd`` (the sd of the test mean) the band is
    ``k/(n+1) ± z·sqrt(sd_Beta² + test_sd²)`` as in the validity study (SPEC §6.1),
    clipped to ``[0, 1]``; ``beta_lo``/``beta_hi`` keep the Beta interval.
    """
    lo, hi = beta_band(n, k, level)
    expected = min(k, n + 1) / (n + 1)
    out: dict[str, float] = {"n_calibration": n, "k": k, "expected": expected,
                             "band_lo": lo, "band_hi": hi, "band_level": level}
    if test_sd is not None:
        from scipy.special import ndtri

        b_sd = beta_sd(n, k)
        half = float(ndtri(0.5 + level / 2)) * float(np.hypot(b_sd, test_sd))
        out |= {"beta_lo": lo, "beta_hi": hi, "beta_sd": b_sd, "test_sd": float(test_sd),
                "band_lo": max(0.0, expected - half), "band_hi": min(1.0, expected + half)}
    return out


def cluster_sd(y: NDArray[np.float64], units: NDArray[np.str_]) -> float:
    """Cluster-robust sd of ``mean(y)``: ``sqrt(sum_u (sum_{i in u} (y_i - ybar))^2) / n``
    over split units (rows of one video are dependent; SPEC §6.1)."""
    n = y.size
    if n == 0:
        return float("nan")
    _, inv = np.unique(units, return_inverse=True)
    per_unit = np.bincount(inv, weights=y - y.mean())
    return float(np.sqrt(np.sum(per_unit**2)) / n)


def evaluate(
    regions: Regions,
    table: GroundingTable,
    *,
    target: str = "envelope",
    refusal_policy: str = "whole-video",
    calibration: tuple[int, int] | None = None,
    base_iou: bool = True,
) -> Evaluation:
    """Coverage, length, IoU, miss rate, components and refusal rate of ``regions``.

    ``refusal_policy`` only changes the *evaluation* of refused rows (the certified
    output is always the whole video): ``"whole-video"`` scores them as certified,
    ``"miss"`` counts them as misses, ``"drop"`` leaves them out of the marginal.
    ``calibration=(n, k)`` adds the reference band of :func:`coverage_reference`,
    widened by this test sample's own noise (cluster sd over split units). ``base_iou=False`` skips
    the grounder's point-IoU (NaN), which does not depend on the regions: loops that
    evaluate many thresholds on one table compute it once.
    """
    if refusal_policy not in REFUSAL_POLICIES:
        raise ValueError(
            f"refusal_policy must be one of {REFUSAL_POLICIES}, got {refusal_policy!r}")
    if len(regions) != len(table):
        raise ValueError(f"{len(regions)} regions for {len(table)} rows")
    tgt: Target = check_target(target)
    truth = truth_target(table, tgt)
    covered, inter = regions.intervals.relate(truth)
    length = regions.length
    iou = regions.intervals.iou_from(inter, length, truth.length())
    refused = regions.refused
    if refusal_policy == "miss":
        covered = covered & ~refused
    everyone = np.ones(len(table), dtype=bool) if refusal_policy != "drop" else ~refused
    args = (covered, length, regions.duration, iou, regions.n_components)
    n = len(table)
    reference = None
    if calibration is not None:
        sd = cluster_sd(covered[everyone].astype(np.float64), table.units[everyone])
        reference = coverage_reference(*calibration, test_sd=0.0 if np.isnan(sd) else sd)
    return Evaluation(
        marginal=MetricSet.of(everyone, *args),
        non_refused=MetricSet.of(~refused, *args),
        refusal_rate=float(refused.mean()) if n else float("nan"),
        point_iou=float(point_iou(table).mean()) if n and base_iou else float("nan"),
        counts={"rows": n, "refused": int(refused.sum()), "covered": int(covered.sum()),
                "missed": int((~covered).sum())},
        refusal_policy=refusal_policy,
        covered=covered,
        reference=reference,
    )
