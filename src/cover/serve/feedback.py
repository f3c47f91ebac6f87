"""``POST /v1/feedback``: the true moment of a query the service certified.

Body: ``{"qid": ..., "truth": [[s, e], ...], "prediction": {row}}`` (the row certified,
in COVER's field names; its region is recomputed by the certify kernel and its score
computed against the truth) or ``{"qid", "truth", "region": [[s, e], ...]}`` (coverage
only: without the prediction there is no score, so ACI / DtACI / drift do not move).
``calibrator`` names the calibrator (default: the first).

Answer: ``{"qid", "calibrator", "covered", "duplicate", "score", "p_value",
"thresholds": {"fitted", "aci", "dtaci"}, "alarm": {...}}``. The feedback is committed
to the SQLite log before the answer; a second feedback for the same qid changes nothing
and answers ``"duplicate": true``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import numpy as np

from cover.intervals import Intervals
from cover.io.jsonl_batch import load_batch
from cover.io.seen import SeenIds
from cover.scores import compute_scores
from cover.serve.calibrators import Loaded
from cover.serve.certify import RequestError
from cover.serve.online import OnlineState
from cover.serve.store import FeedbackStore


def _windows(value: Any, field: str) -> list[list[float]]:
    ok = isinstance(value, list) and all(
        isinstance(w, list) and len(w) >= 2 and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
            for x in w[:2]) and w[0] <= w[1] for w in value)
    if not ok:
        raise RequestError(422, f"{field}: expected [[start, end], ...] in seconds, "
                           "start <= end")
    return [[float(w[0]), float(w[1])] for w in value]


def _scored(loaded: Loaded, qid: str, pred: Any, truth: list[list[float]]
            ) -> tuple[bool, float | None]:
    """Whether the prediction's certified region covers the truth, and its score."""
    if not isinstance(pred, dict):
        raise RequestError(422, "prediction: expected the prediction row (an object)")
    line = json.dumps({**pred, "qid": pred.get("qid", qid)}).encode()
    done = loaded.compact.run("feedback", [(1, line)], SeenIds())
    block = json.loads(b"".join(done.parts))["cover"]
    if block["status"] == "rejected" and block.get("region") is None:
        raise RequestError(422, f"prediction: {block.get('reason')}")
    k = loaded.kernel
    got = load_batch("feedback", [(1, line)], clip=k.clip, on_error="reject")
    table, _ = k.stage.with_durations(got.loaded.table)
    ts, te = min(w[0] for w in truth), max(w[1] for w in truth)
    table = dataclasses.replace(table, truth=Intervals.from_lists([truth]))
    cal = loaded.cal
    score = float(compute_scores(table, cal.score, min_scale=cal.min_scale,
                                 target=cal.target).values[0])
    region = block["region"] or []
    covered = bool(region) and bool(Intervals.from_lists([region]).contains(
        Intervals.single(np.array([ts]), np.array([te])))[0])
    return covered or block["status"] == "refused", score


def feedback(loaded: Loaded, state: OnlineState, store: FeedbackStore,
             doc: Any) -> dict[str, Any]:
    """Record one feedback (see the module docstring); runs in a worker thread."""
    if not isinstance(doc, dict):
        raise RequestError(400, "expected a JSON object {qid, truth, prediction | region}")
    qid = doc.get("qid")
    if not isinstance(qid, (str, int)) or isinstance(qid, bool):
        raise RequestError(422, "qid: expected the query id (text or a whole number)")
    qid = str(qid)
    truth = _windows(doc.get("truth"), "truth")
    if not truth:
        raise RequestError(422, "truth: expected at least one [start, end] window")
    if "prediction" in doc:
        covered, score = _scored(loaded, qid, doc["prediction"], truth)
    elif "region" in doc:
        region = _windows(doc["region"], "region")
        ts, te = min(w[0] for w in truth), max(w[1] for w in truth)
        covered = bool(region) and bool(Intervals.from_lists([region]).contains(
            Intervals.single(np.array([ts]), np.array([te])))[0])
        score = None
    else:
        raise RequestError(422, "feedback needs the prediction row it was certified from "
                           "(prediction) or its certified region (region)")
    with store.lock:  # the log's order is the fold's order
        before = store.add(loaded.name, qid, score, covered, truth)
        if before is None:
            got = state.apply(qid, score, covered)
        else:
            covered, score, got = before["covered"], before["score"], {"p_value": None}
    out = state.describe()
    return {"qid": qid, "calibrator": loaded.name, "covered": covered,
            "duplicate": before is not None,
            "score": score if score is None or math.isfinite(score) else str(score),
            "p_value": got["p_value"], "thresholds": out["thresholds"],
            "alarm": out["alarm"]}
