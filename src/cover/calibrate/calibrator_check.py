"""A calibrator document checked field by field, and the fields it has.

Every field of :data:`FIELDS` must be there and no field beyond them and
:data:`OPTIONAL`; each is checked against its type and against the others (the score
fixes the scale and whether ``clip_seconds`` is given, the rule its parameters' normal
form and each group record, the grouping its labels, ``fitted_on`` the counts and the
group sizes). A failure is a :class:`~cover.calibrate.calibrator_fields.BadField`
naming the field, which :func:`cover.calibrate.calibrator_file.from_document` turns into
the file's error. The file's layout and its checksum are
:mod:`cover.calibrate.calibrator_file`'s.
"""

from __future__ import annotations

import json
from typing import Any

from cover.calibrate.calibrator_fields import (
    BadField,
    alpha_field,
    dict_field,
    fitted_on_field,
    int_field,
    positive_field,
    relevance_field,
    str_field,
    threshold_range,
    thresholds_field,
)
from cover.calibrate.registry import ALL, Fallback, get_grouping, get_rule
from cover.scores import ALL_FAMILIES, TARGETS

SCALES = {"norm": "predicted_length", "sec": "seconds", "sls": "relevance",
          "sigma": "reported_std"}
FIELDS = ("schema", "schema_version", "created_by", "score", "scale", "target", "min_scale",
          "clip_seconds", "alpha", "rule", "params", "groups", "thresholds", "fallback",
          "counts", "fitted_on", "sha256")
#: Fields written only when set (the calibration scores behind per-row p-values).
OPTIONAL = ("calibration_scores", "relevance")
#: The keys of ``counts`` (:meth:`cover.scores.Scores.counts`).
COUNTS = ("rows", "refused", "min_scale_floored", "beyond_signal")


def check_document(doc: dict[str, Any]) -> dict[str, Any]:
    """Every field of ``doc`` against its type and the others; returns the parsed values
    (a :class:`BadField` naming the first field that fails)."""
    missing = [f for f in FIELDS if f not in doc]
    if missing:
        raise BadField(missing[0], "is missing")
    extra = sorted(set(doc) - set(FIELDS) - set(OPTIONAL))
    if extra:
        raise BadField(extra[0], "is not a calibrator field")
    str_field(doc["created_by"], "created_by")
    score = str_field(doc["score"], "score", ALL_FAMILIES)
    if doc["scale"] != SCALES[score]:
        raise BadField("scale", f"{json.dumps(doc['scale'])} is not {SCALES[score]!r}, the scale "
                   f"of score {score}")
    target = str_field(doc["target"], "target", TARGETS)
    min_scale = positive_field(doc["min_scale"], "min_scale")
    clip = positive_field(doc["clip_seconds"], "clip_seconds", allow_none=score != "sls")
    if score != "sls" and clip is not None:
        raise BadField("clip_seconds", f"must be null for score {score}")
    alpha = alpha_field(doc["alpha"])
    rule = str_field(doc["rule"], "rule")
    try:
        spec = get_rule(rule)
    except ValueError as exc:
        raise BadField("rule", str(exc)) from None
    raw_params = dict_field(doc["params"], "params")
    try:
        params = spec.check_params(raw_params)
    except ValueError as exc:
        raise BadField("params", str(exc)) from None
    if params != raw_params:
        raise BadField("params", f"{json.dumps(raw_params)} is not in the rule's normal form "
                   f"{json.dumps(params)}")
    groups = dict_field(doc["groups"], "groups")
    kind = str_field(groups.get("kind"), "groups.kind")
    gparams = {k: v for k, v in groups.items() if k != "kind"}
    try:
        gparams = get_grouping(kind).check_params(gparams)
    except ValueError as exc:
        raise BadField("groups", str(exc)) from None
    thresholds = thresholds_field(doc, alpha, rule, params)
    threshold_range(score, rule, alpha, params, thresholds)
    if kind == ALL and set(thresholds) != {ALL}:
        raise BadField("thresholds", f"grouping 'all' has the one group {ALL!r}")
    fallback = []
    for i, f in enumerate(doc["fallback"] if isinstance(doc["fallback"], list) else [None]):
        entry = dict_field(f, f"fallback[{i}]")
        if set(entry) != {"group", "reason", "used"} or entry["group"] not in thresholds \
                or entry["used"] not in ("pooled", "inf") or not isinstance(entry["reason"], str):
            raise BadField(f"fallback[{i}]", "needs group (a known label), reason and used "
                       "(pooled or inf)")
        fallback.append(Fallback(entry["group"], entry["reason"], entry["used"]))
    counts = dict_field(doc["counts"], "counts")
    for key, v in counts.items():
        if key not in COUNTS:
            raise BadField(f"counts.{key}", f"is not a count; counts are {', '.join(COUNTS)}")
        int_field(v, f"counts.{key}", 0)
    fo = fitted_on_field(doc["fitted_on"])
    if counts.get("rows", fo["count"]) != fo["count"]:
        raise BadField("counts.rows",
                       f"{counts['rows']} differs from fitted_on.count {fo['count']}")
    for key, v in counts.items():
        if v > fo["count"]:
            raise BadField(f"counts.{key}", f"{v} is more than the {fo['count']} rows fitted on")
    held_out = params.get("fold_rows", 0)
    used = sum(r.n for r in thresholds.values()) + held_out
    if used != fo["count"]:
        raise BadField("thresholds", f"group sizes n add up to {used} rows (with {held_out} held "
                   f"out), but the calibrator was fitted on {fo['count']}")
    if spec.per_row is not None:
        try:
            spec.per_row.check(params, thresholds, fo["count"], float(alpha))
        except ValueError as exc:
            raise BadField("params", str(exc)) from None
    relevance = relevance_field(doc, score)
    sketch = None
    if "calibration_scores" in doc:
        from cover.calibrate.pvalues import sketch_field

        sketch = sketch_field(doc["calibration_scores"], thresholds)
    return {"sketch": sketch, "relevance": relevance, "score": score, "target": target,
            "min_scale": min_scale, "clip": clip,
            "alpha": alpha, "rule": rule, "params": params, "kind": kind, "gparams": gparams,
            "thresholds": thresholds, "fallback": fallback, "counts": dict(counts),
            "fitted_on": fo}
