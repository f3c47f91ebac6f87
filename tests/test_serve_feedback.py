"""``POST /v1/feedback`` on the real server: online thresholds move, duplicates change
nothing, and ``kill -9`` loses no acknowledged feedback (a restart resumes the same
thresholds)."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from cli_files import synthetic
from cover.cli import main
from serve_server import HTTP, process_server


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("serve-fb")
    preds, gt = synthetic(d, n=60)
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--alpha", "0.2",
                 "--score", "sec", "-o", str(d / "cal.json")]) == 0
    return {"preds": preds, "gt": gt, "cal": d / "cal.json", "dir": d}


def _feedback(setup: dict[str, Path]) -> list[dict[str, object]]:
    gts = {str(r["qid"]): r for r in map(json.loads, setup["gt"].read_text().splitlines())}
    out = []
    for line in setup["preds"].read_text().splitlines():
        row = json.loads(line)
        g = gts[str(row["qid"])]
        out.append({"qid": row["qid"], "truth": g["relevant_windows"],
                    "prediction": {**row, "duration": g["duration"]}})
    return out


def test_feedback_persists_through_kill_9_and_duplicates_are_idempotent(setup):
    fb = _feedback(setup)
    state = setup["dir"] / "state.sqlite"
    args = ["--calibrator", f"main={setup['cal']}", "--state", str(state)]
    with process_server(args) as (base, proc):
        last = None
        for doc in fb[:30]:
            r = HTTP.post(f"{base}/v1/feedback", json=doc, timeout=10)
            assert r.status_code == 200, r.text
            last = r.json()
            assert last["duplicate"] is False and last["score"] is not None
        again = HTTP.post(f"{base}/v1/feedback", json=fb[3], timeout=10).json()
        assert again["duplicate"] is True and again["thresholds"] == last["thresholds"]
        before = HTTP.get(f"{base}/v1/status", timeout=10).json()["online"]["main"]
        assert before["feedback"] == 30 and before["thresholds"]["aci"] is not None
        proc.send_signal(signal.SIGKILL)  # no shutdown, no flush
        proc.wait(10)
    with process_server(args) as (base, _):
        after = HTTP.get(f"{base}/v1/status", timeout=10).json()["online"]["main"]
        assert after == before
        dup = HTTP.post(f"{base}/v1/feedback", json=fb[0], timeout=10).json()
        assert dup["duplicate"] is True
        nxt = HTTP.post(f"{base}/v1/feedback", json=fb[30], timeout=10).json()
        assert nxt["duplicate"] is False
        text = HTTP.get(f"{base}/metrics", timeout=10).text
        assert 'cover_feedback_total{calibrator="main"} 31' in text
        assert 'cover_drift_alarm{calibrator="main"} 0' in text


def test_feedback_errors_name_the_field(setup):
    from cover.serve import ServeOptions, build
    from serve_server import thread_server

    app = build(ServeOptions(calibrators=(("main", str(setup["cal"])),),
                             state=str(setup["dir"] / "errors.sqlite")))
    with thread_server(app) as base:
        for doc, words in [({"truth": [[1, 2]], "region": [[0, 3]]}, "qid"),
                           ({"qid": 1, "truth": [[2, 1]], "region": [[0, 3]]}, "truth"),
                           ({"qid": 1, "truth": [[1, 2]]}, "prediction"),
                           ({"qid": 1, "truth": [[1, 2]], "region": "x"}, "region")]:
            r = HTTP.post(f"{base}/v1/feedback", json=doc)
            assert r.status_code == 422 and words in r.json()["error"], r.text
        ok = HTTP.post(f"{base}/v1/feedback",
                        json={"qid": 9, "truth": [[1, 2]], "region": [[0, 3]]}).json()
        assert ok["covered"] is True and ok["score"] is None
