"""A tampered calibrator is refused: each field edited with the checksum recomputed
names the field; version 1 files get a clear message; the extension registries work."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.calibrate import Calibrator
from cover.calibrate.calibrator_file import _digest
from cover.calibrate.registry import (
    GROUPINGS,
    RULES,
    Grouping,
    GroupThreshold,
    RuleFit,
    RuleInput,
    RuleSpec,
    Side,
    register_grouping,
    register_rule,
)
from cover.data.table import GroundingTable
from cover.errors import CalibratorFileError
from test_calibrator_file import make_table


def reseal(doc: dict[str, Any]) -> dict[str, Any]:
    body = {k: v for k, v in doc.items() if k != "sha256"}
    return {**body, "sha256": _digest(body)}


@pytest.fixture(scope="module")
def good() -> dict[str, Any]:
    return Calibrator(score="norm", alpha=0.1).fit(make_table(200, seed=1)).to_dict()


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        *head, last = path.split(".")
        d = doc
        for h in head:
            d = d[h]
        d[last] = value
    return edit


def _drop(path: str) -> Callable[[dict[str, Any]], None]:
    def edit(doc: dict[str, Any]) -> None:
        *head, last = path.split(".")
        d = doc
        for h in head:
            d = d[h]
        del d[last]
    return edit


TAMPER = [
    # (id, edit, field the message must name)
    ("threshold--inf", _set("thresholds.all.value", "-inf"), "thresholds.all.value"),
    ("threshold-nan", _set("thresholds.all.value", None), "thresholds.all.value"),
    ("threshold-text", _set("thresholds.all.value", "big"), "thresholds.all.value"),
    ("k-too-big", _set("thresholds.all.k", 250), "thresholds.all.k"),
    ("k-off-by-one", _set("thresholds.all.k", 182), "thresholds.all.k"),
    ("k-float", _set("thresholds.all.k", 3.7), "thresholds.all.k"),
    ("k-bool", _set("thresholds.all.k", True), "thresholds.all.k"),
    ("n-negative", _set("thresholds.all.n", -5), "thresholds.all.n"),
    ("n-zero", _set("thresholds.all.n", 0), "thresholds.all.n"),
    ("n-changed", _set("thresholds.all.n", 199), "thresholds.all.k"),
    ("alpha-without-k", _set("alpha", "0.2"), "thresholds.all.k"),
    ("alpha-range", _set("alpha", "1.5"), "alpha"),
    ("alpha-number", _set("alpha", 0.1), "alpha"),
    ("alpha-inexact", _set("alpha", "0.10"), "alpha"),
    ("score", _set("score", "bogus"), "score"),
    ("scale", _set("scale", "seconds"), "scale"),
    ("target", _set("target", "middle"), "target"),
    ("rule", _set("rule", "magic"), "rule"),
    ("params", _set("params", {"delta": 0.1}), "params"),
    ("groups-kind", _set("groups", {"kind": "nonsense"}), "groups"),
    ("groups-label", _set("thresholds", {"other": {"n": 200, "value": 1.0, "k": 181}}),
     "thresholds"),
    ("thresholds-empty", _set("thresholds", {}), "thresholds"),
    ("record-extra", _set("thresholds.all.start", 1.0), "thresholds.all"),
    ("min-scale", _set("min_scale", -1.0), "min_scale"),
    ("min-scale-bool", _set("min_scale", True), "min_scale"),
    ("clip-non-sls", _set("clip_seconds", 2.0), "clip_seconds"),
    ("fallback", _set("fallback", [{"group": "nope", "reason": "x", "used": "pooled"}]),
     "fallback[0]"),
    ("counts", _set("counts.rows", -1), "counts.rows"),
    ("counts-rows", _set("counts.rows", 150), "counts.rows"),
    ("counts-refused", _set("counts.refused", 500), "counts.refused"),
    ("fitted-count", _set("fitted_on.count", 0), "fitted_on.count"),
    ("fitted-sha", _set("fitted_on.sha256", "0" * 64), "fitted_on.sha256"),
    ("fitted-qids", _set("fitted_on.qids", None), "fitted_on.qids"),
    ("created-by", _set("created_by", 7), "created_by"),
    ("extra-field", _set("note", "hello"), "note"),
    ("missing-field", _drop("counts"), "counts"),
]


@pytest.mark.parametrize(("edit", "name"), [(e, n) for _, e, n in TAMPER],
                         ids=[i for i, _, _ in TAMPER])
def test_each_tampered_field_is_refused_by_name(edit: Callable[[dict[str, Any]], None],
                                                name: str, good: dict[str, Any],
                                                tmp_path: Path) -> None:
    doc = copy.deepcopy(good)
    edit(doc)
    p = tmp_path / "cal.json"
    p.write_text(json.dumps(reseal(doc)), encoding="utf-8")
    with pytest.raises(CalibratorFileError) as ei:
        Calibrator.load(p)
    msg = str(ei.value)
    assert str(p) in msg and f"field {name}:" in msg, msg


def test_schema_version_true_is_not_one(good: dict[str, Any], tmp_path: Path) -> None:
    p = tmp_path / "cal.json"
    p.write_text(json.dumps(reseal({**good, "schema_version": True})), encoding="utf-8")
    with pytest.raises(CalibratorFileError, match="version True"):
        Calibrator.load(p)


def test_version_one_file_is_refused_with_the_reason(tmp_path: Path) -> None:
    v1 = {"schema": "cover.calibrator", "schema_version": 1, "score": "norm", "alpha": "0.1",
          "rule": "split", "threshold": 1.0, "k": 9, "n_calibration": 9}
    p = tmp_path / "old.json"
    p.write_text(json.dumps(reseal(v1)), encoding="utf-8")
    with pytest.raises(CalibratorFileError, match=r"version 1.*re-run `cover calibrate`"):
        Calibrator.load(p)


def test_inf_with_k_beyond_n_is_accepted(tmp_path: Path) -> None:
    cal = Calibrator(score="sec", alpha=0.1)
    with pytest.warns(Warning):
        cal.fit(make_table(5, seed=3))
    doc = cal.to_dict()
    assert doc["thresholds"]["all"] == {"n": 5, "value": "inf", "k": 6}
    assert Calibrator.from_dict(doc).threshold_ == float("inf")
    bad = copy.deepcopy(doc)
    bad["thresholds"]["all"]["value"] = 3.0
    with pytest.raises(CalibratorFileError, match="k=6 > n=5 requires"):
        Calibrator.from_dict(reseal(bad))


def test_fitted_on_digest_and_qids() -> None:
    table = make_table(30, seed=4)
    cal = Calibrator(score="sec", alpha=0.2).fit(table)
    ids = sorted(str(q) for q in table.qid)
    assert cal.fitted_on_ == {"count": 30, "qids": ids,
                              "sha256": hashlib.sha256("\n".join(ids).encode()).hexdigest()}


def test_many_qids_keep_only_the_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    import cover.data.fitted_on as mod

    monkeypatch.setattr(mod, "KEEP_QIDS_MAX", 10)
    cal = Calibrator(score="sec", alpha=0.2).fit(make_table(30, seed=4))
    assert cal.fitted_on_ is not None and cal.fitted_on_["qids"] is None
    assert Calibrator.from_dict(cal.to_dict()).fitted_on_ == cal.fitted_on_


def test_save_is_atomic_and_refuses_an_input(tmp_path: Path) -> None:
    from cover.errors import OutputError

    cal = Calibrator(score="sec", alpha=0.2).fit(make_table(30, seed=4))
    p = tmp_path / "in.json"
    p.write_text("keep me", encoding="utf-8")
    with pytest.raises(OutputError):
        cal.save(p, inputs=[p])
    assert p.read_text(encoding="utf-8") == "keep me"


# ---- the extension points -----------------------------------------------------------
def _parity_fit(table: GroundingTable, params: Mapping[str, Any]) -> dict[str, Any]:
    return {"modulus": 2}


def _parity_assign(table: GroundingTable, params: Mapping[str, Any]) -> np.ndarray:
    return np.array([f"m{int(q) % params['modulus']}" for q in table.qid])


def _parity_check(params: Mapping[str, Any]) -> dict[str, Any]:
    if params != {"modulus": 2}:
        raise ValueError("modulus must be 2")
    return dict(params)


def _max_rule(data: RuleInput, alpha: Fraction, params: Mapping[str, Any]) -> RuleFit:
    out = {str(g): GroupThreshold(int((data.groups == g).sum()),
                                  {"both": Side(float(data.scores[data.groups == g].max()),
                                                None)})
           for g in np.unique(data.groups)}
    return RuleFit(out, report={"groups": len(out)})


@pytest.fixture
def registered() -> Any:
    register_grouping(Grouping("parity", _parity_fit, _parity_assign, _parity_check))
    register_rule(RuleSpec("max", _max_rule, "largest score per group"))
    yield
    GROUPINGS.pop("parity")
    RULES.pop("max")


def test_registered_rule_and_grouping_fit_save_load_certify(registered: None,
                                                            tmp_path: Path) -> None:
    table = make_table(40, seed=6)
    cal = Calibrator(score="sec", alpha=0.1, rule="max", groups="parity").fit(table)
    assert sorted(cal.thresholds_) == ["m0", "m1"] and cal.report_ == {"groups": 2}
    assert cal.threshold_ is None and cal.n_ == 40
    cal.save(tmp_path / "c.json")
    loaded = Calibrator.load(tmp_path / "c.json")
    assert loaded.thresholds_ == cal.thresholds_
    reg = loaded.certify(table)
    odd = np.array([int(q) % 2 == 1 for q in table.qid])
    assert np.all(reg.threshold[odd] == cal.thresholds_["m1"].sides["both"].value)
    assert np.all(reg.threshold[~odd] == cal.thresholds_["m0"].sides["both"].value)


def test_unseen_group_at_certify_is_a_clear_error(registered: None) -> None:
    table = make_table(40, seed=6)
    cal = Calibrator(score="sec", alpha=0.1, rule="max", groups="parity").fit(
        table.take(np.array([int(q) % 2 == 0 for q in table.qid])))
    with pytest.raises(ValueError, match=r"qid=1\).*group m1 \(parity\) was not seen"):
        cal.certify(table)


@pytest.mark.parametrize(("score", "rule"), [
    ("norm", "split"), ("sec", "bonferroni"), ("norm", "asymmetric"), ("sls", "rcps"),
    ("sec", "crc"), ("sigma", "split"), ("sigma", "gaussian"), ("sigma", "bonferroni")])
def test_every_rule_saves_loads_and_saves_the_same_document(score: str, rule: str,
                                                           tmp_path: Path) -> None:
    from dataclasses import replace

    table = make_table(120, seed=8)
    rng = np.random.default_rng(8)
    table = replace(table, start_std=rng.uniform(1, 5, 120), end_std=rng.uniform(1, 5, 120))
    cal = Calibrator(score=score, alpha=0.2, rule=rule).fit(table)
    cal.save(tmp_path / "c.json")
    loaded = Calibrator.load(tmp_path / "c.json")
    assert loaded.to_dict() == cal.to_dict()
    a, b = cal.certify(table), loaded.certify(table)
    assert np.array_equal(a.intervals.starts, b.intervals.starts)
    assert np.array_equal(a.intervals.ends, b.intervals.ends)


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(st.lists(st.text(max_size=6), max_size=30))
def test_fitted_on_sorts_text_arrays_as_python_does(qids) -> None:
    """The numpy sort of a text array gives the digest of Python's sorted()."""
    from cover.data.fitted_on import fitted_on

    arr = np.asarray(qids, dtype=str) if qids else np.empty(0, dtype="<U1")
    assert fitted_on(arr) == fitted_on([str(q) for q in arr.tolist()])


# ---- thresholds outside the score family's range (checksum recomputed) ---------------
def _fitted(score: str, rule: str, **kw: Any) -> dict[str, Any]:
    from dataclasses import replace

    table = make_table(200, seed=1)
    rng = np.random.default_rng(1)
    table = replace(table, start_std=rng.uniform(1, 5, 200), end_std=rng.uniform(1, 5, 200))
    return Calibrator(score=score, rule=rule, alpha=0.1, **kw).fit(table).to_dict()


def _first_group(doc: dict[str, Any]) -> str:
    return sorted(doc["thresholds"])[0]


@pytest.mark.parametrize(("score", "rule", "kw", "side", "bad", "allowed"), [
    ("norm", "split", {}, "", -100, ">= -0.5"),
    ("norm", "split", {}, "", -1e6, ">= -0.5"),
    ("norm", "split", {}, "", -0.5000001, ">= -0.5"),
    ("norm", "rcps", {}, "", -100, ">= -0.5"),
    ("norm", "crc", {}, "", -1e6, ">= -0.5"),
    ("norm", "mondrian", {"groups": "pred_length"}, "", -100, ">= -0.5"),
    ("norm", "buckets", {"groups": "duration"}, "", -100, ">= -0.5"),
    ("norm", "asymmetric", {}, "", -100, ">= -0.5"),
    ("norm", "bonferroni", {}, "start", -100, "start.value + end.value >= -1"),
    ("norm", "bonferroni", {}, "end", -1e6, "start.value + end.value >= -1"),
    ("sigma", "gaussian", {}, "", -100, "is not z = 1.64485"),
    ("sigma", "gaussian", {}, "", 1.7, "is not z = 1.64485"),
])
def test_threshold_below_the_family_range_is_refused_by_name(
        score: str, rule: str, kw: dict[str, Any], side: str, bad: float, allowed: str,
        tmp_path: Path) -> None:
    """A finite threshold no score of the family can reach (every region empty) is
    refused on load, naming the field and the allowed range."""
    doc = copy.deepcopy(_fitted(score, rule, **kw))
    label = _first_group(doc)
    rec = doc["thresholds"][label]
    (rec[side] if side else rec)["value"] = bad
    if rule in ("mondrian", "buckets"):
        doc["params"].pop("pooled", None)  # the group's own value, not the fallback's
    p = tmp_path / "cal.json"
    p.write_text(json.dumps(reseal(doc)), encoding="utf-8")
    with pytest.raises(CalibratorFileError) as ei:
        Calibrator.load(p)
    msg = str(ei.value)
    name = f"thresholds.{label}" + ("" if side else ".value")
    assert str(p) in msg and f"field {name}:" in msg and allowed in msg, msg
    assert "{" not in msg and "Side(" not in msg, msg


def test_asymmetric_bound_follows_the_side_weights(tmp_path: Path) -> None:
    doc = copy.deepcopy(_fitted("norm", "asymmetric", params={"weights": {"start": 1.0,
                                                                           "end": 3.0}}))
    doc["thresholds"]["all"]["value"] = -0.25  # -1/(1 + 3): the lowest
    Calibrator.from_dict(reseal(doc))
    doc["thresholds"]["all"]["value"] = -0.26
    with pytest.raises(CalibratorFileError,
                       match=r"field thresholds\.all\.value: -0\.26 is below -0\.25, "
                             r"-1/\(w_s \+ w_e\)"):
        Calibrator.from_dict(reseal(doc))


def test_pooled_fallback_threshold_is_checked(tmp_path: Path) -> None:
    doc = copy.deepcopy(_fitted("norm", "mondrian", groups="pred_length"))
    assert "pooled" in doc["params"]
    doc["params"]["pooled"]["value"] = -100
    with pytest.raises(CalibratorFileError, match=r"field params\.pooled\.value: -100 is "
                                                  r"below -0\.5"):
        Calibrator.from_dict(reseal(doc))


@pytest.mark.parametrize("score", ["sec", "sls", "sigma"])
def test_families_bounded_only_by_the_data_load_any_finite_threshold(score: str) -> None:
    """SEC (>= -T/2), SIGMA and SLS (any relevance range) have no bound the file holds:
    the rows whose region is empty are rejected when certified (tests/test_regions.py)."""
    doc = copy.deepcopy(_fitted(score, "split"))
    doc["thresholds"]["all"]["value"] = -1e6
    assert Calibrator.from_dict(reseal(doc)).threshold_ == -1e6


def test_lowest_norm_threshold_is_accepted() -> None:
    doc = copy.deepcopy(_fitted("norm", "bonferroni"))
    doc["thresholds"]["all"]["start"]["value"] = 2.0
    doc["thresholds"]["all"]["end"]["value"] = -3.0  # sum -1: a point for the longest
    Calibrator.from_dict(reseal(doc))
    doc = copy.deepcopy(_fitted("norm", "split"))
    doc["thresholds"]["all"]["value"] = -0.5
    assert Calibrator.from_dict(reseal(doc)).threshold_ == -0.5


# ---- schema_version, counts, gzip ------------------------------------------------------
def test_schema_version_float_is_refused_by_name(good: dict[str, Any], tmp_path: Path) -> None:
    p = tmp_path / "cal.json"
    p.write_text(json.dumps(reseal({**good, "schema_version": 2.0})), encoding="utf-8")
    with pytest.raises(CalibratorFileError,
                       match=r"cal\.json: invalid calibrator field schema_version: 2\.0 is "
                             r"not the integer 2$"):
        Calibrator.load(p)


def test_unknown_count_is_refused_by_name(good: dict[str, Any]) -> None:
    from cover.calibrate.calibrator_file import COUNTS

    assert tuple(good["counts"]) == COUNTS  # the writer's keys are the known ones
    doc = copy.deepcopy(good)
    doc["counts"]["bogus"] = 3
    with pytest.raises(CalibratorFileError, match=r"field counts\.bogus: is not a count; "
                                                  r"counts are rows, refused"):
        Calibrator.from_dict(reseal(doc))


def test_gzip_calibrator_is_read_and_a_damaged_one_named(good: dict[str, Any],
                                                         tmp_path: Path) -> None:
    import gzip

    p = tmp_path / "cal.json"  # gzip whatever the name
    p.write_bytes(gzip.compress(json.dumps(good).encode()))
    assert Calibrator.load(p).to_dict() == good
    bad = tmp_path / "cut.json.gz"
    bad.write_bytes(gzip.compress(json.dumps(good).encode())[:40])
    with pytest.raises(CalibratorFileError) as ei:
        Calibrator.load(bad)
    assert str(ei.value) == (f"{bad}: corrupt calibrator file (a damaged or truncated gzip "
                             "file)")


def test_non_utf8_calibrator_names_file_and_byte(tmp_path: Path) -> None:
    p = tmp_path / "cal.json"
    p.write_bytes(b'{"schema": "caf\xe9"}')
    with pytest.raises(CalibratorFileError) as ei:
        Calibrator.load(p)
    assert str(ei.value) == (f"{p}: corrupt calibrator file (not UTF-8 text: byte 0xe9 at "
                             "offset 15)")


# ---- the relevance source of an SLS calibrator -------------------------------------------

def proposals_table(n: int = 120, seed: int = 3) -> GroundingTable:
    """A labelled table with three scored windows a row and a saliency signal that
    says something else (noise), so the two relevance sources give other thresholds."""
    from dataclasses import replace

    from cover.ragged import Ragged

    t = make_table(n, seed=seed)
    rng = np.random.default_rng(seed)
    ps, pe, T = t.pred_start, t.pred_end, t.duration
    other = rng.uniform(0, T - 5)
    w = np.stack([np.stack([ps, pe, np.full(n, 0.9)], axis=1),
                  np.stack([np.maximum(ps - 10, 0), ps, np.full(n, 0.5)], axis=1),
                  np.stack([other, other + 5, rng.uniform(0.1, 0.4, n)], axis=1)], axis=1)
    return replace(t, pred_windows=Ragged(w.reshape(-1, 3), np.arange(0, 3 * n + 1, 3)),
                   relevance=Ragged(rng.normal(size=t.relevance.values.size),
                                    t.relevance.offsets))


def test_proposals_calibrator_records_its_source_and_certifies_on_it(tmp_path: Path) -> None:
    from cover.data.relevance import rebuild_relevance

    table = proposals_table()
    cal = Calibrator(score="sls", alpha=0.2, relevance="proposals").fit(table)
    built = rebuild_relevance(table)
    same = Calibrator(score="sls", alpha=0.2).fit(built)  # the study's fit of that table
    assert cal.threshold_ == same.threshold_
    assert cal.threshold_ != Calibrator(score="sls", alpha=0.2).fit(table).threshold_
    doc = cal.to_dict()
    assert doc["relevance"] == "proposals"
    (tmp_path / "cal.json").write_text(json.dumps(doc))
    back = Calibrator.load(tmp_path / "cal.json")
    assert back.relevance == "proposals" and back.to_dict() == doc
    # certify builds the signal from the windows whatever saliency the rows carry
    a, b = back.certify(table), same.certify(built)
    assert a.intervals.to_lists() == b.intervals.to_lists()


@pytest.mark.parametrize("score", ["norm", "sec", "sls"])
def test_a_saliency_or_interval_calibrator_writes_no_relevance_key(score: str) -> None:
    """NORM/SEC files and SLS files on saliency keep their bytes: no new key, and a file
    without the key reads as saliency (every file written before the key existed)."""
    doc = Calibrator(score=score, alpha=0.2).fit(make_table(120, seed=8)).to_dict()
    assert "relevance" not in doc
    assert Calibrator.from_dict(doc).relevance == "saliency"


@pytest.mark.parametrize(("edit", "message"), [
    ({"relevance": "saliency-ish"}, 'field relevance: "saliency-ish" is not one of saliency, '
                                    "proposals"),
    ({"relevance": 1}, "field relevance: 1 is not one of"),
])
def test_a_bad_relevance_value_is_refused_by_name(edit: dict[str, Any], message: str) -> None:
    doc = Calibrator(score="sls", alpha=0.2).fit(make_table(120, seed=8)).to_dict()
    with pytest.raises(CalibratorFileError, match=re.escape(message)):
        Calibrator.from_dict(reseal({**doc, **edit}))


def test_relevance_on_an_interval_calibrator_is_refused() -> None:
    from test_calibrator_file import _schema_errors

    doc = reseal({**Calibrator(score="norm", alpha=0.2).fit(make_table(120, seed=8)
                                                            ).to_dict(),
                  "relevance": "proposals"})
    with pytest.raises(CalibratorFileError,
                       match="field relevance: applies to score sls only, not norm"):
        Calibrator.from_dict(doc)
    assert _schema_errors(doc)  # the schema says so too
    with pytest.raises(ValueError, match="applies to score 'sls' only"):
        Calibrator(score="sec", relevance="proposals")
    with pytest.raises(ValueError, match="relevance must be one of saliency, proposals"):
        Calibrator(score="sls", relevance="windows")


def test_a_proposals_calibrator_is_schema_valid() -> None:
    from test_calibrator_file import _schema_errors

    doc = Calibrator(score="sls", alpha=0.2, relevance="proposals").fit(
        proposals_table()).to_dict()
    assert _schema_errors(doc) == []
