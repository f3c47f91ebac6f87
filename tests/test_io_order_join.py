"""The join by order within each video (:mod:`cover.io.order_join`): a prediction named
``<vid>-<k>`` meets the k-th query of its video in the ground truth's file order, the rows
the reader rejected holding their places, whatever the videos' interleaving."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.data.table import GroundingTable
from cover.io.order_join import join_truth, named_by_place
from cover.ragged import Ragged


def _table(qid: list[str], vid: list[str], query: list[str], duration: list[float],
           line: list[int] | None = None) -> GroundingTable:
    n = len(qid)
    return GroundingTable(qid=np.array(qid, dtype=str), vid=np.array(vid, dtype=str),
                          pred_start=np.zeros(n), pred_end=np.ones(n),
                          duration=np.array(duration, dtype=np.float64),
                          relevance=Ragged(np.empty(0), np.zeros(n + 1, dtype=np.int64)),
                          query=np.array(query, dtype=object),
                          line=None if line is None else np.array(line, dtype=np.int64))


@st.composite
def _files(draw):
    """Queries of a few videos in an interleaved file order, which of them the reader
    rejected (not all), and each query's own duration (its identity)."""
    sizes = draw(st.lists(st.integers(1, 5), min_size=1, max_size=4))
    vids = [f"v{i}" for i, k in enumerate(sizes) for _ in range(k)]
    order = draw(st.permutations(range(len(vids))))
    rows = [vids[i] for i in order]  # the file's rows, by line
    rejected = draw(st.lists(st.booleans(), min_size=len(rows), max_size=len(rows))
                    .filter(lambda r: not all(r)))
    return rows, rejected


@settings(max_examples=200, deadline=None)
@given(_files())
def test_each_prediction_meets_its_own_query_and_rejected_rows_hold_their_places(files):
    rows, rejected = files
    place: dict[str, int] = {}
    names = []
    for v in rows:  # each row's name: its place among its video's rows, in file order
        names.append(f"{v}-{place.get(v, 0)}")
        place[v] = place.get(v, 0) + 1
    kept = [i for i, r in enumerate(rejected) if not r]
    gt = _table([str(1000 + i) for i in kept], [rows[i] for i in kept],
                [f"query {i}" for i in kept], [float(i + 1) for i in kept],
                line=[i + 1 for i in kept])
    held = {(i + 1, str(1000 + i)): {"vid": rows[i]} for i, r in enumerate(rejected) if r}
    preds = _table(names, rows, [f"other {i}" for i in range(len(rows))],
                   [float("nan")] * len(rows))
    assert named_by_place(preds.qid, preds.vid)
    got = join_truth(preds, gt, held)
    assert got.how == "order within each video" and got.matched == len(kept)
    duration = dict(zip(got.gt.qid.tolist(), got.gt.duration.tolist(), strict=True))
    for i in kept:  # the truth a prediction meets is its own query's
        assert duration[names[i]] == float(i + 1)
    assert sorted(got.rejected.tolist()) == sorted(n for n, r in zip(names, rejected,
                                                                       strict=True) if r)


def test_named_by_place_wants_the_rows_own_video_and_a_number():
    assert named_by_place(np.array(["v1-0", "a-b-12"]), np.array(["v1", "a-b"]))
    assert not named_by_place(np.array(["v1-0"]), np.array(["v2"]))
    assert not named_by_place(np.array(["v1-x"]), np.array(["v1"]))
    assert not named_by_place(np.array([], dtype=str), np.array([], dtype=str))
