"""Certified output: written line-aligned, read back for evaluation without loss."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import cover
from cover.errors import InputError
from cover.io.regions_jsonl import certified_rows, read_regions, write_certified


def _labelled(tmp_path: Path, n: int = 40) -> tuple[cover.GroundingTable, Path, Path]:
    rng = np.random.default_rng(3)
    preds, gts = [], []
    for i in range(n):
        s = float(rng.uniform(0, 100))
        e = s + float(rng.uniform(1, 30))
        rel = rng.normal(size=60).round(3).tolist()
        windows = [] if i % 10 == 0 else [[s, e, 0.8]]
        preds.append({"qid": f"q{i}", "vid": f"v{i}", "pred_relevant_windows": windows,
                      "pred_saliency_scores": rel, "extra": {"keep": i}})
        gts.append({"qid": f"q{i}", "vid": f"v{i}", "duration": 120,
                    "relevant_windows": [[s + 2, min(e + 3, 120)], [0, 4]]})
    pp, gp = tmp_path / "p.jsonl", tmp_path / "g.jsonl"
    pp.write_text("\n".join(json.dumps(r) for r in preds))
    gp.write_text("\n".join(json.dumps(r) for r in gts))
    table, _ = cover.attach_truth(cover.read_predictions(pp).table,
                                  cover.read_ground_truth(gp).table)
    return table, pp, gp


@pytest.mark.parametrize("family", ["norm", "sec", "sls"])
def test_round_trip_reproduces_the_evaluation(tmp_path, family):
    table, _, gp = _labelled(tmp_path)
    cal = cover.Calibrator(score=family, alpha=0.2).fit(table)
    regions = cal.certify(table)
    rows = certified_rows(table, regions, {"score": family, "rule": "split", "alpha": 0.2,
                                           "k": cal.k_, "n_calibration": cal.n_}, [])
    out = tmp_path / "r.jsonl"
    write_certified(out, rows)
    back = read_regions(out)
    assert back.rejected_at_certify == 0
    assert back.table.qid.tolist() == table.qid.tolist()
    np.testing.assert_array_equal(back.regions.intervals.starts, regions.intervals.starts)
    np.testing.assert_array_equal(back.regions.intervals.ends, regions.intervals.ends)
    np.testing.assert_array_equal(back.regions.refused, regions.refused)
    # Original fields are untouched.
    first = json.loads(out.read_text().splitlines()[1])
    assert first["extra"] == {"keep": 1} and "pred_saliency_scores" in first
    joined, _ = cover.attach_truth(back.table, cover.read_ground_truth(gp).table)
    ev_back = cover.evaluate(back.regions, joined)
    ev = cover.evaluate(regions, table)
    assert ev_back.marginal == ev.marginal
    assert ev_back.point_iou == pytest.approx(ev.point_iou)


def test_refused_rows_are_whole_video_and_flagged(tmp_path):
    table, _, _ = _labelled(tmp_path)
    regions = cover.Calibrator(score="norm", alpha=0.2).fit(table).certify(table)
    refused = ~table.has_interval
    assert refused.sum() == 4
    assert np.all(regions.refused == refused)
    for i in np.flatnonzero(refused):
        assert regions.row(int(i)) == [[0.0, 120.0]]


def test_unnormalized_regions_are_merged_and_bad_ones_named(tmp_path):
    rows = [
        {"qid": 1, "cover": {"status": "certified", "region": [[10, 20], [0, 12], [30, 31]],
                             "refused": False, "duration": 60, "score": "sec"}},
        {"qid": 2, "cover": {"status": "rejected", "region": None, "reason": "x"}},
        {"qid": 3, "cover": {"status": "certified", "region": [[5, 1]], "duration": 60}},
    ]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(InputError, match=r"r\.jsonl:3 \(qid=3\).*start > end"):
        read_regions(path)
    back = read_regions(path, on_error="reject")
    assert back.rejected_at_certify == 1
    assert len(back.problems) == 1
    assert back.regions.intervals.to_lists() == [[[0.0, 20.0], [30.0, 31.0]]]


def test_not_a_certify_output_is_named(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"qid": 1, "pred_relevant_windows": [[1, 2, 1]]}))
    with pytest.raises(InputError, match="cover certify"):
        read_regions(path)


def test_in_memory_tables_certify_to_rows(tmp_path):
    table = cover.GroundingTable.from_arrays(qid=["a", "b"], duration=[100.0, 50.0],
                                             pred_start=[10.0, np.nan], pred_end=[20.0, np.nan])
    cal = cover.Calibrator(score="sec", alpha=0.5)
    cal_table = cover.GroundingTable.from_arrays(qid=np.arange(9), duration=100.0,
                                                 pred_start=np.full(9, 10.0),
                                                 pred_end=np.full(9, 20.0),
                                                 truth=(np.full(9, 10.0), 20.0 + np.arange(9)))
    cal.fit(cal_table)  # k = ceil(10 * 0.5) = 5 -> threshold 4
    rows = certified_rows(table, cal.certify(table), {"score": "sec"}, [])
    assert [r["qid"] for r in rows] == ["a", "b"]
    assert rows[0]["cover"]["region"] == [[6.0, 24.0]] and rows[0]["cover"]["threshold"] == 4.0
    assert rows[1]["cover"]["status"] == "refused" and rows[1]["cover"]["region"] == [[0.0, 50.0]]


def _cover_row(qid, **block):
    base = {"status": "certified", "region": [[1, 2]], "refused": False, "duration": 10,
            "score": "sec", "rule": "split", "alpha": 0.1, "k": 9, "n_calibration": 9,
            "threshold": 1.0}
    return {"qid": qid, "cover": base | block}


def test_bad_duration_in_a_region_row_is_named(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [_cover_row(1),
                                                      _cover_row(2, duration="long")]))
    with pytest.raises(InputError, match=r"r\.jsonl:2 \(qid=2\).*cover\.duration"):
        read_regions(path)


def test_mixed_calibrators_are_refused(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [_cover_row(1), _cover_row(2),
                                                      _cover_row(3, alpha=0.2)]))
    with pytest.raises(InputError, match=r"r\.jsonl:3 \(qid=3\): cover\.alpha is 0\.2"):
        read_regions(path)


def test_reading_leaves_the_rows_untouched(tmp_path):
    rows = [_cover_row(1), _cover_row(2, refused=True, status="refused")]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    back = read_regions(path)
    assert list(back.table.records) == rows
    assert back.regions.refused.tolist() == [False, True]
    assert back.meta == {"score": "sec", "rule": "split", "alpha": 0.1, "k": 9,
                         "n_calibration": 9, "calibration_sha256": None}


def test_a_row_rejected_for_its_windows_takes_its_region_with_it(tmp_path):
    rows = [_cover_row(i, region=[[i, i + 1]], duration=10 + i, refused=i == 2,
                       status="refused" if i == 2 else "certified", threshold=float(i))
            for i in range(3)]
    rows[1]["pred_relevant_windows"] = "not windows"
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    got = read_regions(path, on_error="reject")
    assert got.table.qid.tolist() == ["0", "2"]
    assert got.table.duration.tolist() == got.regions.duration.tolist() == [10.0, 12.0]
    assert got.regions.intervals.starts.tolist() == [0.0, 2.0]
    assert got.regions.refused.tolist() == [False, True]
    assert got.regions.threshold.tolist() == [0.0, 2.0]
    assert [p.line for p in got.problems] == [2]


@pytest.mark.parametrize("block,qid,want", [
    ({"refused": "yes"}, 2, 'cover.refused must be true or false, got "yes"'),
    ({"refused": 1}, 2, "cover.refused must be true or false, got 1"),
    ({"refused": True}, 2, 'cover.status is "certified" but cover.refused is true'),
    ({"status": "refused"}, 2, 'cover.status is "refused" but cover.refused is false'),
    ({"status": "done"}, 2,
     'cover.status must be "certified", "refused" or "abstained", got "done"'),
    ({}, "1\x00", 'qid "1\\u0000" contains a NUL character'),
])
def test_status_refused_and_ids_are_read_strictly(tmp_path, block, qid, want):
    """A flag that is not a boolean, a status it contradicts, a qid that numpy text would
    join to another: row problems with file, line, qid and field (no Python repr)."""
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [_cover_row(1), _cover_row(qid, **block)]))
    with pytest.raises(InputError) as exc:
        read_regions(path)
    assert "r.jsonl:2" in str(exc.value) and want in str(exc.value), str(exc.value)
    got = read_regions(path, on_error="reject")
    assert got.table.qid.tolist() == ["1"] and [p.line for p in got.problems] == [2]
