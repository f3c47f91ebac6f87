"""The calibrator file's fields, each checked on load: types, ranges, the exact alpha
text, per-group thresholds, their ranks and the range the score family allows them,
and the calibration rows' digest (:mod:`cover.calibrate.calibrator_file` checks them
against one another). A wrong field is a :class:`BadField` naming it.

Threshold ranges (:func:`threshold_range`): a region widens the prediction ``[s, e]``
(length ``L``) to ``[s - lam_s*l_s, e + lam_e*l_e]``, empty when
``L + lam_s*l_s + lam_e*l_e < 0``. A threshold below every score the family can give
would certify nothing but empty regions, so it is refused where the file alone bounds
it:

* **NORM**: ``l = max(L, min_scale) >= L``, so the region is empty for every
  prediction when ``lam_s + lam_e < -1``; equivalently no score is below -1/2
  (``S = max(S_s, S_e) >= (S_s + S_e)/2 = ((e* - s*) - L)/(2l) >= -1/2``). One-parameter
  rules (split, rcps, crc, weighted, mondrian and buckets with their pooled fallback):
  ``value >= -1/2``; bonferroni: ``start + end >= -1`` (each side alone is unbounded:
  ``S_s >= -T/l``; the sum holds for the k-th smallest of each since ``2k > n``);
  asymmetric (``lam = q*w``): ``q >= -1/(w_s + w_e)``.
* **SEC** (``l = 1``): ``lam_s + lam_e >= -L >= -T``, **SIGMA**: ``>= -L/min_scale``, and
  **SLS** (``-lam`` a level of a relevance signal of any range) are bounded only by the
  data, which the file does not hold: any finite number or "inf" loads, and a row whose
  region comes out empty is rejected when certified (:mod:`cover.row_status`).
* **gaussian**: the threshold is ``z = Phi^-1(1 - alpha/2)`` for the file's alpha.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any

from cover._json import from_json_number
from cover.calibrate.registry import GroupThreshold, Side, get_rule
from cover.data.relevance import RELEVANCE_SOURCES, SALIENCY


def alpha_text(a: Fraction) -> str:
    """Exact text of ``alpha``: a decimal when it terminates ("0.1"), else "p/q". The
    division runs at the precision the expansion needs (``a = n / (2^i 5^j)`` has
    ``max(i, j)`` decimals), so a long expansion is never rounded."""
    d = a.denominator
    places = 0
    for p in (2, 5):
        k = 0
        while d % p == 0:
            d //= p
            k += 1
        places = max(places, k)
    if d == 1:
        with localcontext() as ctx:
            ctx.prec = len(str(abs(a.numerator))) + places + 1
            return str(Decimal(a.numerator) / Decimal(a.denominator))
    return f"{a.numerator}/{a.denominator}"


class BadField(Exception):
    """A field of the calibrator file that is wrong, by name."""

    def __init__(self, name: str, problem: str) -> None:
        super().__init__(f"field {name}: {problem}")


def int_field(x: Any, name: str, lo: int) -> int:
    """``x`` when it is an integer >= ``lo`` (a bool is not)."""
    if isinstance(x, bool) or not isinstance(x, int) or x < lo:
        raise BadField(name, f"{json.dumps(x)} is not an integer >= {lo}")
    return x


def str_field(x: Any, name: str, choices: tuple[str, ...] | None = None) -> str:
    """``x`` when it is text, and one of ``choices`` when given."""
    if not isinstance(x, str) or (choices is not None and x not in choices):
        want = f"one of {', '.join(choices)}" if choices else "text"
        raise BadField(name, f"{json.dumps(x)} is not {want}")
    return x


def dict_field(x: Any, name: str) -> dict[str, Any]:
    """``x`` when it is a JSON object."""
    if not isinstance(x, dict):
        raise BadField(name, f"{json.dumps(x)} is not an object")
    return x


def positive_field(x: Any, name: str, *, allow_none: bool = False) -> float | None:
    """``x`` as a float when it is a finite number > 0 (or None when allowed)."""
    if x is None and allow_none:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x <= 0:
        raise BadField(name, f"{json.dumps(x)} is not a finite number > 0")
    return float(x)


def alpha_field(x: Any) -> Fraction:
    """``alpha`` written exactly (:func:`alpha_text`) and in ``(0, 1)``."""
    try:
        a = Fraction(str_field(x, "alpha"))
    except (ValueError, ZeroDivisionError):
        raise BadField("alpha", f"{json.dumps(x)} is not a number") from None
    if not 0 < a < 1:
        raise BadField("alpha", f"{x} is not in (0, 1)")
    if alpha_text(a) != x:
        raise BadField("alpha", f"{json.dumps(x)} is not written exactly as {alpha_text(a)!r}")
    return a


def side_field(x: Any, name: str, n: int, want_k: int | None) -> Side:
    """One threshold ``{value, k}``: a number or "inf", and ``k`` the rank the rule
    gives for ``n`` (null for rules that are not rank-based; ``k > n`` only with "inf")."""
    entry = dict_field(x, name)
    if set(entry) != {"value", "k"}:
        raise BadField(name, "must hold exactly value and k")
    try:
        value = from_json_number(entry["value"])
    except ValueError as exc:
        raise BadField(f"{name}.value", str(exc)) from None
    if math.isnan(value) or value == -math.inf:
        raise BadField(f"{name}.value", f"{json.dumps(entry['value'])}: a threshold is a finite "
                   "number or 'inf'")
    k = entry["k"]
    if want_k is None:
        if k is not None:
            raise BadField(f"{name}.k", "must be null: the rule is not rank-based")
        return Side(value, None)
    k = int_field(k, f"{name}.k", 1)
    if k != want_k:
        raise BadField(f"{name}.k", f"{k} is not the rank {want_k} the rule gives for n={n}")
    if k > n and value != math.inf:
        raise BadField(f"{name}.value", f"k={k} > n={n} requires the threshold 'inf'")
    return Side(value, k)


def thresholds_field(doc: dict[str, Any], alpha: Fraction, rule: str, params: dict[str, Any]
                ) -> dict[str, GroupThreshold]:
    """The per-group records, each with the sides and ranks ``rule`` prescribes."""
    spec = get_rule(rule)
    table = dict_field(doc["thresholds"], "thresholds")
    if not table:
        raise BadField("thresholds", "no group")
    out: dict[str, GroupThreshold] = {}
    for label, raw in table.items():
        name = f"thresholds.{label}"
        rec = dict_field(raw, name)
        n = int_field(rec.get("n"), f"{name}.n", 1)
        sides: dict[str, Side] = {}
        if spec.sides == ("both",):
            if set(rec) != {"n", "value", "k"}:
                raise BadField(name, f"rule {rule} needs exactly n, value and k")
            want = None if spec.rank is None else spec.rank(n, alpha, params, "both")
            sides["both"] = side_field({"value": rec["value"], "k": rec["k"]}, name, n, want)
        else:
            if set(rec) != {"n", *spec.sides}:
                raise BadField(name, f"rule {rule} needs exactly n, {', '.join(spec.sides)}")
            for side in spec.sides:
                want = None if spec.rank is None else spec.rank(n, alpha, params, side)
                sides[side] = side_field(rec[side], f"{name}.{side}", n, want)
        out[label] = GroupThreshold(n, sides)
    return out


#: NORM's bound on ``lam_s + lam_e`` (see the module docstring).
NORM_LOWEST_SUM = -1.0


def _num(x: float) -> str:
    return json.dumps(x)


def threshold_range(score: str, rule: str, alpha: Fraction, params: dict[str, Any],
                    thresholds: dict[str, GroupThreshold]) -> None:
    """Each threshold inside the range its score family and rule allow (module
    docstring); a threshold outside it is a :class:`BadField` naming the field and the
    allowed range."""
    if rule == "gaussian":
        from cover.calibrate.uncertainty import nominal_z

        z = nominal_z(alpha)
        for label, rec in thresholds.items():
            v = rec.sides["both"].value
            if not math.isclose(v, z, rel_tol=1e-9):
                raise BadField(f"thresholds.{label}.value", f"{_num(v)} is not z = {_num(z)}, "
                               f"the nominal Gaussian multiplier Phi^-1(1 - alpha/2) for alpha "
                               f"{alpha_text(alpha)}")
    if score != "norm":
        return
    pooled = params.get("pooled")
    if isinstance(pooled, dict):
        v = from_json_number(pooled["value"])
        if v < NORM_LOWEST_SUM / 2:
            raise BadField("params.pooled.value", f"{json.dumps(pooled['value'])} is below "
                           "-0.5, the lowest NORM score; allowed: a number >= -0.5 or 'inf'")
    weights = params.get("weights") if rule == "asymmetric" else None
    for label, rec in thresholds.items():
        name = f"thresholds.{label}"
        if "both" in rec.sides:
            v = rec.sides["both"].value
            w = 2.0 if weights is None else weights["start"] + weights["end"]
            low = NORM_LOWEST_SUM / w
            if v < low:
                why = ("the lowest NORM score" if weights is None else
                       f"-1/(w_s + w_e) with params.weights {_num(weights['start'])}, "
                       f"{_num(weights['end'])}")
                raise BadField(f"{name}.value", f"{_num(v)} is below {low:.6g}, {why} (a "
                               "lower threshold certifies an empty region for every "
                               f"prediction); allowed: a number >= {low:.6g} or 'inf'")
        else:
            vs, ve = rec.sides["start"].value, rec.sides["end"].value
            if vs + ve < NORM_LOWEST_SUM:
                raise BadField(name, f"start.value + end.value = {_num(vs)} + {_num(ve)} is "
                               "below -1, the lowest sum of NORM per-side scores (a lower "
                               "sum certifies an empty region for every prediction); "
                               "allowed: start.value + end.value >= -1")


def fitted_on_field(x: Any) -> dict[str, Any]:
    """Count, sha256 and (up to ``KEEP_QIDS_MAX``) the sorted qids, all in agreement."""
    fo = dict_field(x, "fitted_on")
    if set(fo) != {"count", "sha256", "qids"}:
        raise BadField("fitted_on", "must hold exactly count, sha256 and qids")
    count = int_field(fo["count"], "fitted_on.count", 1)
    digest = str_field(fo["sha256"], "fitted_on.sha256")
    if not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise BadField("fitted_on.sha256", "is not a sha256 hex digest")
    qids = fo["qids"]
    from cover.data.fitted_on import KEEP_QIDS_MAX

    if qids is None:
        if count <= KEEP_QIDS_MAX:
            raise BadField("fitted_on.qids", f"missing although count {count} <= {KEEP_QIDS_MAX}")
    else:
        if not isinstance(qids, list) or not all(isinstance(q, str) for q in qids):
            raise BadField("fitted_on.qids", "is not a list of text qids")
        if len(qids) != count:
            raise BadField("fitted_on.qids", f"holds {len(qids)} qids, count says {count}")
        if qids != sorted(qids):
            raise BadField("fitted_on.qids", "are not sorted")
        if hashlib.sha256("\n".join(qids).encode("utf-8")).hexdigest() != digest:
            raise BadField("fitted_on.sha256", "does not match the qids")
    return {"count": count, "sha256": digest, "qids": qids}


def relevance_field(doc: dict[str, Any], score: str) -> str:
    """The optional ``relevance`` of a calibrator file: ``saliency`` when absent (every
    file written before the field, and every non-SLS file), else one of
    :data:`cover.data.relevance.RELEVANCE_SOURCES`, and only for score ``sls``."""
    if "relevance" not in doc:
        return SALIENCY
    relevance = str_field(doc["relevance"], "relevance", RELEVANCE_SOURCES)
    if score != "sls":
        raise BadField("relevance", f"applies to score sls only, not {score}")
    return relevance
