"""Rule and grouping registries: the extension points of the :class:`Calibrator`.

A **rule** is a pure function ``fn(data, alpha, params) -> RuleFit`` from score arrays
(one per row, plus per-side scores, a loss curve, group labels and weights when the
rule needs them) to one :class:`GroupThreshold` per group label and a report. It is
registered once with :func:`register_rule` together with what it needs, its parameter
defaults and checks, and the rank its thresholds must have (used to validate saved
files). A **grouping** maps every row to a group label: ``fit`` learns its parameters
from the calibration table (e.g. cut points), ``assign`` labels any table with them.

Both registries are plain dicts keyed by name; rule modules register themselves when
:mod:`cover.calibrate` is imported.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from cover.data.table import GroundingTable

if TYPE_CHECKING:
    from cover.regions import Regions

#: Side names of a threshold: one-parameter rules use "both", per-boundary rules the two.
ONE_SIDE = ("both",)
TWO_SIDES = ("start", "end")


@dataclass(frozen=True)
class Side:
    """One calibrated parameter: ``value`` (finite or ``+inf``) and, for rank-based
    rules, the 1-based rank ``k`` of the order statistic it is."""

    value: float
    k: int | None


@dataclass(frozen=True)
class GroupThreshold:
    """The threshold(s) of one group, fitted on ``n`` rows.

    ``sides`` holds ``{"both": Side}`` for one-parameter rules or
    ``{"start": Side, "end": Side}`` for per-boundary rules.
    """

    n: int
    sides: Mapping[str, Side]

    @property
    def lams(self) -> tuple[float, float]:
        """``(lam_start, lam_end)`` widening of this group's regions."""
        if "both" in self.sides:
            v = self.sides["both"].value
            return v, v
        return self.sides["start"].value, self.sides["end"].value


@dataclass(frozen=True)
class Fallback:
    """A group whose own threshold was not used: ``used`` says what replaced it."""

    group: str
    reason: str
    used: str  # "pooled" or "inf"

    def to_dict(self) -> dict[str, str]:
        return {"group": self.group, "reason": self.reason, "used": self.used}


@dataclass(frozen=True)
class RuleInput:
    """What a rule may read. ``scores`` always; the others when the rule declares it
    needs them (``None`` otherwise)."""

    scores: NDArray[np.float64]
    groups: NDArray[np.str_]
    start: NDArray[np.float64] | None = None
    end: NDArray[np.float64] | None = None
    loss: Callable[[float], NDArray[np.float64]] | None = None
    weights: NDArray[np.float64] | None = None
    #: Per-row covariates (rows x covariates) of a rule with a ``per_row`` part.
    features: NDArray[np.float64] | None = None
    #: ``"table"``: the labelled table and ``regions_at(lam per row)``, its regions at ``lam``.
    table: GroundingTable | None = None
    regions_at: Callable[[NDArray[np.float64]], Regions] | None = None
    #: ``scores`` is the rule's own scratch copy: it may reorder it in place (a selection
    #: without a copy); False when the caller keeps reading it.
    scratch: bool = False

    @property
    def n(self) -> int:
        return int(self.scores.size)


@dataclass(frozen=True)
class RuleFit:
    """A rule's result: thresholds per group label, the fallbacks it took, a report
    (shown to the user, not saved) and any parameters it learned (saved, e.g. side
    weights estimated on a fold)."""

    thresholds: dict[str, GroupThreshold]
    report: dict[str, Any] = field(default_factory=dict)
    fallback: list[Fallback] = field(default_factory=list)
    learned: dict[str, Any] = field(default_factory=dict)


RuleFn = Callable[[RuleInput, Fraction, Mapping[str, Any]], RuleFit]
#: ``rank(n, alpha, params, side)``: the rank a saved threshold must have, or None.
RankFn = Callable[[int, Fraction, Mapping[str, Any], str], int | None]
#: ``lams(record, params)``: per-side widening ``(lam_start, lam_end)`` of one group.
LamsFn = Callable[[GroupThreshold, Mapping[str, Any]], tuple[float, float]]
#: ``finish(regions, table, params)``: what a rule does to the regions after widening
#: (e.g. abstention, :mod:`cover.calibrate.ltt`).
FinishFn = Callable[["Regions", GroundingTable, Mapping[str, Any]], "Regions"]


def _default_lams(record: GroupThreshold, params: Mapping[str, Any]) -> tuple[float, float]:
    return record.lams


def _no_params(params: Mapping[str, Any]) -> dict[str, Any]:
    if params:
        raise ValueError(f"this rule takes no parameters, got {', '.join(sorted(params))}")
    return {}


@dataclass(frozen=True)
class PerRow:
    """The part of a rule whose threshold depends on each row's covariates, not on a group
    label (rule ``conditional``): ``features(table, params)`` are the covariates the rule
    is fitted on (``RuleInput.features``); ``lams(table, params, alpha)`` the threshold of
    every row of any table from the fitted ``params``; ``check(params, thresholds,
    n_fitted, alpha)`` checks a saved file's fitted parameters against its thresholds
    (a ``ValueError``)."""

    features: Callable[[GroundingTable, Mapping[str, Any]], NDArray[np.float64]]
    lams: Callable[[GroundingTable, Mapping[str, Any], float], NDArray[np.float64]]
    check: Callable[[Mapping[str, Any], Mapping[str, GroupThreshold], int, float], None]


@dataclass(frozen=True)
class RuleSpec:
    """A registered rule.

    ``needs`` names the inputs beyond ``scores``: ``"sides"`` (per-boundary scores,
    interval families only), ``"loss"`` (per-row loss at ``lam``), ``"weights"``,
    ``"table"`` (the labelled table and its regions at any ``lam``). ``finish``, when set,
    is applied to the regions at certify time.
    ``check_params`` normalises and validates the parameters (a ``ValueError`` names
    the parameter); it must accept its own output (a saved file is re-checked).
    ``rank`` gives the order statistic a saved threshold must be (None: not
    rank-based). ``sides`` is ``ONE_SIDE`` or ``TWO_SIDES``.
    """

    name: str
    fn: RuleFn
    summary: str
    defaults: Mapping[str, Any] = field(default_factory=dict)
    check_params: Callable[[Mapping[str, Any]], dict[str, Any]] = _no_params
    rank: RankFn | None = None
    sides: tuple[str, ...] = ONE_SIDE
    needs: frozenset[str] = frozenset()
    lams: LamsFn = _default_lams
    #: Per-row thresholds from covariates (None: one threshold per group label).
    per_row: PerRow | None = None
    finish: FinishFn | None = None


RULES: dict[str, RuleSpec] = {}


def register_rule(spec: RuleSpec) -> RuleSpec:
    """Add (or replace) a rule; ``Calibrator(rule=spec.name)`` then reaches it."""
    RULES[spec.name] = spec
    return spec


def get_rule(name: str) -> RuleSpec:
    if name not in RULES:
        raise ValueError(f"unknown rule {name!r}; choose one of {', '.join(sorted(RULES))}")
    return RULES[name]


# ---- groupings --------------------------------------------------------------------
GroupFitFn = Callable[[GroundingTable, Mapping[str, Any]], dict[str, Any]]
GroupAssignFn = Callable[[GroundingTable, Mapping[str, Any]], NDArray[np.str_]]


@dataclass(frozen=True)
class Grouping:
    """A registered grouping: ``fit(table, params) -> params`` (learned values such as
    cut points added, JSON-safe) and ``assign(table, params) -> label per row``.
    ``check_params`` validates a saved ``groups`` entry (a ``ValueError`` names the
    parameter)."""

    kind: str
    fit: GroupFitFn
    assign: GroupAssignFn
    check_params: Callable[[Mapping[str, Any]], dict[str, Any]] = _no_params


GROUPINGS: dict[str, Grouping] = {}

#: The label of the one group of the ungrouped (marginal) rules.
ALL = "all"


def register_grouping(grouping: Grouping) -> Grouping:
    """Add (or replace) a grouping; ``Calibrator(groups=kind)`` then reaches it."""
    GROUPINGS[grouping.kind] = grouping
    return grouping


def get_grouping(kind: str) -> Grouping:
    if kind not in GROUPINGS:
        raise ValueError(f"unknown grouping {kind!r}; choose one of {', '.join(sorted(GROUPINGS))}")
    return GROUPINGS[kind]


def _all_check(params: Mapping[str, Any]) -> dict[str, Any]:
    if params:
        raise ValueError(f"grouping 'all' takes no parameters, got {', '.join(params)}")
    return {}


def _all_fit(table: GroundingTable, params: Mapping[str, Any]) -> dict[str, Any]:
    return _all_check(params)


def _all_assign(table: GroundingTable, params: Mapping[str, Any]) -> NDArray[np.str_]:
    return np.full(len(table), ALL)


register_grouping(Grouping(ALL, _all_fit, _all_assign, _all_check))


# ---- helpers shared by rules --------------------------------------------------------
def check_delta(params: Mapping[str, Any]) -> float:
    """``delta`` in (0, 1) as a float (a ``ValueError`` names it otherwise)."""
    d = params.get("delta")
    if isinstance(d, bool) or not isinstance(d, (int, float)) or not math.isfinite(d) \
            or not 0 < d < 1:
        raise ValueError(f"delta must be a number in (0, 1), got {d!r}")
    return float(d)
