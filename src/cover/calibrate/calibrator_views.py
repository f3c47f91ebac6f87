"""What a fitted :class:`cover.calibrate.calibrator.Calibrator` shows: the one-group,
one-parameter attributes of split conformal (``threshold_``, ``k_``, ``n_``), the
start/end widening ratio of per-boundary rules, ``k/(n+1)``, whether it is fitted, its
alpha as a fraction, its sides and readable lines."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from cover.calibrate.registry import Fallback, GroupThreshold, RuleSpec


class FittedViews:
    """Read-only views of the fitted state (the Calibrator dataclass holds the fields)."""

    thresholds_: dict[str, GroupThreshold]
    params_: dict[str, Any]
    fallback_: list[Fallback]
    report_: dict[str, Any]
    _spec: RuleSpec
    _alpha: Fraction
    rule: str
    groups: str

    def _require_fitted(self) -> None:
        if not self.thresholds_:
            raise RuntimeError("this Calibrator is not fitted: call fit(table) or load(path)")

    @property
    def fitted(self) -> bool:
        return bool(self.thresholds_)

    @property
    def alpha_fraction(self) -> Fraction:
        return self._alpha

    @property
    def sides(self) -> tuple[str, ...]:
        return self._spec.sides

    def _single(self) -> tuple[float, int | None, int] | None:
        if len(self.thresholds_) != 1:
            return None
        rec = next(iter(self.thresholds_.values()))
        if "both" not in rec.sides:
            return None
        return rec.sides["both"].value, rec.sides["both"].k, rec.n

    @property
    def threshold_(self) -> float | None:
        """The threshold of a one-group, one-parameter rule (None otherwise)."""
        one = self._single()
        return None if one is None else one[0]

    @property
    def k_(self) -> int | None:
        one = self._single()
        return None if one is None else one[1]

    @property
    def n_(self) -> int | None:
        """Calibration rows the thresholds were computed on (all groups)."""
        return sum(r.n for r in self.thresholds_.values()) if self.thresholds_ else None

    def group_lams(self) -> dict[str, tuple[float, float]]:
        """``(lam_start, lam_end)`` of each calibrated group, by group label (the two are
        equal for one-parameter rules)."""
        return {g: self._spec.lams(rec, self.params_) for g, rec in self.thresholds_.items()}

    @property
    def side_ratio_(self) -> float | None:
        """Calibrated start/end widening ratio ``lam_s / lam_e`` (per-boundary rules, one
        group): the paper's diagnostic of which boundary a grounder gets wrong."""
        if len(self.thresholds_) != 1 or not self._spec.needs & {"sides"}:
            return None
        s, e = self._spec.lams(next(iter(self.thresholds_.values())), self.params_)
        return s / e if e not in (0.0,) and math.isfinite(s) and math.isfinite(e) else None

    @property
    def expected_coverage(self) -> float:
        """``k / (n + 1)``: the mean realised coverage of split conformal (one group)."""
        self._require_fitted()
        one = self._single()
        if one is None or one[1] is None:
            raise ValueError(f"expected coverage k/(n+1) is defined for one rank threshold, "
                             f"not for rule {self.rule!r} with groups {self.groups!r}")
        k, n = one[1], one[2]
        return min(k, n + 1) / (n + 1)

    def describe(self) -> list[str]:
        """Human lines: the thresholds per group and side, fallbacks and the rule report."""
        self._require_fitted()
        out = []
        for label, rec in sorted(self.thresholds_.items()):
            sides = ", ".join(f"{side} {s.value:.6g}" + (f" (k={s.k})" if s.k is not None else "")
                              for side, s in rec.sides.items())
            out.append(f"group {label}: n={rec.n}: {sides}")
        out += [f"fallback: group {f.group} used {f.used} ({f.reason})" for f in self.fallback_]
        if self.side_ratio_ is not None:
            out.append(f"start/end widening ratio {self.side_ratio_:.4g}")
        out += [f"{k}: {v}" for k, v in self.report_.items()]
        return out
