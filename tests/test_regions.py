"""Properties of certified regions ``C_lam`` (SPEC §3): shape, clipping to ``[0, T]``,
nestedness in ``lam``, the widening length identity, the super-level-set construction
and the refusal / ``lam = +inf`` whole-video policy. (Nestedness against the truth,
``S <= lam  <=>  truth ⊆ C_lam``, is in ``test_scores.py``.)

The table generator and oracles live in ``grounding_cases.py``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import grounding_cases as gen
from cover.data.table import GroundingTable
from cover.intervals import CONTAINMENT_ATOL
from cover.regions import build_regions
from cover.scores import FAMILIES, compute_scores

SETTINGS = settings(max_examples=200, deadline=None, derandomize=True, database=None)


def region_oracle(case, lam: np.ndarray) -> list[list[tuple[float, float]]]:
    """Per-row Python construction of ``C_lam`` straight from SPEC §3."""
    tb = case.table
    scale = gen.oracle_scale(case)
    out = []
    for i in range(case.n):
        t = float(tb.duration[i])
        lam_i = float(lam[i])
        refused = (tb.relevance.lengths[i] == 0 if case.family == "sls"
                   else not (math.isfinite(tb.pred_start[i]) and math.isfinite(tb.pred_end[i])))
        if refused or lam_i == math.inf:
            out.append([(0.0, t)])
        elif case.family == "sls":
            out.append(gen.sls_region_oracle(tb.relevance.row(i), tb.clip, t, lam_i))
        else:
            lo = max(tb.pred_start[i] - lam_i * scale[i], 0.0)
            hi = min(tb.pred_end[i] + lam_i * scale[i], t)
            if lo <= hi:
                out.append([(lo, hi)])
            elif lo - hi <= CONTAINMENT_ATOL:  # rounding shrank it past a point: keep the point
                mid = min(max((lo + hi) / 2, 0.0), t)
                out.append([(mid, mid)])
            else:
                out.append([])
    return out


def assert_normalized_inside_video(reg, duration: np.ndarray) -> None:
    for i in range(len(reg)):
        comps = reg.row(i)
        for s, e in comps:
            assert 0.0 <= s <= e <= duration[i], (i, comps, duration[i])
        for (_, e0), (s1, _) in itertools.pairwise(comps):
            assert e0 < s1, (i, comps)  # sorted, disjoint, not touching


# ---- shape and construction --------------------------------------------------------------
@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data())
def test_regions_match_oracle_and_length_identity(family, data):
    case = data.draw(gen.cases(family), label="case")
    scores = gen.scores_of(case)
    lam = data.draw(gen.thresholds(case, scores), label="lam")
    reg = build_regions(case.table, family, lam, min_scale=case.min_scale, alpha=0.1)
    assert len(reg) == case.n and reg.family == family and reg.alpha == 0.1
    assert np.array_equal(reg.threshold, lam)
    assert np.array_equal(reg.duration, case.table.duration)
    assert reg.refused.tolist() == compute_scores(case.table, family).refused.tolist()
    assert_normalized_inside_video(reg, case.table.duration)
    expected = region_oracle(case, lam)
    for i in range(case.n):
        got = [tuple(c) for c in reg.row(i)]
        assert len(got) == len(expected[i]), (i, got, expected[i])
        for (gs, ge), (es, ee) in zip(got, expected[i], strict=True):
            assert gs == pytest.approx(es, rel=1e-12, abs=1e-12)
            assert ge == pytest.approx(ee, rel=1e-12, abs=1e-12)
        # Length is the measure of the components.
        assert reg.length[i] == pytest.approx(sum(e - s for s, e in expected[i]), abs=1e-9)
        assert reg.n_components[i] == len(expected[i])
        if family != "sls":
            assert len(got) <= 1
    if family != "sls":
        # Length identity: |C_lam| = |[s - lam*l, e + lam*l] ∩ [0, T]| (0 when empty);
        # refusals and lam = +inf get T.
        tb = case.table
        length = np.empty(case.n)
        for i in range(case.n):
            s, e, t = tb.pred_start[i], tb.pred_end[i], tb.duration[i]
            if not (math.isfinite(s) and math.isfinite(e)) or lam[i] == math.inf:
                length[i] = t
                continue
            ell = max(e - s, case.min_scale) if family == "norm" else 1.0
            length[i] = max(0.0, min(e + lam[i] * ell, t) - max(s - lam[i] * ell, 0.0))
        np.testing.assert_allclose(reg.length, length, rtol=1e-12, atol=1e-9)


# ---- nestedness ------------------------------------------------------------------------------
@pytest.mark.parametrize("family", FAMILIES)
@SETTINGS
@given(data=st.data())
def test_regions_nested_in_lam(family, data):
    """lam1 <= lam2 (per row) implies C_lam1 ⊆ C_lam2, exactly (no tolerance)."""
    case = data.draw(gen.cases(family), label="case")
    scores = gen.scores_of(case)
    a = data.draw(gen.thresholds(case, scores), label="lam_a")
    b = data.draw(gen.thresholds(case, scores), label="lam_b")
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    r_lo = build_regions(case.table, family, lo, min_scale=case.min_scale)
    r_hi = build_regions(case.table, family, hi, min_scale=case.min_scale)
    assert r_hi.intervals.contains(r_lo.intervals, atol=0.0).all()
    assert np.all(r_lo.length <= r_hi.length)
    # And against the truth: covered at lam1 implies covered at lam2.
    truth = gen.truth_target(case.table, case.target)
    assert np.all(r_hi.intervals.contains(truth) | ~r_lo.intervals.contains(truth))


@pytest.mark.parametrize("family", FAMILIES)
@settings(SETTINGS, max_examples=50)
@given(data=st.data(), lam=st.one_of(st.floats(-3.0, 10.0), st.sampled_from([np.inf, -np.inf])))
def test_scalar_threshold_equals_broadcast(family, data, lam):
    case = data.draw(gen.cases(family), label="case")
    r1 = build_regions(case.table, family, lam, min_scale=case.min_scale)
    r2 = build_regions(case.table, family, np.full(case.n, lam), min_scale=case.min_scale)
    assert r1.intervals.to_lists() == r2.intervals.to_lists()


# ---- explicit cases ----------------------------------------------------------------------
def table(**kw) -> GroundingTable:
    kw.setdefault("qid", np.arange(np.size(kw["duration"])))
    return gen.unchecked_table(**kw)  # the kernel sees rows the API would refuse


def test_widening_clips_to_video_and_empties_on_negative_lam():
    tb = table(duration=[10.0, 10.0, 10.0], pred_start=[2.0, 4.0, 4.0],
               pred_end=[8.0, 6.0, 6.0])
    assert build_regions(tb, "sec", 3.0).intervals.to_lists() == [
        [[0.0, 10.0]], [[1.0, 9.0]], [[1.0, 9.0]]]
    # NORM: l = 6 for row 0, l = 2 for rows 1-2.
    assert build_regions(tb, "norm", 0.5).intervals.to_lists() == [
        [[0.0, 10.0]], [[3.0, 7.0]], [[3.0, 7.0]]]
    # Negative lam shrinks; past the midpoint the region is empty.
    assert build_regions(tb, "sec", [-1.0, -0.5, -1.5]).intervals.to_lists() == [
        [[3.0, 7.0]], [[4.5, 5.5]], []]
    assert build_regions(tb, "sec", -np.inf).intervals.to_lists() == [[], [], []]
    assert build_regions(tb, "sec", np.inf).intervals.to_lists() == [[[0.0, 10.0]]] * 3


def test_superlevel_runs_and_last_clip_truncated_at_T():
    # 2 s clips, T = 9 s: clip 4 spans [8, 9]; clip 5 would start past T.
    tb = table(duration=[9.0], relevance=[[1.0, 1.0, -2.0, 0.5, 3.0]])
    assert build_regions(tb, "sls", -0.5).row(0) == [[0.0, 4.0], [6.0, 9.0]]
    assert build_regions(tb, "sls", -1.0).row(0) == [[0.0, 4.0], [8.0, 9.0]]
    assert build_regions(tb, "sls", -2.0).row(0) == [[8.0, 9.0]]
    assert build_regions(tb, "sls", 2.0).row(0) == [[0.0, 9.0]]
    assert build_regions(tb, "sls", -3.5).row(0) == []
    # Signal shorter than the video: the region never reaches past the signal.
    tb = table(duration=[20.0], relevance=[[0.0, 0.0]])
    assert build_regions(tb, "sls", 0.0).row(0) == [[0.0, 4.0]]
    assert build_regions(tb, "sls", np.inf).row(0) == [[0.0, 20.0]]


def test_refusals_get_whole_video_for_every_lam():
    tb = table(duration=[12.0, 12.0], pred_start=[np.nan, 3.0], pred_end=[np.nan, 4.0],
               relevance=[[], [1.0] * 6])
    for lam in (-np.inf, -5.0, 0.0, 5.0, np.inf):
        for fam in FAMILIES:
            reg = build_regions(tb, fam, lam)
            assert reg.row(0) == [[0.0, 12.0]]
            assert reg.refused.tolist() == [True, False]


def test_build_regions_rejects_nan_lam_and_bad_durations():
    tb = table(duration=[10.0], pred_start=[1.0], pred_end=[2.0])
    with pytest.raises(ValueError, match="NaN"):
        build_regions(tb, "sec", np.nan)
    for bad in (np.nan, 0.0, -1.0, np.inf):
        tb = table(duration=[bad], pred_start=[1.0], pred_end=[2.0])
        with pytest.raises(ValueError, match="duration"):
            build_regions(tb, "sec", 1.0)
    with pytest.raises(ValueError, match="family"):
        build_regions(table(duration=[10.0]), "nope", 1.0)
    # a threshold per row of another count, or of two dimensions: named, not numpy's
    # "operands could not be broadcast together"; one value (0-d or one element) serves all
    tb3 = table(duration=[10.0] * 3, pred_start=[1.0] * 3, pred_end=[2.0] * 3)
    for lam, end, shape in ((np.ones(2), None, "(2,)"), (np.ones((3, 1)), None, "(3, 1)"),
                            (1.0, np.ones(4), "(4,)")):
        name = "lam" if end is None else "lam_end"
        with pytest.raises(ValueError, match=rf"^{name} has shape \{shape[:-1]}\); expected "
                                             r"one threshold or 3 \(one per row\)$"):
            build_regions(tb3, "sec", lam, lam_end=end)
    one = build_regions(tb3, "sec", np.ones(1)).intervals.to_lists()
    assert one == build_regions(tb3, "sec", 1.0).intervals.to_lists() == [[[0.0, 3.0]]] * 3


# ---- fast paths == the general formulas they replace ----------------------------------------
def _old_widen(ps, pe, scale, lam, t):
    """The general construction: full-length temporaries, row ids, bincount offsets."""
    from cover.intervals import from_flat

    lam_a = np.broadcast_to(np.asarray(lam, dtype=np.float64), ps.shape)
    with np.errstate(invalid="ignore"):
        lo = np.maximum(ps - lam_a * scale, 0.0)
        hi = np.minimum(pe + lam_a * scale, t)
        point = (lo > hi) & (lo - hi <= CONTAINMENT_ATOL)
        mid = np.clip(0.5 * (lo + hi), 0.0, t)
    lo, hi = np.where(point, mid, lo), np.where(point, mid, hi)
    keep = lo <= hi
    return from_flat(lo[keep], hi[keep], np.flatnonzero(keep), ps.size)


def _old_superlevel(rel, clip, lam, t):
    from cover.intervals import from_flat
    from cover.ragged import row_ids

    n = len(rel)
    r = row_ids(rel.offsets)
    i = np.arange(rel.values.size, dtype=np.int64) - rel.offsets[r]
    lam_a = np.broadcast_to(np.asarray(lam, dtype=np.float64), (n,))
    sel = (rel.values >= -lam_a[r]) & (i * clip < t[r])
    same_row = r[1:] == r[:-1]
    start = sel & ~(np.r_[False, sel[:-1]] & np.r_[False, same_row])
    end = sel & ~(np.r_[sel[1:], False] & np.r_[same_row, False])
    e = np.minimum((i[end] + 1) * clip, t[r][end])
    return from_flat((i[start] * clip).astype(float), e.astype(float), r[start], n)


def _old_with_whole_video(iv, mask, t):
    from cover.intervals import from_flat

    keep = ~mask[iv.rows]
    rows = np.concatenate([iv.rows[keep], np.flatnonzero(mask)])
    s = np.concatenate([iv.starts[keep], np.zeros(int(mask.sum()))])
    e = np.concatenate([iv.ends[keep], t[mask]])
    order = np.argsort(rows, kind="stable")
    return from_flat(s[order], e[order], rows[order], len(iv))


def assert_same_intervals(a, b) -> None:
    np.testing.assert_array_equal(a.offsets, b.offsets)
    np.testing.assert_array_equal(a.starts, b.starts)
    np.testing.assert_array_equal(a.ends, b.ends)


edge_floats = st.one_of(st.floats(-20.0, 200.0), st.sampled_from([np.nan, np.inf, -np.inf, 0.0]))


@settings(SETTINGS, max_examples=150)
@given(n=st.integers(0, 12), data=st.data())
def test_widen_equals_general_construction(n, data):
    from cover.widening import widen

    arr = st.lists(edge_floats, min_size=n, max_size=n).map(lambda v: np.array(v, dtype=float))
    ps, pe, scale = data.draw(arr), data.draw(arr), np.abs(data.draw(arr)) + 0.5
    t = np.abs(data.draw(arr))
    lam = data.draw(st.one_of(edge_floats, arr))
    assert_same_intervals(widen(ps, pe, scale, lam, t), _old_widen(ps, pe, scale, lam, t))


@settings(SETTINGS, max_examples=150)
@given(n=st.integers(1, 8), width=st.integers(1, 9), data=st.data())
def test_dense_superlevel_equals_ragged_construction(n, width, data):
    from cover.ragged import Ragged
    from cover.regions import superlevel

    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    values = np.round(rng.normal(0, 1, n * width), 1)
    rel = Ragged(values, np.arange(n + 1, dtype=np.int64) * width)
    assert rel.uniform_width() == width
    clip = data.draw(st.sampled_from([1.0, 2.0, 0.5]))
    t = np.round(rng.uniform(0.0, width * clip + 3, n), 1)  # some end before the last clip
    t[rng.random(n) < 0.2] = width * clip * data.draw(st.sampled_from([0.5, 1.0]))
    lam = np.round(rng.normal(0, 1, n), 1) if data.draw(st.booleans()) else 0.3
    assert_same_intervals(superlevel(rel, clip, lam, t), _old_superlevel(rel, clip, lam, t))


@settings(SETTINGS, max_examples=150)
@given(data=st.data())
def test_with_whole_video_equals_sorted_merge(data):
    from cover.intervals import Intervals
    from cover.regions import with_whole_video

    counts = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=8))
    n, m = len(counts), sum(counts)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    s = np.sort(rng.uniform(0, 50, m))
    iv = Intervals(s, s + 1.0, np.r_[0, np.cumsum(counts)].astype(np.int64))
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    t = rng.uniform(60, 90, n)
    assert_same_intervals(with_whole_video(iv, mask, t), _old_with_whole_video(iv, mask, t))
    one = Intervals.single(rng.uniform(0, 5, n), rng.uniform(5, 9, n))
    assert_same_intervals(with_whole_video(one, mask, t), _old_with_whole_video(one, mask, t))


# ---- never "certified" on an empty region (cover.row_status) ------------------------------
@pytest.mark.parametrize("family", FAMILIES)
@settings(SETTINGS, max_examples=100)
@given(data=st.data())
def test_a_certified_region_is_never_empty(family, data):
    """Every row is certified (a non-empty region), refused (the whole video) or
    rejected with a reason (an empty region, kept as []), in the kernel and in the
    written blocks."""
    from cover.io.regions_jsonl import certified_rows
    from cover.row_status import empty_reasons, row_status

    case = data.draw(gen.cases(family), label="case")
    lam = data.draw(gen.thresholds(case, gen.scores_of(case)), label="lam")
    lam = np.where(np.isneginf(lam), -1e6, lam)  # -inf is refused before any region
    reg = build_regions(case.table, family, lam)
    status = row_status(reg)
    comps = reg.n_components
    assert set(status.tolist()) <= {"certified", "refused", "rejected"}
    assert (comps[status == "certified"] > 0).all()
    assert ((status == "rejected") == ((comps == 0) & ~reg.refused)).all()
    reasons = empty_reasons(reg)
    assert sorted(reasons) == np.flatnonzero(status == "rejected").tolist()
    rows = certified_rows(case.table, reg, {"score": family}, [])
    for row, st_i in zip(rows, status.tolist(), strict=True):
        block = row["cover"]
        assert block["status"] == st_i
        assert block["region"] if st_i != "rejected" else block["region"] == []
        assert ("reason" in block) == (st_i == "rejected")


def test_empty_region_reasons_name_the_threshold_and_family():
    from cover.row_status import empty_reasons, row_status

    tb = table(pred_start=[10.0, 10.0], pred_end=[14.0, 30.0], duration=[60.0, 60.0])
    reg = build_regions(tb, "sec", -3.0)  # [13, 11] is empty; [13, 27] is not
    assert row_status(reg).tolist() == ["rejected", "certified"]
    assert empty_reasons(reg) == {0: "empty certified region: the calibrated threshold -3 "
                                     "narrows the predicted window past itself (score sec)"}
    two = build_regions(tb, "norm", -0.8, lam_end=-0.3)
    assert empty_reasons(two)[0].endswith("threshold -0.8 (start), -0.3 (end) narrows the "
                                          "predicted window past itself (score norm)")
    from cover.ragged import Ragged

    sls = GroundingTable.from_arrays(qid=["a", "b"], duration=[4.0, 4.0],
                                     relevance=Ragged.from_lists([[0.1, 0.2], [0.9, 0.1]]),
                                     clip=2.0)
    reg = build_regions(sls, "sls", -0.5)  # level 0.5: only b's first clip
    assert row_status(reg).tolist() == ["rejected", "certified"]
    assert empty_reasons(reg) == {0: "empty certified region: no clip's relevance reaches "
                                     "the calibrated level 0.5 (score sls, threshold -0.5)"}


def test_impossible_threshold_certifies_no_row_on_any_writer(tmp_path, capsys):
    """A SEC threshold no video of these lengths allows (-1e6: its bound is -T/2, which
    the file cannot hold) loads, but no row is written certified with an empty region:
    each is rejected with the reason, on the in-memory, streamed JSON-lines and CSV
    paths alike."""
    import json

    from cli_files import synthetic
    from cover.calibrate import Calibrator
    from cover.calibrate.calibrator_file import _digest
    from cover.cli import main

    preds, gt = synthetic(tmp_path, n=30)
    cal_path = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--score", "sec",
                 "-o", str(cal_path)]) == 0
    doc = json.loads(cal_path.read_text())
    doc["thresholds"]["all"]["value"] = -1e6
    body = {k: v for k, v in doc.items() if k != "sha256"}
    cal_path.write_text(json.dumps({**body, "sha256": _digest(body)}))
    assert Calibrator.load(cal_path).threshold_ == -1e6
    csv_in = tmp_path / "preds.csv"
    rows = [json.loads(x) for x in preds.read_text().splitlines()]
    csv_in.write_text("qid,vid,duration,start,end\n" + "".join(
        f"{r['qid']},{r['vid']},150,{r['pred_relevant_windows'][0][0]!r},"
        f"{r['pred_relevant_windows'][0][1]!r}\n" for r in rows))
    why = ("empty certified region: the calibrated threshold -1e+06 narrows the predicted "
           "window past itself (score sec)")
    capsys.readouterr()
    for name, src, extra in [("mem.jsonl", preds, ["--in-memory"]), ("st.jsonl", preds, []),
                             ("st.csv", csv_in, ["--columns", "qid=qid,vid=vid,duration="
                                                 "duration,start=start,end=end"])]:
        out = tmp_path / name
        assert main(["certify", "--calibrator", str(cal_path), "--preds", str(src),
                     "--videos", str(gt), "-o", str(out), *extra]) == 0
        said = capsys.readouterr().out
        assert "certified 0, refused (whole video) 0, rejected 30" in said, (name, said)
        if name.endswith(".csv"):
            import csv

            got = list(csv.DictReader(out.read_text().splitlines()))
            blocks = [{"status": r["cover_status"], "region": json.loads(r["cover_region"]),
                       "reason": r["cover_reason"]} for r in got]
        else:
            blocks = [json.loads(x)["cover"] for x in out.read_text().splitlines()]
        assert len(blocks) == 30
        assert all(b["status"] == "rejected" and b["region"] == [] and b["reason"] == why
                   for b in blocks), (name, blocks[0])
    # Evaluated as what they are, misses (not dropped as rows rejected on reading are).
    metrics = tmp_path / "m.json"
    assert main(["evaluate", "--regions", str(tmp_path / "st.jsonl"), "--gt", str(gt),
                 "--json", str(metrics)]) == 0
    got = json.loads(metrics.read_text())
    assert got["counts"]["rows"] == 30 and got["counts"]["rejected_at_certify"] == 0
    assert got["marginal"]["coverage"] == 0.0


def test_sls_rows_below_the_calibrated_level_are_rejected_when_streamed(qdetr_table, qdetr_preds,
                                                                       qvh_gt, tmp_path):
    """QD-DETR on QVHighlights, SLS at alpha = 0.1: the rows whose relevance never reaches
    the calibrated level (an empty super-level set) are rejected with the reason; the
    others are certified, each with a non-empty region."""
    import json

    import cover
    from cover.row_status import empty_rows
    from cover.stream import certify_jsonl

    table = qdetr_table
    cal = cover.Calibrator(score="sls", alpha=0.1).fit(table)
    n_empty = int(empty_rows(cal.certify(table)).sum())
    assert n_empty > 0
    dst = tmp_path / "o.jsonl"
    counts, _ = certify_jsonl(cal, qdetr_preds, dst, videos=cover.read_durations(qvh_gt))
    assert counts.rejected == n_empty and counts.certified == len(table) - n_empty
    blocks = [json.loads(x)["cover"] for x in dst.read_text().splitlines()]
    assert all(b["region"] for b in blocks if b["status"] == "certified")
    assert all(b["reason"].startswith("empty certified region: no clip's relevance reaches")
               for b in blocks if b["status"] == "rejected")
    # that output, given again (every row carries its cover block), is refused whole
    from cover.errors import InputError

    with pytest.raises(InputError, match=rf"^{dst}: the input already has a 'cover' field"):
        certify_jsonl(cal, dst, tmp_path / "twice.jsonl", videos=cover.read_durations(qvh_gt))
    assert not (tmp_path / "twice.jsonl").exists()


# ---- Theorem 1(i): an inequality, not an identity ------------------------------------------
def _theorem1_case(s: list[float], e: list[float], t: list[float], lam: float,
                   min_scale: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(|C_lam|, min{l(1 + 2 lam), T}, clipped on exactly one side)`` of NORM rows."""
    table = GroundingTable.from_arrays(qid=np.arange(len(s)), duration=t, pred_start=s,
                                       pred_end=e)
    reg = build_regions(table, "norm", lam, min_scale=min_scale)
    ell = np.maximum(np.subtract(e, s), min_scale)
    bound = np.minimum(ell * (1 + 2 * lam), t)
    lo_cut = np.subtract(s, lam * ell) < 0
    hi_cut = np.add(e, lam * ell) > np.asarray(t)
    return reg.length, bound, lo_cut != hi_cut


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1), st.floats(2, 500)),
                min_size=1, max_size=8),
       st.floats(0, 20), st.sampled_from([0.5, 1.0, 4.0]))
def test_theorem1_length_is_at_most_the_identity(rows, lam, min_scale):
    """|C_lam| <= min{l (1 + 2 lam), T} always; equal when clipped on neither side (scale
    not floored) or on both; strictly less when clipped on one side only."""
    t = [dur for _, _, dur in rows]
    s = [min(a, b) * dur for a, b, dur in rows]
    e = [max(a, b) * dur for a, b, dur in rows]
    length, bound, one_side = _theorem1_case(s, e, t, lam, min_scale)
    assert np.all(length <= bound + 1e-9 * np.maximum(bound, 1))
    floored = np.subtract(e, s) < min_scale
    exact = ~one_side & ~floored
    np.testing.assert_allclose(length[exact], bound[exact], rtol=1e-9, atol=1e-9)


def test_theorem1_identity_fails_when_one_side_is_clipped():
    # [1, 3] in a 10 s video at lam = 1: [-1, 5] clipped to [0, 5], 5 s, not min(6, 10).
    length, bound, one_side = _theorem1_case([1.0, 4.0], [3.0, 6.0], [10.0, 10.0], 1.0)
    assert length.tolist() == [5.0, 6.0] and bound.tolist() == [6.0, 6.0]
    assert one_side.tolist() == [True, False]


def test_theorem1_rows_differ_on_real_data(data_dir):
    """QD-DETR on QVHighlights at 1-alpha = 0.90: 36.6% of test rows are shorter than
    min{l (1 + 2 lam), T}; none is longer."""
    from cover.calibrate.split import split_conformal
    from cover.scores import interval_scale
    from study_pairs import real_pair

    pair = real_pair(data_dir)
    lam = split_conformal(pair.sweep("pool", "norm").scores, alpha=0.1, warn=False).value
    reg = build_regions(pair.test, "norm", lam)
    ell, _ = interval_scale(pair.test.pred_start, pair.test.pred_end, "norm", 1.0)
    bound = np.minimum(ell * (1 + 2 * lam), pair.test.duration)
    assert np.all(reg.length <= bound + 1e-9)
    assert round(float(np.mean(reg.length < bound - 1e-9)), 3) == 0.366
