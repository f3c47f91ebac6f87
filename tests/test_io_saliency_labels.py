"""QVHighlights' highlight labels: the check of all rows at once gives the per-row rule's
verdict on every row, clean or not."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cover.io import saliency_labels as sl

# Label values near every edge the per-row rule draws: negative, past int64, past a
# float, not finite, booleans (JSON true is no number), text, None, nested lists.
_number = st.one_of(st.integers(-3, 6), st.sampled_from([2**63, 2**64, 10**400, -(10**400)]),
                    st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
                    st.just("1"), st.none())
_clip = st.one_of(st.lists(_number, min_size=2, max_size=4),
                  st.lists(st.integers(0, 4), min_size=3, max_size=3), _number)
_ids = st.one_of(st.lists(st.one_of(st.integers(0, 80), _number), max_size=4), _number)
_scores = st.one_of(st.lists(_clip, max_size=4), _number)


@st.composite
def _row(draw: st.DrawFn) -> dict:
    row: dict = {"qid": 1}
    if draw(st.booleans()):
        row["relevant_clip_ids"] = draw(_ids)
    if draw(st.booleans()):
        row["saliency_scores"] = draw(_scores)
    return row


# Strategies built once (one built inside a draw is built and validated at every example).
_CLEAN_IDS = st.lists(st.integers(0, 2**62), max_size=5)
_CLEAN_SCORES = st.lists(st.one_of(st.integers(0, 4), st.floats(0, 4)), min_size=3,
                         max_size=3)
_NOT_FINITE = st.sampled_from((float("nan"), float("inf"), 10**400))
_BAD_KIND = st.sampled_from(("ids", "scores"))


@st.composite
def _clean_row(draw: st.DrawFn) -> dict:
    ids = draw(_CLEAN_IDS)
    scores = [draw(_CLEAN_SCORES) for _ in ids]
    return {"relevant_clip_ids": ids, "saliency_scores": scores} if draw(st.booleans()) else {}


@st.composite
def _one_bad_value(draw: st.DrawFn) -> list[dict]:
    """Clean rows but for one value of the right type out of range: a negative clip
    index, a score that is not finite, an integer score past a float."""
    rows = draw(st.lists(_clean_row(), min_size=1, max_size=4))
    bad = {"relevant_clip_ids": [draw(st.integers(-5, -1))],
           "saliency_scores": [[1, 2, draw(_NOT_FINITE)]]}
    kind = draw(_BAD_KIND)
    good = {"relevant_clip_ids": [0], "saliency_scores": [[1, 2, 3]]}
    good["relevant_clip_ids" if kind == "ids" else "saliency_scores"] = bad[
        "relevant_clip_ids" if kind == "ids" else "saliency_scores"]
    return [*rows, good]


def _per_row(rows: list[dict]) -> dict[int, str]:
    return {i: why for i, row in enumerate(rows)
            if (why := sl._label_problem(row.get("relevant_clip_ids"),
                                         row.get("saliency_scores"))) is not None}


def _columns(rows: list[dict]) -> tuple[list, list]:
    return sl.label_columns(rows)[:2]


@given(st.one_of(st.lists(st.one_of(_clean_row(), _row()), max_size=6), _one_bad_value()))
def test_all_rows_at_once_give_the_per_row_verdicts(rows):
    assert sl.label_problems(*_columns(rows)) == _per_row(rows)
    if sl._all_clean(*_columns(rows)):  # a file called clean has no bad row
        assert _per_row(rows) == {}


@given(st.lists(_clean_row(), max_size=6))
def test_clean_files_are_seen_clean_at_once(rows):
    assert sl._all_clean(*_columns(rows))


@given(st.lists(_clean_row(), max_size=6))
def test_labels_are_each_clip_index_and_its_three_scores_in_row_order(rows):
    """Written out: row i holds, per labelled clip, [clip index, score 1, 2, 3]; a file
    whose rows never name relevant_clip_ids has no labels at all."""
    got = sl.saliency_labels(*sl.label_columns(rows))
    if not any("relevant_clip_ids" in r for r in rows):
        assert got is None
        return
    want = [[[float(c), *map(float, s)] for c, s in zip(r.get("relevant_clip_ids", []),
                                                      r.get("saliency_scores", []),
                                                      strict=True)] for r in rows]
    assert [got.values[a:b].tolist() for a, b in zip(got.offsets[:-1], got.offsets[1:],
                                                      strict=True)] == want
