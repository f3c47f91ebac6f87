"""Per-query data behind the report's gallery and searchable table: for every test row
of a pair, truth, prediction, relevance signal, and the certified region of each family
at one target (thresholds calibrated on the whole pool). The relevance signal is stored
as its min, max and 100 levels in between (``v = lo + q (hi - lo) / 99``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from cover.calibrate.split import split_conformal
from cover.metrics import point_iou
from cover.regions import build_regions
from cover.studies.common import jsonify
from cover.studies.context import Pair


def query_records(pair: Pair, alpha: float = 0.1) -> dict[str, Any]:
    """``{"alpha", "thresholds": {family: lam}, "rows": [...]}`` for the test split."""
    test = pair.test
    thresholds: dict[str, float] = {}
    regions: dict[str, list[list[list[float]]]] = {}
    covered: dict[str, np.ndarray] = {}
    for fam in pair.families:
        lam = split_conformal(pair.sweep("pool", fam).scores, alpha=alpha, warn=False).value
        thresholds[fam] = lam
        reg = build_regions(test, fam, lam, min_scale=pair.min_scale)
        regions[fam] = reg.intervals.to_lists()
        covered[fam] = pair.sweep("test", fam).covered(np.array([lam]))[0]
    piou = point_iou(test)
    truth = test.require_truth().to_lists()
    rows = []
    for i in range(len(test)):
        rel = test.relevance.row(i)
        lo, hi = (float(rel.min()), float(rel.max())) if rel.size else (0.0, 0.0)
        # The signal only feeds a drawing: 100 levels between its min and max suffice.
        q = np.round(99 * (rel - lo) / (hi - lo)).astype(int) if hi > lo else \
            np.zeros(rel.size, dtype=int)
        rows.append({
            "qid": str(test.qid[i]), "vid": str(test.vid[i]),
            "query": "" if test.query is None or test.query[i] is None else str(test.query[i]),
            "duration": round(float(test.duration[i]), 3),
            "truth": [[round(a, 3), round(b, 3)] for a, b in truth[i]],
            "pred": None if not test.has_interval[i] else
            [round(float(test.pred_start[i]), 3), round(float(test.pred_end[i]), 3)],
            "point_iou": round(float(piou[i]), 4),
            "regions": {f: [[round(a, 3), round(b, 3)] for a, b in regions[f][i]]
                        for f in regions},
            "covered": {f: bool(covered[f][i]) for f in covered},
            "relevance": {"lo": lo, "hi": hi, "q": q.tolist()},
        })
    return jsonify({"alpha": alpha, "target": 1 - alpha, "clip": test.clip,
                    "thresholds": thresholds, "rows": rows})
