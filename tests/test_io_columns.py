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

    from cover.io.columns import arrow_ids

    col = pa.array([3, 1, 2])
    assert arrow_ids(col, "qid", text=False)[0].dtype.kind == "i"
    assert arrow_ids(col, "qid")[0].tolist() == ["3", "1", "2"]
    assert arrow_ids(pa.array([3, None]), "qid", text=False)[1] == {
        1: "missing field(s): qid"}
