"""Column readers keep every predicted window, so the field's mAP is right for them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cover.grounding_metrics import grounding_metrics
from cover.io.labelled import load_labelled


def test_generic_copy_of_qvhighlights_has_the_moment_detr_readers_map(
        tmp_path: Path, qvh_gt: Path, qdetr_preds: Path) -> None:
    rows = [json.loads(x) for x in qdetr_preds.read_text().splitlines()]
    scored = tmp_path / "scored.json"  # one JSON document keyed by qid, windows with scores
    scored.write_text(json.dumps({str(r["qid"]): {"video": r["vid"],
                                                  "moments": r["pred_relevant_windows"]}
                                  for r in rows}))
    ranked = tmp_path / "ranked.jsonl"  # [s, e] pairs ranked by list order, no score
    ranked.write_text("\n".join(json.dumps(
        {"id": r["qid"], "video": r["vid"], "moments": [w[:2] for w in sorted(
            r["pred_relevant_windows"], key=lambda w: -w[2])]}) for r in rows) + "\n")
    want_table, _ = load_labelled(qdetr_preds, qvh_gt)
    want = grounding_metrics(want_table)
    assert want.map > 30.0
    for path, columns in ((scored, "qid=key,vid=video,windows=moments"),
                          (ranked, "qid=id,vid=video,windows=moments")):
        table, _ = load_labelled(path, qvh_gt, columns=columns)
        assert table.pred_windows is not None
        assert np.diff(table.pred_windows.offsets).max() > 1
        got = grounding_metrics(table)
        assert got.map == want.map, path.name
        assert got.full.to_dict() == want.full.to_dict()


def test_integer_ids_stay_integers_when_asked() -> None:
    import pyarrow as pa

    from cover.io.arrow_columns import arrow_ids

    col = pa.array([3, 1, 2])
    assert arrow_ids(col, "qid", text=False)[0].dtype.kind == "i"
    assert arrow_ids(col, "qid")[0].tolist() == ["3", "1", "2"]
    assert arrow_ids(pa.array([3, None]), "qid", text=False)[1] == {
        1: "missing field(s): qid"}


def test_a_window_side_that_is_no_number_says_so(tmp_path: Path) -> None:
    """A CSV row with its start cell empty, or written inf, is rejected naming what a
    column can hold there (it said "non-finite number", which an empty cell is not);
    both cells empty is a refusal, certified as the whole video."""
    from cover.io.formats import Options, read

    path = tmp_path / "p.csv"
    path.write_text("qid,vid,duration,start,end\n1,v1,150,,20\n2,v2,150,inf,20\n"
                    "3,v3,150,,\n4,v4,150,5,20\n")
    got = read(path, "predictions", options=Options(
        on_error="reject", columns="qid=qid,vid=vid,duration=duration,start=start,end=end"))
    why = {p.qid: p.problem for p in got.loaded.problems if p.action == "rejected"}
    want = "a predicted window's start or end is no finite number (empty, null, NaN or inf)"
    assert why == {"1": want, "2": want}
    assert got.loaded.table.qid.tolist() == ["3", "4"]
