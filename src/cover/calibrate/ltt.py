"""Selective grounding by Learn-then-Test (``rule="ltt"``): a threshold and an abstention rule
with the miss rate among answered queries and the abstention rate both controlled.

Configurations (Angelopoulos, Bates, Candès, Jordan, Lei 2021, "Learn then Test") are pairs
``(lam, c)``: the region ``C_lam`` of the score family, and a query is **answered** when

* its region at ``lam`` covers at most ``max_share`` of the video (the width budget), and
* the grounder's score (its top window's score) is at least ``c``, a cutoff from the
  list ``score_cutoffs`` fixed before calibration (``-inf``, no cutoff, is always tried),

and is otherwise **abstained** (as are refusals: no usable prediction). With ``a`` the
answered flag and ``m = 1[S > lam]`` the miss flag, the two risks are

* ``R1(lam, c) = P(m = 1 and a = 1)`` (the joint miss), nonincreasing in ``lam``;
* ``R2(lam, c) = P(a = 0)`` (abstention), nondecreasing in ``lam``.

The answered-miss rate is the ratio ``R1 / (1 - R2)``; it is controlled through the
joint risk: ``R1 <= alpha * (1 - max_abstain)`` and ``R2 <= max_abstain`` give
``R1 / (1 - R2) <= alpha``. (This is the LTT treatment of a ratio risk by a product
bound; it spends the abstention budget in the first test even when fewer rows abstain.
The joint risk is chosen because it is monotone in ``lam``, so ``lam`` can range over
every real number, as in RCPS; the conditional risk is not monotone and would need a
``lam`` grid fixed before the data.)

The tests, the family-wise error procedure and the choice among the configurations that
pass are :mod:`cover.calibrate.ltt_select`'s (re-exported here); this module is the rule:
its parameters, the fit on a labelled table and the abstention at certify time.
"""

from __future__ import annotations

import math
import typing
import warnings
from collections.abc import Mapping
from dataclasses import replace
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.ltt_select import (  # noqa: F401  (re-exported here)
    MAX_CANDIDATES,
    Selection,
    budget_crossing,
    ltt_select,
)
from cover.calibrate.rcps import BOUNDS
from cover.calibrate.registry import (
    GroupThreshold,
    RuleFit,
    RuleInput,
    RuleSpec,
    Side,
    check_delta,
    register_rule,
)
from cover.data.table import GroundingTable
from cover.errors import CoverWarning
from cover.ragged import segment_max
from cover.regions import Regions, with_whole_video

DEFAULTS: dict[str, Any] = {"delta": 0.1, "bound": "binomial", "max_share": 0.5,
                            "max_abstain": 0.2, "score_cutoffs": []}
#: What the fit learns (saved with the parameters): the cutoff chosen and whether any passed.
LEARNED = ("score_cutoff", "found")


def _fraction_param(params: Mapping[str, Any], name: str, *, closed: bool) -> float:
    v = params.get(name)
    ok = (not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
          and 0 < v and (v <= 1 if closed else v < 1))
    if not ok:
        interval = "(0, 1]" if closed else "(0, 1)"
        raise ValueError(f"{name} must be a number in {interval}, got {v!r}")
    return float(typing.cast(float, v))


def check_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """``delta``, ``bound`` as RCPS; ``max_share`` in (0, 1]; ``max_abstain`` in (0, 1);
    ``score_cutoffs`` a list of finite numbers (sorted, unique); the learned
    ``score_cutoff`` (a number or null) and ``found`` (a boolean), both or neither."""
    extra = set(params) - set(DEFAULTS) - set(LEARNED)
    if extra:
        raise ValueError(f"unknown parameter(s) {', '.join(sorted(extra))}")
    bound = params.get("bound")
    if bound not in BOUNDS:
        raise ValueError(f"bound must be one of {', '.join(BOUNDS)}, got {bound!r}")
    cuts = params.get("score_cutoffs")
    if not isinstance(cuts, (list, tuple)) or not all(
            not isinstance(c, bool) and isinstance(c, (int, float)) and math.isfinite(c)
            for c in cuts):
        raise ValueError(f"score_cutoffs must be a list of finite numbers, got {cuts!r}")
    out: dict[str, Any] = {
        "delta": check_delta(params), "bound": bound,
        "max_share": _fraction_param(params, "max_share", closed=True),
        "max_abstain": _fraction_param(params, "max_abstain", closed=False),
        "score_cutoffs": sorted({float(c) for c in cuts})}
    learned = [k for k in LEARNED if k in params]
    if learned:
        if len(learned) != len(LEARNED):
            raise ValueError("score_cutoff and found are learned together")
        c, found = params["score_cutoff"], params["found"]
        if type(found) is not bool:
            raise ValueError(f"found must be true or false, got {found!r}")
        if c is not None and (isinstance(c, bool) or not isinstance(c, (int, float))
                              or not math.isfinite(c)):
            raise ValueError(f"score_cutoff must be a finite number or null, got {c!r}")
        out |= {"score_cutoff": None if c is None else float(c), "found": found}
    return out


def grounder_confidence(table: GroundingTable) -> NDArray[np.float64]:
    """The grounder's score of each row: its top window's score (``-inf`` without one)."""
    pw = table.pred_windows
    if pw is None or pw.values.size == 0:
        return np.full(len(table), -np.inf)
    vals = np.asarray(pw.values, dtype=np.float64).reshape(-1, 3)[:, 2]
    return segment_max(np.where(np.isnan(vals), -np.inf, vals), pw.offsets)


def region_share(regions: Regions) -> NDArray[np.float64]:
    """Each region's length as a share of its video."""
    return np.asarray(regions.length / regions.duration, dtype=np.float64)


def ltt_rule(data: RuleInput, alpha: Fraction, params: Mapping[str, Any]) -> RuleFit:
    """:func:`ltt_select` on the calibration rows (one group)."""
    if data.table is None or data.regions_at is None:
        raise ValueError("rule 'ltt' needs the whole labelled table: use fit()")
    if np.unique(data.groups).size != 1:
        raise ValueError("rule 'ltt' calibrates one group (groups='all')")
    table, regions_at = data.table, data.regions_at
    conf = grounder_confidence(table)
    if params["score_cutoffs"] and not np.isfinite(conf).any():
        raise ValueError("rule 'ltt': score_cutoffs need the grounder's window scores, and "
                         "these predictions carry none")
    refused = np.asarray(regions_at(np.zeros(len(table))).refused, dtype=bool)
    x = budget_crossing(lambda lam: region_share(regions_at(lam)), len(table),
                        params["max_share"])
    sel = ltt_select(data.scores, x, conf, refused, alpha, delta=params["delta"],
                     max_abstain=params["max_abstain"], cutoffs=params["score_cutoffs"],
                     bound=params["bound"],
                     lengths=lambda lam: regions_at(np.full(len(table), lam)).length)
    label = str(data.groups[0])
    report = {"controlled risks": (
        f"miss rate among answered queries <= {float(alpha):g} and abstention rate <= "
        f"{params['max_abstain']:g}, with confidence {1 - params['delta']:g} (Learn-then-Test: "
        f"fixed-sequence along the threshold per risk, Bonferroni over the 2 risks and "
        f"{1 + len(params['score_cutoffs'])} score cutoff(s); {params['bound']} bound)")}
    if sel.found:
        report["calibration rows"] = (f"answered-miss rate {sel.answered_miss:.4f}, "
                                      f"abstention rate {sel.abstention:.4f}")
    else:
        warnings.warn(
            f"alpha={float(alpha):g}, max_abstain={params['max_abstain']:g}, delta="
            f"{params['delta']:g}: no (threshold, score cutoff) configuration passed the risk "
            f"tests on the {data.n} calibration rows; every query will abstain",
            CoverWarning, stacklevel=2)
    return RuleFit({label: GroupThreshold(data.n, {"both": Side(sel.lam, None)})},
                   report=report, learned={"score_cutoff": sel.cutoff, "found": sel.found})


def abstain(regions: Regions, table: GroundingTable, params: Mapping[str, Any]) -> Regions:
    """The abstention rule at certify time: a row whose region exceeds ``max_share`` of the
    video, or whose grounder score is below the learned cutoff, abstains (every row when
    no configuration was found); its region becomes the whole video and its reason is
    kept (:mod:`cover.row_status`). Refusals stay refusals."""
    n = len(regions)
    reason = np.full(n, None, dtype=object)
    if not params.get("found", False):
        reason[:] = ("abstained: no (threshold, score cutoff) configuration passed the "
                     "risk tests on the calibration rows")
    else:
        share = region_share(regions)
        wide = share > params["max_share"]
        for i in np.flatnonzero(wide).tolist():
            reason[i] = (f"abstained: the region would cover {share[i]:.1%} of the video, "
                         f"above the width budget max_share {params['max_share']:g}")
        c = params.get("score_cutoff")
        if c is not None:
            conf = grounder_confidence(table)
            for i in np.flatnonzero(conf < c).tolist():
                reason[i] = (f"abstained: the grounder's score {conf[i]:.4g} is below the "
                             f"calibrated cutoff {c:.4g}")
    return mark_abstained(regions, reason)


def mark_abstained(regions: Regions, reasons: NDArray[np.object_]) -> Regions:
    """``regions`` with the rows that have a reason (not None) abstained: their region the
    whole video, their reason kept (a row that already abstained keeps its first reason).
    Refusals stay refusals."""
    reason = np.asarray(reasons, dtype=object).copy()
    if regions.abstain_reason is not None:
        before = regions.abstained
        reason[before] = regions.abstain_reason[before]
    reason[np.asarray(regions.refused, dtype=bool)] = None
    mask = np.asarray(reason != np.array(None), dtype=bool)  # elementwise, object array
    return replace(regions, intervals=with_whole_video(regions.intervals, mask, regions.duration),
                   abstain_reason=reason)


register_rule(RuleSpec(
    "ltt", ltt_rule, "answered-miss rate <= alpha and abstention <= max_abstain with "
    "confidence 1-delta (selective, Learn-then-Test)",
    defaults=DEFAULTS, check_params=check_params, needs=frozenset({"table"}),
    finish=abstain))
