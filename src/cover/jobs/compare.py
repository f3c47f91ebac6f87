"""The job behind ``cover compare``: two grounders (or two rules or score families on one
file) calibrated on the same calibration queries and certified on the same test queries;
paired differences of coverage, certified length, R1@IoU and mIoU, clustered by video.

Protocol: the queries both inputs have (intersection of qids; the others are dropped
and counted) are split once by source video (:func:`cover.data.splits.split_by_unit`,
``cal_frac`` / ``seed``); each side fits its calibrator on the calibration queries and
certifies the test queries; :func:`cover.studies.paired.paired_differences` does the
statistics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from cover.data.table import DEFAULT_CLIP_SECONDS, GroundingTable
from cover.errors import InputError, say
from cover.io.jsonl import OnError

#: R1 thresholds the comparison reports (the field's).
R1_AT: tuple[float, ...] = (0.3, 0.5, 0.7)


@dataclass(frozen=True)
class Side:
    """One side of the comparison: a prediction file and how it is certified."""

    preds: Path
    name: str
    score: str = "norm"
    rule: str = "split"
    groups: str = "all"


@dataclass(frozen=True)
class CompareSpec:
    """Everything ``cover compare`` was asked (paths, protocol, outputs)."""

    a: Side
    b: Side
    gt: Path
    alpha: str = "0.1"
    seed: int = 42
    cal_frac: float = 0.4
    min_scale: float = 1.0
    target: str = "envelope"
    clip: float = DEFAULT_CLIP_SECONDS
    strict: bool = False
    on_error: OnError = "raise"
    read_options: dict[str, Any] = field(default_factory=dict)
    json: Path | None = None
    html: Path | None = None


def sides(a: str, b: str | None, score: str, score_b: str | None, rule: str,
          rule_b: str | None, name_a: str | None = None, name_b: str | None = None
          ) -> tuple[Side, Side]:
    """Side A, and side B: file ``b``, or A again, with ``score_b`` / ``rule_b`` (default:
    A's; the same file with the same choices is an error). Each is named ``name_*``, else
    by its file as a study names it (:func:`cover.jobs.study_inputs.default_names`: its
    folder, with the file's stem when both files are in one), with score and rule
    added when the two names would agree."""
    from cover.jobs.calibrate_job import DEFAULT_GROUPS
    from cover.jobs.study_inputs import default_names

    path_b, score_b, rule_b = b or a, score_b or score, rule_b or rule
    if b is None and (score_b, rule_b) == (score, rule):
        raise InputError("nothing to compare: give a second prediction file B, or "
                         "--score-b / --rule-b for a second choice on A")
    files = [Path(a)] if b is None else [Path(a), Path(b)]
    named = default_names(files) * (3 - len(files))  # one file: its name on both sides
    shown_a, shown_b = (given or auto for given, auto in zip((name_a, name_b), named,
                                                              strict=True))
    if shown_a == shown_b and name_b is None:
        # One file with two choices (or two names given alike): say what differs.
        shown_a = f"{shown_a} {score.upper()}/{rule}"
        shown_b = f"{shown_b} {score_b.upper()}/{rule_b}"
    return (Side(Path(a), shown_a, score, rule, DEFAULT_GROUPS.get(rule, "all")),
            Side(Path(path_b), shown_b, score_b, rule_b, DEFAULT_GROUPS.get(rule_b, "all")))


def metric_specs(mean_duration: float) -> list[dict[str, Any]]:
    """The compared metrics, their units, what a difference can be, and which way is
    better (a length difference per query lies in ``[-T, T]``, so its mean in
    ``[-mean T, mean T]``). Coverage has no better direction: both sides aim at the
    same target, and more of it is bought with length."""
    out: list[dict[str, Any]] = [
        {"key": "coverage", "label": "coverage", "unit": "share of queries",
         "lower": -1.0, "upper": 1.0, "higher_is_better": None},
        {"key": "length_s", "label": "certified length", "unit": "s",
         "lower": -mean_duration, "upper": mean_duration, "higher_is_better": False},
        {"key": "length_frac", "label": "certified length, share of T", "unit": "share",
         "lower": -1.0, "upper": 1.0, "higher_is_better": False}]
    out += [{"key": f"R1@{t:g}", "label": f"R1@{t:g}", "unit": "%", "lower": -100.0,
             "upper": 100.0, "higher_is_better": True} for t in R1_AT]
    out.append({"key": "mIoU", "label": "mIoU", "unit": "%", "lower": -100.0, "upper": 100.0,
                "higher_is_better": True})
    return out


def common_queries(ta: GroundingTable, tb: GroundingTable, a: Path, b: Path
                   ) -> tuple[NDArray[np.int64], NDArray[np.int64], dict[str, Any]]:
    """Row indices of the qids both tables have (sorted by qid), and the counts of what
    was dropped. A qid whose video differs between the files is an error naming it."""
    for t, path in ((ta, a), (tb, b)):
        q, c = np.unique(t.qid, return_counts=True)
        if (c > 1).any():
            raise InputError(f"{path}: qid {q[c > 1][0]} appears {int(c.max())} times; "
                             "a comparison pairs one prediction per query")
    common, ia, ib = np.intersect1d(ta.qid, tb.qid, assume_unique=True, return_indices=True)
    bad = np.flatnonzero(ta.vid[ia] != tb.vid[ib])
    if bad.size:
        i = int(bad[0])
        raise InputError(f"qid {common[i]}: video {ta.vid[ia[i]]} in {a} but {tb.vid[ib[i]]} "
                         f"in {b}; the files do not describe the same queries")
    counts = {"rows_a": len(ta), "rows_b": len(tb), "common": int(common.size),
              "only_a": len(ta) - int(common.size), "only_b": len(tb) - int(common.size),
              "only_a_examples": np.setdiff1d(ta.qid, common)[:5].tolist(),
              "only_b_examples": np.setdiff1d(tb.qid, common)[:5].tolist()}
    return ia, ib, counts


def side_values(side: Side, pool: GroundingTable, test: GroundingTable, spec: CompareSpec
                ) -> tuple[NDArray[np.float64], dict[str, Any]]:
    """Per test query (rows) the compared metrics (columns, :func:`metric_specs` order) of
    ``side`` calibrated on ``pool``, and what its calibrator is."""
    from cover.bands import fitted_clusters
    from cover.calibrate import Calibrator
    from cover.grounding_metrics import grounding_metrics
    from cover.metrics import evaluate
    from cover.scores import require_family_input

    require_family_input(pool, side.score, str(side.preds))
    cal = Calibrator(score=side.score, alpha=spec.alpha,
                     min_scale=spec.min_scale, target=spec.target, rule=side.rule,
                     groups=side.groups).fit(pool)
    regions = cal.certify(test)
    # The bands cover evaluate tests a coverage against: the calibration band widened for
    # calibration queries sharing a video (one threshold: the split rule; a rule of several
    # keeps the Beta band, named so), plus this test sample's own noise.
    calibration = (cal.n_, cal.k_) if cal.k_ is not None and cal.n_ is not None else None
    ev = evaluate(regions, test, target=spec.target, base_iou=False, calibration=calibration,
                  calibration_clusters=fitted_clusters(cal, pool) if calibration else None)
    iou = grounding_metrics(test).iou
    cols: list[NDArray[Any]] = [ev.covered, regions.length, regions.length / test.duration]
    cols += [100.0 * (iou >= t) for t in R1_AT]
    cols.append(100.0 * iou)
    info: dict[str, Any] = {"preds": str(side.preds), "name": side.name, "score": side.score,
                            "rule": side.rule, "groups": side.groups,
                            "n_calibration": cal.n_, "thresholds": cal.describe()}
    if ev.reference is not None:
        r = ev.reference
        lo, hi = r["calibration_band"]
        info["calibration_band"] = {"expected": r["expected"], "lo": lo, "hi": hi,
                                    "k": cal.k_, "name": r["calibration_band_name"]}
        info["test_band"] = {"coverage": ev.marginal.coverage, "lo": r["band_lo"],
                             "hi": r["band_hi"]}
    return np.column_stack(cols).astype(np.float64), info


def compare(spec: CompareSpec, log: Any = None) -> dict[str, Any]:
    """Read, pair, split, calibrate both sides, and return the comparison as a JSON-ready
    document (:func:`cover.studies.paired.paired_rows` per metric)."""
    from cover.data.splits import split_by_unit
    from cover.jobs.validity import labelled
    from cover.studies.paired import paired_differences, paired_rows

    say = log or (lambda _m: None)
    kw = dict(clip=spec.clip, strict=spec.strict, on_error=spec.on_error, log=say,
              **spec.read_options)
    # each row named by its ground-truth qid: two grounders that name the same queries
    # otherwise (TGN's <vid>-<k>, Charades-STA's line numbers) pair by the query
    ta = labelled(spec.a.preds, spec.gt, truth_qids=True, **kw)
    same = Path(spec.b.preds).resolve() == Path(spec.a.preds).resolve()
    tb = ta if same else labelled(spec.b.preds, spec.gt, truth_qids=True, **kw)
    ia, ib, counts = common_queries(ta, tb, spec.a.preds, spec.b.preds)
    if counts["common"] < 2:
        raise InputError(f"{spec.a.preds} and {spec.b.preds} share {counts['common']} "
                         "labelled queries; a comparison needs at least 2")
    ta, tb = ta.take(ia), tb.take(ib)
    split = split_by_unit(ta.units, cal_frac=spec.cal_frac, seed=spec.seed)
    if not split.test.any() or not split.calibration.any():
        raise InputError(f"the {counts['common']} common queries come from "
                         f"{np.unique(ta.units).size} video(s): too few to split into "
                         "calibration and test (--cal-frac)")
    test_a = ta.take(split.test)
    va, info_a = side_values(spec.a, ta.take(split.calibration), test_a, spec)
    vb, info_b = side_values(spec.b, tb.take(split.calibration), tb.take(split.test), spec)
    specs = metric_specs(float(np.mean(test_a.duration)))
    p = paired_differences(va, vb, test_a.units, lower=[m["lower"] for m in specs],
                           upper=[m["upper"] for m in specs])
    names = (spec.a.name, spec.b.name)
    counts |= {"calibration": int(split.calibration.sum()), "test": int(split.test.sum()),
               "videos_calibration": split.n_units_calibration,
               "videos_test": split.n_units_test}
    return {"a": info_a, "b": info_b, "gt": str(spec.gt), "alpha": spec.alpha,
            "seed": spec.seed, "cal_frac": spec.cal_frac, "target": spec.target,
            "queries": counts, "level": p.level,
            "interval": "test band of the paired difference: normal approximation, "
                        "cluster-robust sd over source videos, clipped to the possible "
                        "range; conditional on the one calibration split",
            "metrics": paired_rows(p, specs, names)}


def run_compare(spec: CompareSpec) -> dict[str, Any]:
    """:func:`compare`, then the console table, the JSON and the HTML report."""
    from cover.io.output import strict_json, write_json
    from cover.report.compare import compare_html, compare_text, dropped_line

    doc = compare(spec, log=say)
    inputs = [spec.a.preds, spec.b.preds, spec.gt, spec.read_options.get("gt_durations")]
    say(dropped_line(doc))
    print(compare_text(doc))
    if spec.json is not None:
        write_json(spec.json, strict_json(doc), inputs=inputs)
        say(f"wrote {spec.json}")
    if spec.html is not None:
        from cover.io.output import write_text

        write_text(spec.html, compare_html(doc), inputs=inputs)
        say(f"wrote {spec.html}")
    return doc
