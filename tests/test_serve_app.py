"""The service's guard rails and its reports, on the real server: bearer token, body
limit (413), ``/v1/status``, Prometheus ``/metrics``, atomic calibrator reload."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from cli_files import synthetic
from cover.cli import main
from serve_server import HTTP, thread_server


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("serve-app")
    preds, gt = synthetic(d, n=60)
    for alpha in ("0.1", "0.3"):
        assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--alpha", alpha,
                     "-o", str(d / f"cal{alpha}.json")]) == 0
    shutil.copy(d / "cal0.1.json", d / "live.json")
    return {"preds": preds, "gt": gt, "dir": d}


@pytest.fixture(scope="module")
def base(setup: dict[str, Path]) -> object:
    from cover.jobs.certify_stream import videos_index
    from cover.serve.app import ServeConfig, create_app
    from cover.serve.calibrators import Sources

    src = Sources((("live", str(setup["dir"] / "live.json")),), videos_index(setup["gt"]),
                  "--videos", 2.0, False)
    app = create_app(ServeConfig(src, token="s3cret", max_body_bytes=4096))
    with thread_server(app) as url:
        yield url


AUTH = {"Authorization": "Bearer s3cret"}


def _row(setup: dict[str, Path]) -> dict[str, object]:
    return json.loads(setup["preds"].read_text().splitlines()[0])


def test_token_is_required_except_for_health(base, setup):
    assert HTTP.get(f"{base}/healthz").status_code == 200
    for bad in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "s3cret"}):
        r = HTTP.post(f"{base}/v1/certify", json=_row(setup), headers=bad)
        assert r.status_code == 401 and "bearer token" in r.json()["error"]
    assert HTTP.get(f"{base}/metrics", headers={}).status_code == 401
    assert HTTP.post(f"{base}/v1/certify", json=_row(setup), headers=AUTH).status_code == 200


def test_a_body_over_the_limit_is_413(base):
    big = b"[" + b" " * 5000 + b"]"
    r = HTTP.post(f"{base}/v1/certify", content=big, headers=AUTH)
    assert r.status_code == 413 and "--max-body-bytes" in r.json()["error"]

    def chunks():  # no Content-Length: counted while read
        for _ in range(10):
            yield b" " * 1000

    r = HTTP.post(f"{base}/v1/certify", content=chunks(), headers=AUTH)
    assert r.status_code == 413


def test_status_and_metrics_count_requests_and_rows(base, setup):
    rows = [json.loads(x) for x in setup["preds"].read_text().splitlines()[:5]]
    assert HTTP.post(f"{base}/v1/certify", json=rows, headers=AUTH).status_code == 200
    doc = HTTP.get(f"{base}/v1/status", headers=AUTH).json()
    assert doc["default_calibrator"] == "live" and doc["calibrators"][0]["alpha"] == 0.1
    assert sum(doc["rows"].values()) >= 5 and doc["requests"]["/v1/certify"] >= 1
    text = HTTP.get(f"{base}/metrics", headers=AUTH).text
    assert "# TYPE cover_request_seconds histogram" in text
    assert 'cover_request_seconds_bucket{path="/v1/certify",le="+Inf"}' in text
    assert 'cover_requests_total{path="/v1/certify",code="200"}' in text
    assert 'cover_rows_total{status="certified"}' in text


def test_reload_swaps_the_calibrator_or_keeps_it_when_the_file_is_bad(base, setup):
    d = setup["dir"]
    alpha = lambda: HTTP.post(f"{base}/v1/certify", json=_row(setup),  # noqa: E731
                               headers=AUTH).json()["results"][0]["cover"]["alpha"]
    assert alpha() == 0.1
    shutil.copy(d / "cal0.3.json", d / "live.json")
    r = HTTP.post(f"{base}/v1/reload", headers=AUTH)
    assert r.status_code == 200 and r.json()["generation"] == 2
    assert alpha() == 0.3
    (d / "live.json").write_text("{broken")
    r = HTTP.post(f"{base}/v1/reload", headers=AUTH)
    assert r.status_code == 422 and "calibrators in use are kept" in r.json()["error"]
    assert alpha() == 0.3


def test_a_reload_under_traffic_never_mixes_calibrators(setup):
    """Every row of one request comes from one calibrator set, while another thread
    reloads between two different files."""
    import threading

    from cover.serve.calibrators import Live, Sources
    from cover.serve.certify import certify_request, parse_body

    d = setup["dir"]
    shutil.copy(d / "cal0.1.json", d / "mix.json")
    from cover.jobs.certify_stream import videos_index

    live = Live(Sources((("m", str(d / "mix.json")),), videos_index(setup["gt"]), "--videos",
                        2.0, False))
    body = setup["preds"].read_bytes()
    stop = threading.Event()

    def flip() -> None:
        i = 0
        while not stop.is_set():
            shutil.copy(d / f"cal{('0.1', '0.3')[i % 2]}.json", d / "mix.json")
            live.reload()
            i += 1

    t = threading.Thread(target=flip)
    t.start()
    try:
        for _ in range(15):
            got = certify_request(live.current, parse_body(body, {}))
            results = json.loads(got.body)["results"]
            assert len(results) == 60
            assert len({r["cover"]["alpha"] for r in results}) == 1
    finally:
        stop.set()
        t.join()
