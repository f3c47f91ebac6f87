"""Metrics of certified regions against ground truth (paper §Metrics, SPEC §5).

Coverage (truth inside region), miss rate, mean region length (seconds and share
of T), IoU between region and truth, connected components, refusal rate and the
base grounder's point-IoU, marginally and conditional on non-refusal.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from cover.data.table import GroundingTable
from cover.metric_sums import ChunkedSum, CodeUnitSums, UnitSums, cluster_sd_of
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
        acc = MetricSums()
        acc.add(mask, covered, length, duration, iou, components)
        return acc.finish()


class MetricSums:
    """The sufficient statistics of a :class:`MetricSet`, accumulated over row batches
    (:mod:`cover.metric_sums`: the same bits for any batching)."""

    def __init__(self) -> None:
        self.covered = 0
        self.components = 0
        self.length, self.frac, self.iou = ChunkedSum(), ChunkedSum(), ChunkedSum()

    @property
    def n(self) -> int:
        return self.length.n

    def add(self, mask: NDArray[np.bool_], covered: NDArray[np.bool_],
            length: NDArray[np.float64], duration: NDArray[np.float64],
            iou: NDArray[np.float64], components: NDArray[np.int64]) -> None:
        every = bool(mask.all())  # the marginal set: no row selection (no copies)

        def pick(x: NDArray[Any]) -> NDArray[Any]:
            return x if every else x[mask]

        self.covered += int(np.count_nonzero(pick(covered)))
        self.components += int(pick(components).sum())
        self.length.add(pick(length))
        self.frac.add(pick(length / duration))
        self.iou.add(pick(iou))

    def finish(self) -> MetricSet:
        n = self.n
        cov = self.covered / n if n else float("nan")
        return MetricSet(n, cov, 1.0 - cov if n else float("nan"), self.length.mean(),
                         self.frac.mean(), self.iou.mean(),
                         self.components / n if n else float("nan"))


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
    reference: dict[str, Any] | None = None
    #: Rows a selective rule abstained on (:mod:`cover.calibrate.ltt`): the abstention
    #: rate (abstained and refused rows: not answered) and the answered rows' metrics
    #: (``answered.miss_rate`` is the answered-miss rate); None when no row abstained.
    selective: dict[str, Any] | None = None

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
        if self.selective is not None:
            out["selective"] = dict(self.selective)
        return out


def point_iou(table: GroundingTable, against: str = "windows") -> NDArray[np.float64]:
    """IoU of the top-1 interval with the truth; 0 for rows without a prediction.

    ``"windows"`` (default): max over the truth windows (the official QVHighlights
    "MR-full" definition). ``"envelope"``: against the envelope of the windows (earliest
    start to latest end), the truth the paper certifies and its utility study scores."""
    truth = (table.require_truth() if check_target(against) == "windows"
             else truth_target(table, "envelope"))
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
                       test_sd: float | None = None, *, test_p: float | None = None,
                       test_n: int | None = None, test_units: int | None = None,
                       calibration_deff: float = 1.0,
                       calibration_units: int | None = None) -> dict[str, Any]:
    """The finite-sample reference: expected coverage ``k/(n+1)`` with its named bands
    (:class:`cover.bands.CoverageBands`): the *calibration band* (``Beta(k, n + 1 - k)``,
    paper Prop. A.4, widened for clustered calibration rows) and, with ``test_sd`` (the
    video-clustered sd of a test mean), the *test band* that adds the test sample's own
    noise; both clipped to ``[0, 1]``. ``band_lo``/``band_hi`` are the test band when
    there is one, else the calibration band.
    """
    from cover.bands import CoverageBands

    return CoverageBands.of(n, k, level, calibration_deff=calibration_deff,
                            calibration_units=calibration_units, test_sd=test_sd,
                            test_p=test_p, test_n=test_n, test_units=test_units).to_dict()


def cluster_sd(y: NDArray[np.float64], units: NDArray[Any]) -> float:
    """Cluster-robust sd of ``mean(y)``: ``sqrt(sum_u (sum_{i in u} (y_i - ybar))^2) / n``
    over split units (rows of one video are dependent; SPEC §6.1)."""
    if y.size == 0:
        return float("nan")
    _, inv = np.unique(units, return_inverse=True)
    return cluster_sd_of(np.bincount(inv, weights=y), np.bincount(inv), y.size)


class EvaluationSums:
    """:func:`evaluate` over row batches: per-row values are computed batch by batch and
    only their sums kept (per-video sums for the cluster sd), so :meth:`finish` gives
    the one-shot result bit for bit, for any batching (:mod:`cover.metric_sums`)."""

    def __init__(self, *, target: str = "envelope", refusal_policy: str = "whole-video",
                 units: bool = False, base_iou: bool = True) -> None:
        if refusal_policy not in REFUSAL_POLICIES:
            raise ValueError(
                f"refusal_policy must be one of {REFUSAL_POLICIES}, got {refusal_policy!r}")
        self.target: Target = check_target(target)
        self.refusal_policy = refusal_policy
        self.marginal, self.non_refused = MetricSums(), MetricSums()
        self.rows = self.refused = self.covered = self.abstained = 0
        self.answered = MetricSums()
        self.point_iou: ChunkedSum | None = ChunkedSum() if base_iou else None
        self.units: UnitSums | CodeUnitSums | None = UnitSums() if units else None

    def add(self, regions: Regions, table: GroundingTable,
            unit_codes: NDArray[np.integer] | None = None) -> NDArray[np.bool_]:
        """Add the rows of ``regions`` scored against ``table``; returns ``covered``.
        ``unit_codes``: each row's unit as a code, when ``units`` is a
        :class:`~cover.metric_sums.CodeUnitSums` (else the table's units are read)."""
        if len(regions) != len(table):
            raise ValueError(f"{len(regions)} regions for {len(table)} rows")
        truth = truth_target(table, self.target)
        covered, inter = regions.intervals.relate(truth)
        length = regions.length
        iou = regions.intervals.iou_from(inter, length, truth.length())
        refused = regions.refused
        if self.refusal_policy == "miss":
            covered = covered & ~refused
        everyone = (np.ones(len(table), dtype=bool) if self.refusal_policy != "drop"
                    else ~refused)
        args = (covered, length, regions.duration, iou, regions.n_components)
        self.marginal.add(everyone, *args)
        self.non_refused.add(~refused, *args)
        abstained = regions.abstained & ~refused
        self.answered.add(~refused & ~abstained, *args)
        self.abstained += int(np.count_nonzero(abstained))
        self.rows += len(table)
        self.refused += int(np.count_nonzero(refused))
        self.covered += int(np.count_nonzero(covered))
        if self.point_iou is not None:
            self.point_iou.add(point_iou(table))
        if self.units is not None:
            if isinstance(self.units, UnitSums):
                self.units.add(table.units[everyone], covered[everyone])
            elif unit_codes is None:
                raise ValueError("per-code unit sums need each row's unit_codes")
            else:
                self.units.add(unit_codes[everyone], covered[everyone])
        return covered

    def finish(self, calibration: tuple[int, int] | None = None,
               clusters: tuple[float, int] | None = None) -> Evaluation:
        """The :class:`Evaluation` of every row added (``covered`` left empty);
        ``clusters``: :func:`evaluate`'s ``calibration_clusters``."""
        n = self.rows
        reference = None
        if calibration is not None:
            if self.units is None:
                raise ValueError("the test band needs EvaluationSums(units=True)")
            unit_sum, unit_n = self.units.totals()
            sd = cluster_sd_of(unit_sum, unit_n, self.marginal.n)
            reference = coverage_reference(
                *calibration, test_sd=0.0 if np.isnan(sd) else sd,
                test_p=float(unit_sum.sum() / unit_n.sum()) if unit_n.size else None,
                test_n=self.marginal.n,
                test_units=int(unit_n.size),
                calibration_deff=1.0 if clusters is None else clusters[0],
                calibration_units=None if clusters is None else clusters[1])
        piou = self.point_iou.mean() if self.point_iou is not None and n else float("nan")
        return Evaluation(
            marginal=self.marginal.finish(),
            non_refused=self.non_refused.finish(),
            refusal_rate=self.refused / n if n else float("nan"),
            point_iou=piou,
            counts={"rows": n, "refused": self.refused, "covered": self.covered,
                    "missed": n - self.covered},
            refusal_policy=self.refusal_policy,
            covered=np.zeros(0, dtype=bool),
            reference=reference,
            selective=None if not self.abstained else {
                "abstained": self.abstained,
                "abstention_rate": (self.abstained + self.refused) / n,
                "answered": asdict(self.answered.finish())},
        )


def evaluate(
    regions: Regions,
    table: GroundingTable,
    *,
    target: str = "envelope",
    refusal_policy: str = "whole-video",
    calibration: tuple[int, int] | None = None,
    calibration_clusters: tuple[float, int] | None = None,
    base_iou: bool = True,
) -> Evaluation:
    """Coverage, length, IoU, miss rate, components and refusal rate of ``regions``.

    ``refusal_policy`` only changes the *evaluation* of refused rows (the certified
    output is always the whole video): ``"whole-video"`` scores them as certified,
    ``"miss"`` counts them as misses, ``"drop"`` leaves them out of the marginal.
    ``calibration=(n, k)`` adds the named bands of :func:`coverage_reference`,
    widened by this test sample's own noise (cluster sd over split units);
    ``calibration_clusters=(design effect, videos)`` of the calibration rows' coverage
    (:func:`cover.bands.calibration_clusters`) widens the calibration band for them
    (without: the Beta band, named so). ``base_iou=False`` skips
    the grounder's point-IoU (NaN), which does not depend on the regions: loops that
    evaluate many thresholds on one table compute it once. The same as
    :class:`EvaluationSums` fed all rows in one batch.
    """
    if not (isinstance(regions, Regions) and isinstance(table, GroundingTable)):
        raise TypeError("evaluate takes the Regions of Calibrator.certify and the labelled "
                        "GroundingTable they certify, got "
                        f"{type(regions).__name__} and {type(table).__name__}")
    sums = EvaluationSums(target=target, refusal_policy=refusal_policy,
                          units=calibration is not None, base_iou=base_iou)
    covered = sums.add(regions, table)
    return replace(sums.finish(calibration, calibration_clusters), covered=covered)
