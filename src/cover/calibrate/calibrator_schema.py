"""The calibrator file as a JSON Schema (draft 2020-12), for services in other languages.

``cover schema calibrator`` prints it. It is built from the same definitions the writer
(:func:`cover.calibrate.calibrator_file.to_document`) and the loader
(:func:`~cover.calibrate.calibrator_file.from_document`) use: the field list, the score
families and their scales, the targets, the count names, and the rule and grouping
registries (a rule registered by a plugin is in the schema of the process that
registered it), so the three cannot drift apart; the test suite checks every calibrator
it writes against it.

The schema checks structure: every field, its type, its allowed values and how fields
depend on one another where JSON Schema can say it (the score fixes the scale and
whether ``clip_seconds`` is given, and only ``sls`` may name its ``relevance`` source;
the rule fixes the shape of every group record and whether ranks ``k`` are integers or
null; the grouping ``all`` has the one group ``"all"``; ``fitted_on.qids`` is omitted,
as null, only past 5000 rows). A file that
passes it may still be refused by ``cover``, which also recomputes the ``sha256``
checksum, checks each rank ``k`` against ``n`` and ``alpha``, each threshold against the
range its score family allows, the group sizes against ``fitted_on.count``, the qids
against their digest and the parameters against the rule's own checks; the loader's
message names the field.
"""

from __future__ import annotations

from typing import Any

from cover.calibrate.calibrator_file import (
    COUNTS,
    FIELDS,
    OPTIONAL,
    SCALES,
    SCHEMA,
    SCHEMA_VERSION,
)
from cover.calibrate.registry import ALL, GROUPINGS, ONE_SIDE, RULES
from cover.data import fitted_on
from cover.data.relevance import RELEVANCE_SOURCES
from cover.scores import ALL_FAMILIES, TARGETS

DIALECT = "https://json-schema.org/draft/2020-12/schema"
#: ``alpha`` as :func:`~cover.calibrate.calibrator_fields.alpha_text` writes it: a
#: terminating decimal ("0.1", or "1E-7" below 1e-6, as Python's Decimal prints it) or
#: a fraction "p/q"; that it is exact and in (0, 1) is checked on load.
ALPHA_PATTERN = r"^(0\.[0-9]*[1-9]|[1-9](\.[0-9]*[1-9])?E-[0-9]+|[1-9][0-9]*/[1-9][0-9]*)$"
SHA256_PATTERN = "^[0-9a-f]{64}$"
#: What replaced a group's own threshold (:class:`cover.calibrate.registry.Fallback`).
FALLBACK_USED = ("pooled", "inf")


def _defs() -> dict[str, Any]:
    threshold = {"description": "a threshold: a number, or \"inf\" (never -inf or NaN)",
                 "anyOf": [{"type": "number"}, {"const": "inf"}]}
    return {
        "threshold": threshold,
        "rank": {"description": "1-based rank of the order statistic the threshold is "
                                "(k > n only with \"inf\"), null for rules not rank-based",
                 "type": ["integer", "null"], "minimum": 1},
        "side": {"type": "object", "required": ["value", "k"], "additionalProperties": False,
                 "properties": {"value": {"$ref": "#/$defs/threshold"},
                                "k": {"$ref": "#/$defs/rank"}}},
        "n": {"description": "calibration rows of the group", "type": "integer",
              "minimum": 1},
        "one_sided": {"description": "the group record of a one-parameter rule",
                      "type": "object", "required": ["n", "value", "k"],
                      "additionalProperties": False,
                      "properties": {"n": {"$ref": "#/$defs/n"},
                                     "value": {"$ref": "#/$defs/threshold"},
                                     "k": {"$ref": "#/$defs/rank"}}},
        "two_sided": {"description": "the group record of a per-boundary rule",
                      "type": "object", "required": ["n", "start", "end"],
                      "additionalProperties": False,
                      "properties": {"n": {"$ref": "#/$defs/n"},
                                     "start": {"$ref": "#/$defs/side"},
                                     "end": {"$ref": "#/$defs/side"}}},
    }


def _rule_clause(name: str) -> dict[str, Any]:
    """The group records ``rule`` writes: their shape, and ranks integer or null."""
    spec = RULES[name]
    record = "one_sided" if spec.sides == ONE_SIDE else "two_sided"
    k = {"type": "integer"} if spec.rank is not None else {"type": "null"}
    keyed = ({"properties": {"k": k}} if spec.sides == ONE_SIDE else
             {"properties": {side: {"properties": {"k": k}} for side in spec.sides}})
    return {"if": {"properties": {"rule": {"const": name}}, "required": ["rule"]},
            "then": {"properties": {"thresholds": {"additionalProperties": {
                "allOf": [{"$ref": f"#/$defs/{record}"}, keyed]}}}}}


def _score_clause(score: str) -> dict[str, Any]:
    """The score fixes the scale; only ``sls`` has a clip length."""
    clip = {"type": "number"} if score == "sls" else {"type": "null"}
    then: dict[str, Any] = {"scale": {"const": SCALES[score]}, "clip_seconds": clip}
    if score != "sls":
        then["relevance"] = False  # the relevance source is an SLS setting
    return {"if": {"properties": {"score": {"const": score}}, "required": ["score"]},
            "then": {"properties": then}}


def calibrator_schema() -> dict[str, Any]:
    """The JSON Schema of a calibrator file of :data:`SCHEMA_VERSION` (module docstring),
    from the registries and limits as they are when it is called."""
    keep = fitted_on.KEEP_QIDS_MAX
    props: dict[str, Any] = {
        "schema": {"const": SCHEMA},
        "schema_version": {"const": SCHEMA_VERSION},
        "created_by": {"description": "the COVER that wrote it, e.g. \"cover 0.1.0\"",
                       "type": "string"},
        "score": {"description": "score family", "enum": list(ALL_FAMILIES)},
        "scale": {"description": "what the threshold is a multiple of (fixed by the score)",
                  "enum": [SCALES[s] for s in ALL_FAMILIES]},
        "target": {"description": "what a region must cover", "enum": list(TARGETS)},
        "min_scale": {"description": "NORM/SIGMA scale floor, seconds", "type": "number",
                      "exclusiveMinimum": 0},
        "clip_seconds": {"description": "clip length of the relevance signal (sls only)",
                         "type": ["number", "null"], "exclusiveMinimum": 0},
        "alpha": {"description": "miscoverage level, exact text: \"0.1\", \"1/3\"",
                  "type": "string", "pattern": ALPHA_PATTERN},
        "rule": {"description": "calibration rule", "enum": sorted(RULES)},
        "params": {"description": "the rule's parameters in its normal form (defaults "
                                  "filled in, learned values added)", "type": "object"},
        "groups": {"description": "the grouping: its kind and fitted parameters",
                   "type": "object", "required": ["kind"],
                   "properties": {"kind": {"enum": sorted(GROUPINGS)}}},
        "thresholds": {"description": "one record per group label", "type": "object",
                       "minProperties": 1},
        "fallback": {"description": "groups whose own threshold was not used",
                     "type": "array", "items": {
                         "type": "object", "required": ["group", "reason", "used"],
                         "additionalProperties": False,
                         "properties": {"group": {"type": "string"},
                                        "reason": {"type": "string"},
                                        "used": {"enum": list(FALLBACK_USED)}}}},
        "counts": {"description": "rows of the calibration table by what happened to them",
                   "type": "object", "propertyNames": {"enum": list(COUNTS)},
                   "additionalProperties": {"type": "integer", "minimum": 0}},
        "fitted_on": {
            "description": "the calibration rows: count, sha256 of the sorted "
                           "newline-joined qids, and the qids (null past "
                           f"{keep} rows)",
            "type": "object", "required": ["count", "sha256", "qids"],
            "additionalProperties": False,
            "properties": {"count": {"type": "integer", "minimum": 1},
                           "sha256": {"type": "string", "pattern": SHA256_PATTERN},
                           "qids": {"type": ["array", "null"], "items": {"type": "string"}}},
            "if": {"properties": {"qids": {"type": "null"}}},
            "then": {"properties": {"count": {"minimum": keep + 1}}}},
        "calibration_scores": {
            "description": "optional (cover calibrate --keep-scores): per threshold group, "
                           "the sorted calibration scores (a sketch of ranked values past "
                           "5000 rows), so certify can write each row's conformal p-value",
            "type": "object", "additionalProperties": {
                "type": "object", "required": ["n", "values", "ranks"],
                "additionalProperties": False,
                "properties": {"n": {"type": "integer", "minimum": 1},
                               "values": {"type": "array", "items": {
                                   "type": ["number", "string"]}},
                               "ranks": {"type": ["array", "null"],
                                         "items": {"type": "integer", "minimum": 1}}}}},
        "relevance": {
            "description": "optional, sls only: where the relevance signal comes from "
                           "(absent: saliency, the grounder's own per-clip signal; "
                           "proposals: built from the scored predicted windows, "
                           "cover calibrate --relevance-from proposals)",
            "enum": list(RELEVANCE_SOURCES)},
        "sha256": {"description": "sha256 of the canonical JSON of every other field "
                                  "(sorted keys, no spaces): integrity, not a signature",
                   "type": "string", "pattern": SHA256_PATTERN},
    }
    only_all = {"if": {"properties": {"groups": {"properties": {"kind": {"const": ALL}}}}},
                "then": {"properties": {"groups": {"maxProperties": 1},
                                        "thresholds": {"propertyNames": {"const": ALL}}}}}
    return {
        "$schema": DIALECT,
        "$id": f"urn:cover-grounding:calibrator:{SCHEMA_VERSION}",
        "title": f"COVER calibrator file, schema version {SCHEMA_VERSION}",
        "description": "A fitted conformal calibrator written by `cover calibrate`. Beyond "
                       "this schema, cover checks the sha256 checksum, the ranks against n "
                       "and alpha, the threshold ranges and the group sizes on load.",
        "type": "object",
        "required": list(FIELDS),
        "additionalProperties": False,
        "properties": {k: props[k] for k in (*FIELDS, *OPTIONAL)},
        "allOf": [*(_score_clause(s) for s in ALL_FAMILIES),
                  *(_rule_clause(r) for r in sorted(RULES)), only_all],
        "$defs": _defs(),
    }
