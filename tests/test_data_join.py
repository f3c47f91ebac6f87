"""Joining predictions with truth or durations, split units and unit-level splits.

A join never loses a row silently: each prediction row is kept or rejected with a
reason that names its file, line and qid; each ground-truth row without a prediction
is reported too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cover.data.join import attach_truth, clip_predictions, clip_truth, fill_durations
from cover.data.splits import resample_units, split_by_unit
from cover.data.table import GroundingTable
from cover.data.units import split_units
from cover.errors import InputError, RowProblem
from cover.intervals import Intervals
from cover.io.qvhighlights import read_durations, read_ground_truth, read_predictions
from cover.ragged import Ragged

# ---------------------------------------------------------------------------------
# helpers


def write_lines(path: Path, rows: list[Any]) -> Path:
    text = "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def pred(qid: Any, vid: str | None = None, windows: Any = None, **extra: Any) -> dict:
    row: dict[str, Any] = {"qid": qid, "vid": vid or f"vid{qid}_0.0_150.0"}
    row["pred_relevant_windows"] = [[10.0, 20.0, 0.9]] if windows is None else windows
    row.update(extra)
    return row


def gt(qid: Any, vid: str | None = None, windows: Any = None, duration: Any = 150,
       **extra: Any) -> dict:
    row: dict[str, Any] = {"qid": qid, "vid": vid or f"vid{qid}_0.0_150.0",
                           "duration": duration}
    row["relevant_windows"] = [[12, 30]] if windows is None else windows
    row.update(extra)
    return row


def load(tmp_path: Path, preds: list[Any], truth: list[Any]) -> tuple[Any, Any, Path, Path]:
    pp = write_lines(tmp_path / "preds.jsonl", preds)
    gp = write_lines(tmp_path / "gt.jsonl", truth)
    return read_predictions(pp), read_ground_truth(gp), pp, gp


def rejected(problems: list[RowProblem], path: Path | None = None) -> list[RowProblem]:
    return [p for p in problems
            if p.action == "rejected" and (path is None or p.path == str(path))]


def clipped(problems: list[RowProblem]) -> list[RowProblem]:
    return [p for p in problems if p.action == "clipped"]


def assert_join_accounted(joined: GroundingTable, problems: list[RowProblem],
                          preds: GroundingTable, gtab: GroundingTable) -> None:
    """Every prediction row is kept or rejected exactly once; every truth row is
    joined to a prediction (kept or rejected on the prediction side) or reported."""
    rej_pred = rejected(problems, Path(preds.source))
    kept_lines = sorted(int(x) for x in joined.line.tolist())
    rej_lines = sorted(p.line for p in rej_pred)
    assert len(kept_lines) + len(rej_lines) == len(preds)
    assert sorted(kept_lines + rej_lines) == sorted(int(x) for x in preds.line.tolist())
    rej_gt = rejected(problems, Path(gtab.source))
    in_preds = np.isin(gtab.qid, preds.qid)
    assert len(rej_gt) == int((~in_preds).sum())
    assert sorted(p.qid for p in rej_gt) == sorted(gtab.qid[~in_preds].tolist())
    for p in problems:
        assert p.line > 0 and p.qid is not None and p.problem


# ---------------------------------------------------------------------------------
# attach_truth


def test_attach_truth_takes_duration_and_windows_from_truth(tmp_path: Path) -> None:
    p, g, _, _ = load(
        tmp_path,
        [pred(3, windows=[[1, 9, 0.1], [40, 50, 0.8]]), pred(1), pred(2, windows=[])],
        [gt(1, windows=[[0, 5], [7, 9]], duration=120), gt(2), gt(3, duration=100.5)],
    )
    joined, problems = attach_truth(p.table, g.table)
    assert problems == []
    assert joined.qid.tolist() == ["3", "1", "2"]  # prediction order kept
    assert joined.duration.tolist() == [100.5, 120.0, 150.0]
    assert joined.truth is not None
    assert joined.truth.to_lists() == [[[12.0, 30.0]], [[0.0, 5.0], [7.0, 9.0]],
                                       [[12.0, 30.0]]]
    assert joined.pred_start.tolist()[:2] == [40.0, 10.0]
    assert joined.has_interval.tolist() == [True, True, False]  # refusal passes through
    assert joined.line.tolist() == [1, 2, 3]
    assert_join_accounted(joined, problems, p.table, g.table)


def test_int_and_text_qids_join(tmp_path: Path) -> None:
    p, g, _, _ = load(tmp_path, [pred("17", vid="v"), pred(4, vid="w")],
                      [gt(17, vid="v"), gt("4", vid="w")])
    joined, problems = attach_truth(p.table, g.table)
    assert problems == []
    assert joined.qid.tolist() == ["17", "4"]


def test_prediction_without_truth_is_rejected(tmp_path: Path) -> None:
    p, g, pp, gp = load(tmp_path, [pred(1), pred(2), pred(3)], [gt(1), gt(3)])
    joined, problems = attach_truth(p.table, g.table)
    assert joined.qid.tolist() == ["1", "3"]
    [prob] = rejected(problems)
    assert (prob.path, prob.line, prob.qid) == (str(pp), 2, "2")
    assert str(gp) in prob.problem and "no ground truth" in prob.problem
    assert f"{pp}:2 (qid=2)" in str(prob)
    assert_join_accounted(joined, problems, p.table, g.table)


def test_truth_without_prediction_is_reported(tmp_path: Path) -> None:
    p, g, pp, gp = load(tmp_path, [pred(1), pred(3)], [gt(1), gt(2), gt(3), gt(4)])
    joined, problems = attach_truth(p.table, g.table)
    assert joined.qid.tolist() == ["1", "3"]
    probs = rejected(problems)
    assert [(q.path, q.line, q.qid) for q in probs] == [(str(gp), 2, "2"), (str(gp), 4, "4")]
    assert all(str(pp) in q.problem and "no prediction" in q.problem for q in probs)
    assert_join_accounted(joined, problems, p.table, g.table)


def test_vid_mismatch_is_rejected_naming_both(tmp_path: Path) -> None:
    p, g, pp, _ = load(tmp_path, [pred(1, vid="a_0_150"), pred(2, vid="WRONG")],
                       [gt(1, vid="a_0_150"), gt(2, vid="b_0_150")])
    joined, problems = attach_truth(p.table, g.table)
    assert joined.qid.tolist() == ["1"]
    [prob] = rejected(problems)
    assert (prob.path, prob.line, prob.qid) == (str(pp), 2, "2")
    assert "WRONG" in prob.problem and "b_0_150" in prob.problem
    assert_join_accounted(joined, problems, p.table, g.table)


def test_query_mismatch_is_rejected(tmp_path: Path) -> None:
    p, g, pp, _ = load(
        tmp_path,
        [pred(1, query="a dog runs"), pred(2, query="a cat sleeps"), pred(3)],
        [gt(1, query="a dog runs"), gt(2, query="a cat jumps"), gt(3, query="anything")],
    )
    joined, problems = attach_truth(p.table, g.table)
    assert joined.qid.tolist() == ["1", "3"]  # a missing query on one side is fine
    [prob] = rejected(problems)
    assert (prob.path, prob.line, prob.qid) == (str(pp), 2, "2")
    assert "query" in prob.problem
    assert_join_accounted(joined, problems, p.table, g.table)


def test_duration_mismatch_is_rejected(tmp_path: Path) -> None:
    p, g, pp, _ = load(tmp_path, [pred(1, duration=150), pred(2, duration=140)],
                       [gt(1, duration=150), gt(2, duration=150)])
    joined, problems = attach_truth(p.table, g.table)
    assert joined.qid.tolist() == ["1"]
    [prob] = rejected(problems)
    assert (prob.path, prob.line, prob.qid) == (str(pp), 2, "2")
    assert prob.problem == ("duration differs from ground truth (140 s vs 150 s; tolerance "
                            "1e-06 s)")
    assert_join_accounted(joined, problems, p.table, g.table)


@pytest.mark.parametrize(
    ("window", "expect"),
    [([140, 160, 0.9], (140.0, 150.0)), ([-5, 10, 0.9], (0.0, 10.0)),
     ([-5, 170, 0.9], (0.0, 150.0))],
    ids=["past-end", "before-start", "both"],
)
def test_prediction_outside_video_is_clipped_and_counted(tmp_path: Path, window: list,
                                                         expect: tuple) -> None:
    p, g, pp, _ = load(tmp_path, [pred(1), pred(2, windows=[window]), pred(3, windows=[])],
                       [gt(1), gt(2), gt(3)])
    joined, problems = attach_truth(p.table, g.table)
    assert joined.qid.tolist() == ["1", "2", "3"]
    assert (joined.pred_start[1], joined.pred_end[1]) == expect
    assert (joined.pred_start[0], joined.pred_end[0]) == (10.0, 20.0)
    assert not joined.has_interval[2]
    assert rejected(problems) == []
    [prob] = clipped(problems)
    assert (prob.path, prob.line, prob.qid) == (str(pp), 2, "2")
    assert "clipped" in prob.problem

    joined_s, problems_s = attach_truth(p.table, g.table, strict=True)
    assert joined_s.qid.tolist() == ["1", "3"]
    [prob] = rejected(problems_s)
    assert (prob.line, prob.qid) == (2, "2") and "strict" in prob.problem
    assert clipped(problems_s) == []
    assert_join_accounted(joined_s, problems_s, p.table, g.table)


def test_prediction_exactly_on_bounds_is_not_clipped(tmp_path: Path) -> None:
    p, g, _, _ = load(tmp_path, [pred(1, windows=[[0, 150, 1.0]])], [gt(1)])
    joined, problems = attach_truth(p.table, g.table, strict=True)
    assert problems == [] and len(joined) == 1


@pytest.mark.parametrize(
    ("windows", "expect"),
    [([[140, 160]], [[140.0, 150.0]]), ([[-3, 8]], [[0.0, 8.0]]),
     ([[10, 20], [149, 200]], [[10.0, 20.0], [149.0, 150.0]]),
     ([[10, 20], [160, 170]], [[10.0, 20.0]])],
    ids=["past-end", "before-start", "second-window", "one-window-vanishes"],
)
def test_truth_partly_outside_video_is_clipped_and_counted(tmp_path: Path, windows: list,
                                                           expect: list) -> None:
    p, g, pp, gp = load(tmp_path, [pred(1), pred(2)], [gt(1), gt(2, windows=windows)])
    joined, problems = attach_truth(p.table, g.table)
    assert joined.qid.tolist() == ["1", "2"]
    assert joined.truth is not None
    assert joined.truth.row(1) == expect
    assert rejected(problems) == []
    [prob] = clipped(problems)
    assert (prob.path, prob.line, prob.qid) == (str(gp), 2, "2")  # where the window is
    assert "ground-truth" in prob.problem

    joined_s, problems_s = attach_truth(p.table, g.table, strict=True)
    assert joined_s.qid.tolist() == ["1"]
    [prob] = rejected(problems_s)
    assert (prob.path, prob.line, prob.qid) == (str(pp), 2, "2") and "strict" in prob.problem
    assert f"{gp}:2" in prob.problem  # and the ground-truth line that reaches outside
    assert_join_accounted(joined_s, problems_s, p.table, g.table)


@pytest.mark.parametrize("windows", [[[160, 170]], [[-20, -10]], [[151, 152], [-4, -1]]],
                         ids=["after", "before", "both-windows"])
def test_truth_entirely_outside_video_is_rejected(tmp_path: Path, windows: list) -> None:
    p, g, pp, _ = load(tmp_path, [pred(1), pred(2), pred(3)],
                       [gt(1), gt(2, windows=windows), gt(3)])
    joined, problems = attach_truth(p.table, g.table)
    assert joined.qid.tolist() == ["1", "3"]
    [prob] = rejected(problems)
    assert (prob.path, prob.line, prob.qid) == (str(pp), 2, "2")
    assert "outside" in prob.problem and f"{g.table.source}:" in prob.problem
    assert clipped(problems) == []
    assert joined.truth is not None and len(joined.truth) == 2
    assert_join_accounted(joined, problems, p.table, g.table)


def test_truth_and_prediction_both_clipped_on_one_row(tmp_path: Path) -> None:
    p, g, _, _ = load(tmp_path, [pred(1, windows=[[100, 200, 0.5]])],
                      [gt(1, windows=[[120, 180]])])
    joined, problems = attach_truth(p.table, g.table)
    assert len(joined) == 1
    assert sorted(q.problem for q in clipped(problems)) == [
        "ground-truth window clipped to [0, T]", "predicted interval clipped to [0, T]"]
    # each note points at the file and line the clipped value was read from
    where = {q.problem: (q.path, q.line) for q in clipped(problems)}
    assert where["ground-truth window clipped to [0, T]"] == (g.table.source, 1)
    assert where["predicted interval clipped to [0, T]"] == (p.table.source, 1)
    assert joined.pred_end[0] == 150.0
    assert joined.truth is not None and joined.truth.row(0) == [[120.0, 150.0]]


def test_join_of_many_problems_accounts_for_every_line(tmp_path: Path) -> None:
    preds = [
        pred(1),                                   # ok
        "{oops",                                   # malformed: rejected by reader
        pred(3, vid="other"),                      # vid mismatch
        pred(4, query="x"),                        # query mismatch
        pred(5, windows=[[140, 170, 0.3]]),        # clipped (kept)
        pred(6),                                   # no truth
        pred(7, windows=[]),                       # refusal (kept)
        pred(8, windows=[[float("nan"), 1, 1]]),   # NaN: rejected by reader
        pred(9),                                   # truth entirely outside
        pred(1),                                   # duplicate: rejected by reader
    ]
    truth = [gt(1), gt(3), gt(4, query="y"), gt(5), gt(7), gt(8), gt(9, windows=[[151, 160]]),
             gt(10), gt(11, windows=[]), "not json"]
    pp = write_lines(tmp_path / "p.jsonl", preds)
    gp = write_lines(tmp_path / "g.jsonl", truth)
    p = read_predictions(pp, on_error="reject")
    g = read_ground_truth(gp, on_error="reject")
    joined, problems = attach_truth(p.table, g.table)
    assert joined.qid.tolist() == ["1", "5", "7"]

    # prediction side: read rejections + join rejections + kept == every line
    join_rej = {q.line for q in rejected(problems, pp)}
    assert join_rej == {3, 4, 6, 9}
    read_rej = {line for line, _ in p.rejected}  # keyed by (line, qid)
    assert read_rej == {2, 8, 10}
    kept = set(joined.line.tolist())
    assert kept | join_rej | read_rej == set(range(1, len(preds) + 1))
    assert len(kept) + len(join_rej) + len(p.rejected) == len(preds)

    # truth side: rows read but unused are reported, rows unreadable are rejected
    gt_rej = {q.line for q in rejected(problems, gp)}
    assert gt_rej == {6, 8}  # qid 8 (pred rejected by the reader) and qid 10
    assert {line for line, _ in g.rejected} == {9, 10}
    assert_join_accounted(joined, problems, p.table, g.table)


# ---------------------------------------------------------------------------------
# fill_durations


def test_fill_durations_from_rows_then_lookup(tmp_path: Path) -> None:
    pp = write_lines(tmp_path / "p.jsonl", [
        pred(1, vid="a", duration=90),   # contradicts the lookup (120): rejected
        pred(2, vid="b"),                # from the lookup
        pred(3, vid="zzz"),              # unknown
        pred(4, vid="a"),                # from the lookup
        pred(5, vid="c", duration=30),   # the row's own duration (not in the lookup)
        pred(6, vid="b", duration=60),   # agrees with the lookup
    ])
    p = read_predictions(pp)
    vids = np.array(["b", "a"])
    durs = np.array([60.0, 120.0])
    out, problems = fill_durations(p.table, vids, durs, source="videos.jsonl")
    assert out.qid.tolist() == ["2", "4", "5", "6"]
    assert out.duration.tolist() == [60.0, 120.0, 30.0, 60.0]
    probs = sorted(rejected(problems), key=lambda q: q.line)
    assert [(q.path, q.line, q.qid) for q in probs] == [(str(pp), 1, "1"), (str(pp), 3, "3")]
    assert "contradicts 120" in probs[0].problem and "videos.jsonl" in probs[0].problem
    assert "'zzz'" in probs[1].problem and "videos.jsonl" in probs[1].problem
    assert len(out) + len(rejected(problems)) == len(p.table)


def test_fill_durations_without_lookup_rejects_rows_lacking_duration(tmp_path: Path) -> None:
    pp = write_lines(tmp_path / "p.jsonl", [pred(1, vid="a", duration=90), pred(2, vid="b")])
    p = read_predictions(pp)
    out, problems = fill_durations(p.table, None, None)
    assert out.qid.tolist() == ["1"]
    [prob] = rejected(problems)
    assert (prob.line, prob.qid) == (2, "2") and "'b'" in prob.problem


def test_fill_durations_clips_predictions(tmp_path: Path) -> None:
    pp = write_lines(tmp_path / "p.jsonl", [
        pred(1, vid="a", windows=[[50, 70, 1]]), pred(2, vid="a", windows=[[-1, 3, 1]])])
    p = read_predictions(pp)
    out, problems = fill_durations(p.table, np.array(["a"]), np.array([60.0]))
    assert out.pred_end.tolist() == [60.0, 3.0]
    assert out.pred_start.tolist() == [50.0, 0.0]
    assert [(q.line, q.action) for q in problems] == [(1, "clipped"), (2, "clipped")]
    out_s, problems_s = fill_durations(p.table, np.array(["a"]), np.array([60.0]), strict=True)
    assert len(out_s) == 0 and len(rejected(problems_s)) == 2


def test_fill_durations_from_a_release_file(tmp_path: Path) -> None:
    """QVHighlights' unlabelled test file (qid, query, duration, vid) gives T."""
    release = write_lines(tmp_path / "highlight_test_release.jsonl", [
        {"qid": 3158, "query": "hill and water", "duration": 150,
         "vid": "_6hnl_BrFvs_360.0_510.0"},
        {"qid": 3159, "query": "a short clip", "duration": 126, "vid": "xyz_0.0_126.0"},
        {"qid": 3160, "query": "same video again", "duration": 150,
         "vid": "_6hnl_BrFvs_360.0_510.0"},
    ])
    pp = write_lines(tmp_path / "p.jsonl", [
        pred(3158, vid="_6hnl_BrFvs_360.0_510.0", windows=[[140, 152, 0.9]]),
        pred(3159, vid="xyz_0.0_126.0"),
        pred(9999, vid="missing_0.0_150.0"),
    ])
    vids, durs = read_durations(release)
    out, problems = fill_durations(read_predictions(pp).table, vids, durs, source=str(release))
    assert out.qid.tolist() == ["3158", "3159"]
    assert out.duration.tolist() == [150.0, 126.0]
    assert out.pred_end[0] == 150.0
    [rej] = rejected(problems)
    assert rej.qid == "9999" and "missing_0.0_150.0" in rej.problem
    assert str(release) in rej.problem
    [clp] = clipped(problems)
    assert clp.qid == "3158"


# ---------------------------------------------------------------------------------
# clip helpers on in-memory tables


def test_clip_truth_and_predictions_in_memory() -> None:
    # Built directly: from_arrays would clip (and reject) these rows itself.
    t = GroundingTable(
        qid=np.array(["a", "b", "c"]), vid=np.array(["a", "b", "c"]),
        duration=np.array([10.0, 10.0, 10.0]),
        pred_start=np.array([1.0, -2.0, np.nan]), pred_end=np.array([3.0, 12.0, np.nan]),
        relevance=Ragged(np.empty(0), np.zeros(4, dtype=np.int64)),
        truth=Intervals.single([2.0, 11.0, -1.0], [4.0, 12.0, 5.0]),
    )
    kept, probs = clip_truth(t)
    assert kept.qid.tolist() == ["a", "c"]
    assert kept.truth is not None and kept.truth.to_lists() == [[[2.0, 4.0]], [[0.0, 5.0]]]
    assert [(p.qid, p.action) for p in probs] == [("b", "rejected"), ("c", "clipped")]
    kept, probs = clip_predictions(t)
    assert kept.pred_start.tolist()[:2] == [1.0, 0.0]
    assert kept.pred_end.tolist()[:2] == [3.0, 10.0]
    assert np.isnan(kept.pred_start[2])
    assert [(p.qid, p.action) for p in probs] == [("b", "clipped")]


# ---------------------------------------------------------------------------------
# units


@pytest.mark.parametrize(
    ("vid", "unit"),
    [
        ("_6hnl_BrFvs_360.0_510.0", "_6hnl_BrFvs"),
        ("NUsG9BgSes0_210.0_360.0", "NUsG9BgSes0"),
        ("a_b_c_0.0_150.0", "a_b_c"),
        ("j7rJstUseKg_60_210", "j7rJstUseKg"),
        ("3MSZA", "3MSZA"),
        ("v_QOlSCBRmfWY", "v_QOlSCBRmfWY"),
        ("s13-d21", "s13-d21"),
        ("clip_360.0", "clip_360.0"),
        ("abc_1.0_x", "abc_1.0_x"),
    ],
)
def test_split_units(vid: str, unit: str) -> None:
    assert split_units([vid]).tolist() == [unit]


def test_split_units_vectorised_and_table_units() -> None:
    vids = ["x_0.0_150.0", "y", "x_150.0_300.0", "y", "x_0.0_150.0"]
    assert split_units(vids).tolist() == ["x", "y", "x", "y", "x"]
    assert split_units(np.array([], dtype=str)).size == 0
    t = GroundingTable.from_arrays(qid=np.arange(5), duration=150.0, vid=vids)
    assert t.units.tolist() == ["x", "y", "x", "y", "x"]


# ---------------------------------------------------------------------------------
# unit-level splits


def make_units(n_units: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    per = rng.integers(1, 6, size=n_units)
    units = np.repeat(np.array([f"u{i:04d}" for i in range(n_units)]), per)
    return units[rng.permutation(units.size)]


@pytest.mark.parametrize("cal_frac", [0.1, 0.4, 0.5, 0.77])
@pytest.mark.parametrize("n_units", [2, 3, 10, 57, 400])
def test_split_by_unit_keeps_units_whole(n_units: int, cal_frac: float) -> None:
    units = make_units(n_units, seed=n_units)
    s = split_by_unit(units, cal_frac=cal_frac, seed=7)
    assert s.calibration.dtype == bool and s.calibration.shape == units.shape
    assert (s.calibration ^ s.test).all()
    cal_u, test_u = set(units[s.calibration]), set(units[s.test])
    assert not cal_u & test_u
    assert cal_u | test_u == set(units)
    assert (s.n_units_calibration, s.n_units_test) == (len(cal_u), len(test_u))
    want = min(max(round(cal_frac * n_units), 1), n_units - 1)
    assert len(cal_u) == want
    assert len(test_u) >= 1


def test_split_by_unit_is_deterministic_under_the_seed() -> None:
    units = make_units(300)
    a = split_by_unit(units, cal_frac=0.4, seed=42)
    b = split_by_unit(units.copy(), cal_frac=0.4, seed=42)
    c = split_by_unit(units, cal_frac=0.4, seed=43)
    assert np.array_equal(a.calibration, b.calibration)
    assert not np.array_equal(a.calibration, c.calibration)


def test_split_by_unit_does_not_depend_on_row_order() -> None:
    units = make_units(200)
    perm = np.random.default_rng(1).permutation(units.size)
    a = split_by_unit(units, seed=5)
    b = split_by_unit(units[perm], seed=5)
    assert set(units[a.calibration]) == set(units[perm][b.calibration])


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.2, 1.5])
def test_split_by_unit_rejects_bad_fraction(bad: float) -> None:
    with pytest.raises(ValueError, match="fraction"):
        split_by_unit(make_units(10), cal_frac=bad)


def test_resample_units_within_the_pool() -> None:
    units = make_units(250)
    split = split_by_unit(units, cal_frac=0.4, seed=42)
    pool = units[split.calibration]
    pool_units = set(pool)
    masks = resample_units(pool, n_resamples=17, frac=0.5, seed=3)
    assert len(masks) == 17
    n_pick = round(0.5 * len(pool_units))
    for m in masks:
        assert m.dtype == bool and m.shape == pool.shape
        chosen = set(pool[m])
        assert chosen <= pool_units
        assert len(chosen) == n_pick
        assert not chosen & set(pool[~m])  # whole units only
    distinct = {m.tobytes() for m in masks}
    assert len(distinct) > 1
    again = resample_units(pool, n_resamples=17, frac=0.5, seed=3)
    assert all(np.array_equal(a, b) for a, b in zip(masks, again, strict=True))
    other = resample_units(pool, n_resamples=17, frac=0.5, seed=4)
    assert not all(np.array_equal(a, b) for a, b in zip(masks, other, strict=True))


@pytest.mark.parametrize("n", [0, 1, 50])
def test_resample_units_count(n: int) -> None:
    assert len(resample_units(make_units(30), n_resamples=n)) == n


def test_fill_durations_never_keeps_a_non_positive_duration(tmp_path: Path) -> None:
    videos = write_lines(tmp_path / "videos.jsonl", [
        {"vid": "zero", "duration": 0}, {"vid": "neg", "duration": -3},
        {"vid": "ok", "duration": 100},
    ])
    pp = write_lines(tmp_path / "p.jsonl", [
        pred(1, vid="zero"), pred(2, vid="neg"), pred(3, vid="ok")])
    p = read_predictions(pp)
    try:
        vids, durs = read_durations(videos)
    except InputError:  # refusing the file outright is acceptable too
        return
    out, problems = fill_durations(p.table, vids, durs, source=str(videos))
    assert (np.isfinite(out.duration) & (out.duration > 0)).all(), \
        dict(zip(out.qid.tolist(), out.duration.tolist(), strict=True))
    assert out.qid.tolist() == ["3"]
    assert sorted(q.qid for q in rejected(problems)) == ["1", "2"]



@pytest.mark.parametrize("which", ["predictions", "ground truth"])
def test_attach_truth_of_no_table_says_what_it_takes(which):
    """None, a dict: a TypeError naming the argument (an AttributeError "'NoneType' object
    has no attribute 'require_truth'" from inside)."""
    import cover

    t = cover.GroundingTable.from_arrays(qid=np.arange(3), duration=60.0,
                                         pred_start=np.ones(3), pred_end=np.full(3, 5.0),
                                         truth=(np.ones(3), np.full(3, 4.0)))
    for bad in (None, {"qid": [1]}):
        args = (bad, t) if which == "predictions" else (t, bad)
        with pytest.raises(TypeError, match=f"^the {which} given to attach_truth must be a "
                                            f"GroundingTable .*, got {type(bad).__name__}$"):
            cover.attach_truth(*args)
