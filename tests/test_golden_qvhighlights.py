"""Golden checks on the real QVHighlights val prediction files (read-only, never copied).

The only hard-coded numbers are the published ones: R1@0.5 / mIoU from
``data/INDEX.md`` (each file's PROVENANCE.md gives the same), the 1550 val rows, and
the 190 calibration units of the paper's 40/60 unit split with seed 42.
Set ``COVER_DATA_DIR`` to the folder holding ``qvhighlights/`` to run them elsewhere.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cover.calibrate.calibrator import Calibrator
from cover.data.join import attach_truth
from cover.data.splits import UnitSplit, split_by_unit
from cover.data.table import GroundingTable
from cover.errors import RowProblem
from cover.intervals import CONTAINMENT_ATOL
from cover.io.qvhighlights import Loaded, read_ground_truth, read_predictions
from cover.metrics import evaluate, point_iou
from cover.scores import compute_scores


def _data_dir() -> Path:
    env = os.environ.get("COVER_DATA_DIR")
    base = Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"
    return base / "qvhighlights"


QVH = _data_dir()
GT_FILE = "annotations/highlight_val_release.jsonl"
N_VAL = 1550
N_CAL_UNITS = 190  # split_by_unit(units, cal_frac=0.4, seed=42) on QVHighlights val

#: Published top-1 R1@0.5 and mIoU (percent, 2 decimals) from data/INDEX.md.
GOLDEN: dict[str, tuple[str, str]] = {
    "moment_detr/sample_val_preds.jsonl": ("53.94", "49.21"),
    "moment_detr/inference_hl_val_test_code_preds.jsonl": ("53.23", "48.52"),
    "qd_detr/video_checkpoint_best_hl_val_preds.jsonl": ("62.90", "57.59"),
    "qd_detr/audio_checkpoint_best_hl_val_preds.jsonl": ("63.74", "58.20"),
    "qd_detr/onlyclip_best_hl_val_preds.jsonl": ("60.58", "55.31"),
    "eatr/best_hl_val_preds.jsonl": ("60.90", "55.95"),
    "univtg/univtg_val_preds.jsonl": ("68.39", "62.19"),
    "vtg_gpt/infer_val.jsonl": ("59.03", "54.55"),
}
FILES = list(GOLDEN)
FAMILIES = ("norm", "sec", "sls")
ALPHA = 0.1
COVERAGE_BAND = (0.85, 0.96)


# ---------------------------------------------------------------------------------
# loading (cached: each file is read once per session)


@pytest.fixture(scope="module")
def qvh() -> Path:
    if not (QVH / GT_FILE).is_file():
        pytest.skip(f"QVHighlights data not found at {QVH} (set COVER_DATA_DIR)")
    return QVH


@dataclass(frozen=True)
class Case:
    rel: str
    preds: Loaded
    joined: GroundingTable
    problems: list[RowProblem]
    split: UnitSplit


@functools.cache
def _truth() -> Loaded:
    return read_ground_truth(QVH / GT_FILE)


@functools.cache
def _case(rel: str) -> Case:
    preds = read_predictions(QVH / rel)
    joined, problems = attach_truth(preds.table, _truth().table)
    return Case(rel, preds, joined, problems, split_by_unit(joined.units, cal_frac=0.4, seed=42))


@pytest.fixture(params=FILES, ids=[f.split("/")[0] + ":" + Path(f).stem for f in FILES])
def case(request: pytest.FixtureRequest, qvh: Path) -> Case:
    return _case(request.param)


def assert_rows_equal(got: Any, want: Any, qid: Any, what: str) -> None:
    """Per-row equality; on failure name the first differing qid and both values."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shapes {got.shape} vs {want.shape}"
    diff = np.flatnonzero(got != want)
    if diff.size:
        i = int(diff[0])
        pytest.fail(f"{what}: {diff.size} row(s) differ; first at qid={qid[i]}: "
                    f"got {got[i].tolist()!r}, expected {want[i].tolist()!r}")


def raw_top1(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """The file's own top-1 (before clipping to [0, T]) for each joined row."""
    t = case.preds.table
    pos = {q: i for i, q in enumerate(t.qid.tolist())}
    idx = np.array([pos[q] for q in case.joined.qid.tolist()], dtype=np.int64)
    return t.pred_start[idx], t.pred_end[idx]


# ---------------------------------------------------------------------------------
# reading and joining


def test_ground_truth_file(qvh: Path) -> None:
    g = _truth()
    assert len(g.table) == N_VAL
    assert g.problems == [] and g.rejected == {}
    assert len(set(g.table.qid.tolist())) == N_VAL


def test_reads_and_joins_every_row(case: Case) -> None:
    assert len(case.preds.table) == N_VAL
    assert case.preds.problems == [] and case.preds.rejected == {}
    assert len(case.joined) == N_VAL
    assert [p for p in case.problems if p.action != "clipped"] == []
    assert set(case.joined.qid.tolist()) == set(_truth().table.qid.tolist())
    assert np.isfinite(case.joined.duration).all()


def test_clipped_rows_are_exactly_the_predictions_outside_the_video(case: Case) -> None:
    s, e = raw_top1(case)
    t = case.joined.duration
    outside = np.isfinite(s) & ((s < 0) | (e > t))
    flagged = np.isin(case.joined.qid, [p.qid for p in case.problems if p.action == "clipped"])
    assert_rows_equal(flagged, outside, case.joined.qid, "clipped flag")


def _independent_top1_iou(case: Case) -> np.ndarray:
    """Plain-Python top-1 (max score, first on ties) IoU, max over the GT windows,
    straight from the parsed JSON records."""
    truth = {}
    with open(QVH / GT_FILE, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                rec = json.loads(line)
                truth[str(rec["qid"])] = rec["relevant_windows"]
    out = []
    for rec in case.preds.table.records if case.preds.table.records is not None else []:
        wins = rec.get("pred_relevant_windows") or []
        if not wins:
            out.append(0.0)
            continue
        best = max(range(len(wins)), key=lambda j: (wins[j][2] if len(wins[j]) > 2 else 0, -j))
        ps, pe = wins[best][0], wins[best][1]
        ious = []
        for ts, te in truth[str(rec["qid"])]:
            inter = max(0.0, min(pe, te) - max(ps, ts))
            union = (pe - ps) + (te - ts) - inter
            ious.append(inter / union if union > 0 else 0.0)
        out.append(max(ious))
    return np.asarray(out)


def test_published_r1_and_miou(case: Case) -> None:
    """Top-1 as the grounder wrote it (the published numbers do not clip to [0, T])."""
    s, e = raw_top1(case)
    iou = point_iou(replace(case.joined, pred_start=s, pred_end=e))
    r1_want, miou_want = GOLDEN[case.rel]
    assert f"{100 * np.mean(iou >= 0.5):.2f}" == r1_want
    assert f"{100 * np.mean(iou):.2f}" == miou_want


def test_point_iou_matches_an_independent_computation(case: Case) -> None:
    s, e = raw_top1(case)
    iou = point_iou(replace(case.joined, pred_start=s, pred_end=e))
    want = _independent_top1_iou(case)  # rows are in file order in both
    assert case.joined.qid.tolist() == case.preds.table.qid.tolist()
    close = np.isclose(iou, want, rtol=0, atol=1e-12)
    assert_rows_equal(close, np.ones_like(close), case.joined.qid, "top-1 IoU")


def test_clipping_changes_point_iou_only_on_clipped_rows(case: Case) -> None:
    s, e = raw_top1(case)
    raw = point_iou(replace(case.joined, pred_start=s, pred_end=e))
    joined = point_iou(case.joined)
    clipped = np.isin(case.joined.qid, [p.qid for p in case.problems if p.action == "clipped"])
    assert_rows_equal(np.where(clipped, raw, joined), raw, case.joined.qid,
                      "point IoU on an unclipped row")
    # R1@0.5 on the clipped table is still the published one
    r1_want, _ = GOLDEN[case.rel]
    assert f"{100 * np.mean(joined >= 0.5):.2f}" == r1_want


# ---------------------------------------------------------------------------------
# the paper's protocol: 40/60 unit split, seed 42, split conformal at alpha 0.1


def test_unit_split(case: Case) -> None:
    sp = case.split
    assert sp.n_units_calibration == N_CAL_UNITS
    units = case.joined.units
    assert not set(units[sp.calibration]) & set(units[sp.test])
    assert sp.n_units_calibration + sp.n_units_test == len(set(units.tolist()))
    # the split depends on the units only, not on which grounder produced the file
    first = _case(FILES[0])
    if first is not case:
        assert set(units[sp.calibration]) == set(first.joined.units[first.split.calibration])


@pytest.mark.parametrize("family", FAMILIES)
def test_calibrated_coverage(case: Case, family: str) -> None:
    pool = case.joined.take(case.split.calibration)
    test = case.joined.take(case.split.test)
    cal = Calibrator(score=family, alpha=ALPHA).fit(pool)
    assert cal.threshold_ is not None and np.isfinite(cal.threshold_)
    assert cal.n_ == len(pool)
    regions = cal.certify(test)
    ev = evaluate(regions, test)
    lo, hi = COVERAGE_BAND
    assert lo <= ev.marginal.coverage <= hi, (family, ev.marginal.coverage)

    # geometric coverage == score-based coverage, row by row and on average
    scores = compute_scores(test, family).values
    by_score = scores <= cal.threshold_
    assert_rows_equal(ev.covered, by_score, test.qid, f"{family}: covered vs score <= q")
    assert ev.marginal.coverage == float(np.mean(by_score))
    # and on the calibration pool, exactly k of n scores are <= q (up to ties)
    pool_scores = compute_scores(pool, family).values
    assert int(np.sum(pool_scores <= cal.threshold_)) >= cal.k_


def test_sls_rows_with_truth_beyond_the_signal(case: Case) -> None:
    t = case.joined
    scores = compute_scores(t, "sls")
    count = scores.counts()["beyond_signal"]
    assert isinstance(count, int) and count >= 0
    # direct: the truth envelope ends after the last clip of a present signal
    _, te = t.truth_envelope()
    direct = t.has_relevance & (te > t.relevance.lengths * t.clip + CONTAINMENT_ATOL)
    assert_rows_equal(scores.beyond_signal, direct, t.qid, "beyond-signal flag")
    assert count == int(direct.sum())
    # such rows can never be covered at a finite threshold
    assert np.isposinf(scores.values[direct]).all()
    pool = t.take(case.split.calibration)
    cal = Calibrator(score="sls", alpha=ALPHA).fit(pool)
    assert cal.counts_["beyond_signal"] == int(direct[case.split.calibration].sum())
    print(f"{t.source}: {count} SLS row(s) with truth beyond the signal")


# ---------------------------------------------------------------------------------
# acceptance: study 1 on every grounder tracks the target over the whole alpha grid


def test_coverage_validity_tracks_target_on_every_grounder(case: Case) -> None:
    """50 resamples of 50% of the pool, unit-level 40/60 split with seed 42: every
    (family, alpha) cell's mean coverage is within 0.07 of k/(n+1) and at most one
    cell per grounder leaves its reference band (docs/qvhighlights-coverage.md
    explains the three VTG-GPT cells that do)."""
    from cover.studies import Protocol, coverage_validity

    res = coverage_validity(case.joined, name=case.rel, protocol=Protocol())
    assert len(res.cells) == 18
    assert res.n_units_pool == N_CAL_UNITS
    worst = max(res.cells, key=lambda c: abs(c.coverage_mean - c.expected))
    assert abs(worst.coverage_mean - worst.expected) < 0.07, (worst.family, worst.alpha)
    outside = [(c.family, c.alpha) for c in res.cells if not c.within_band]
    assert len(outside) <= (3 if case.rel.startswith("vtg_gpt") else 0), outside
