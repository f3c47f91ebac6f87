"""Proxy mode on the real server, in front of a fake OpenAI-compatible upstream on
loopback: answers come back unchanged plus their ``cover`` object (certified as
``cover certify`` certifies the same prediction row; refusals and prompt echoes refused,
the whole video); a slow, failing or garbled upstream is a 504 / 502 naming it, never a
500; streamed answers pass through, then one ``cover`` event, then ``[DONE]``."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from cli_files import synthetic, write_jsonl
from cover.cli import main
from serve_server import HTTP, free_port, thread_server

ANSWERS = {
    "ok": "The moment happens from 12.0 to 18.5 seconds.",
    "refuse": "I cannot determine when this happens in the video.",
    "echo": "For example: from 30.0 to 40.0 seconds.",
}
EXAMPLE = "For example: from 30.0 to 40.0 seconds."
SEEN: list[dict[str, Any]] = []  # request bodies the upstream received


def completion(text: str) -> dict[str, Any]:
    return {"id": "cmpl-1", "object": "chat.completion", "created": 1, "model": "fake",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 9}}


def upstream_app() -> Any:
    """Behaviour by the request's ``model``: ok / refuse / echo answers, slow (past the
    proxy's timeout), boom (500), garbled (200, not JSON), bad (400)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    async def chat(request: Request) -> Response:
        body = await request.json()
        SEEN.append(body)
        model = body.get("model")
        if model == "slow":
            await asyncio.sleep(1.5)
        if model == "boom":
            return JSONResponse({"error": "CUDA out of memory"}, status_code=500)
        if model == "garbled":
            return Response(b'{"id": "x", "choices": [', media_type="application/json")
        if model == "bad":
            return JSONResponse({"error": {"message": "unknown model"}}, status_code=400)
        text = ANSWERS.get(model, ANSWERS["ok"])
        if not body.get("stream"):
            return JSONResponse(completion(text))

        async def events() -> Any:
            for i, piece in enumerate(text.split(" ")):
                chunk = {"id": "cmpl-s", "object": "chat.completion.chunk", "created": 1,
                         "model": "fake", "choices": [{"index": 0, "delta": {
                             "content": piece if i == 0 else " " + piece}}]}
                yield f"data: {json.dumps(chunk)}\n\n".encode()
                if i == 0:
                    await asyncio.sleep(0.3)  # the first piece must reach the client now
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True})

    return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                             Route("/healthz", health)])


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("proxy")
    preds, gt = synthetic(d, n=60)
    cal = d / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "-o", str(cal)]) == 0
    return {"cal": cal, "gt": gt, "dir": d}


def _service(files: dict[str, Path], upstream: str) -> Any:
    from cover.serve import ServeOptions, build

    return build(ServeOptions(calibrators=(("main", str(files["cal"])),),
                              videos=str(files["gt"]), upstream=upstream,
                              upstream_timeout=0.5,
                              state=str(files["dir"] / f"state-{free_port()}.sqlite")))


@pytest.fixture(scope="module")
def base(files: dict[str, Path]) -> Any:
    with thread_server(upstream_app()) as up, \
            thread_server(_service(files, f"{up}/v1")) as url:
        yield url


def chat(base: str, model: str, **cover: Any) -> httpx.Response:
    body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": "Q"}]}
    if cover:
        body["cover"] = cover
    return HTTP.post(f"{base}/v1/chat/completions", json=body, timeout=10)


def _cli_block(files: dict[str, Path], row: dict[str, Any]) -> dict[str, Any]:
    src = write_jsonl(files["dir"] / "row.jsonl", [row])
    out = files["dir"] / "row-out.jsonl"
    assert main(["certify", "--calibrator", str(files["cal"]), "--preds", str(src),
                 "-o", str(out), "--compact"]) == 0
    return json.loads(out.read_text())["cover"]


def test_an_answer_is_returned_unchanged_with_the_region_cover_certify_gives(files, base):
    r = chat(base, "ok", duration=150.0, qid="q1")
    assert r.status_code == 200, r.text
    assert "cover" not in SEEN[-1] and SEEN[-1]["model"] == "ok"  # stripped upstream
    got = r.json()
    cover = got.pop("cover")
    assert got == completion(ANSWERS["ok"])
    assert cover["parse"] == "ok" and cover["intervals"] == [[12.0, 18.5]]
    assert cover["status"] == "certified" and cover["calibrator"] == "main"
    want = _cli_block(files, {"qid": "q1", "vid": "q1", "duration": 150.0,
                              "pred_relevant_windows": [[12.0, 18.5, 1.0]]})
    assert {k: cover[k] for k in want} == want


def test_a_refusal_and_a_prompt_echo_are_refused_as_the_whole_video(base):
    for model, parse in (("refuse", "refusal"), ("echo", "echo")):
        r = chat(base, model, duration=150.0, prompt_examples=[EXAMPLE])
        cover = r.json()["cover"]
        assert r.status_code == 200 and cover["parse"] == parse, cover
        assert cover["status"] == "refused" and cover["refused"] is True
        assert cover["region"] == [[0.0, 150.0]]
    # Without the example in the request, the same text is an ordinary answer.
    assert chat(base, "echo", duration=150.0).json()["cover"]["parse"] == "ok"


def test_without_a_duration_the_answer_comes_back_rejected(base):
    r = chat(base, "ok")
    assert r.status_code == 200
    got = r.json()
    assert got["choices"][0]["message"]["content"] == ANSWERS["ok"]
    assert got["cover"]["status"] == "rejected" and got["cover"]["region"] is None
    assert got["cover"]["reason"] == "no video duration given (cover.duration)"
    assert got["cover"]["parse"] == "ok"
    # A vid known to --videos gives the duration.
    vid = "v0_0.0_150.0"
    assert chat(base, "ok", vid=vid).json()["cover"]["duration"] == 150.0


def test_upstream_failures_are_502_or_504_naming_the_upstream(base):
    cases = {"slow": (504, "did not answer within 0.5 s (--upstream-timeout)"),
             "boom": (502, "answered HTTP 500: {\"error\":\"CUDA out of memory\"}"),
             "garbled": (502, "answered malformed JSON")}
    for model, (code, text) in cases.items():
        r = chat(base, model, duration=150.0)
        assert r.status_code == code, r.text
        assert text in r.json()["error"] and "/v1/chat/completions" in r.json()["upstream"]
    r = chat(base, "bad", duration=150.0)  # the request's own fault: passed through
    assert r.status_code == 400 and r.json() == {"error": {"message": "unknown model"}}


def test_an_unreachable_upstream_is_502(files):
    with thread_server(_service(files, f"http://127.0.0.1:{free_port()}/v1")) as url:
        r = chat(url, "ok", duration=150.0)
    assert r.status_code == 502 and "cannot reach the upstream" in r.json()["error"]


def test_bad_cover_fields_are_4xx_before_anything_is_forwarded(base):
    n = len(SEEN)
    r = chat(base, "ok", duration=-3)
    assert r.status_code == 400 and r.json()["error"].startswith("cover.duration: expected")
    r = chat(base, "ok", duration=150.0, calibrator="nope")
    assert r.status_code == 404 and "no calibrator named 'nope'" in r.json()["error"]
    assert len(SEEN) == n


def test_a_stream_passes_through_then_one_cover_event_then_done(base):
    body = {"model": "ok", "stream": True, "messages": [], "cover": {"duration": 150.0}}
    events: list[tuple[float, str]] = []
    with HTTP.stream("POST", f"{base}/v1/chat/completions", json=body, timeout=10) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        for line in r.iter_lines():
            if line.startswith("data: "):
                events.append((time.perf_counter(), line[6:]))
    assert events[-1][1] == "[DONE]"
    assert sum(e[1] == "[DONE]" for e in events) == 1
    chunks = [json.loads(e[1]) for e in events[:-1]]
    text = "".join(c["choices"][0]["delta"]["content"] for c in chunks[:-1])
    assert text == ANSWERS["ok"]
    last = chunks[-1]
    assert last["choices"] == [] and last["id"] == "cmpl-s"
    assert last["cover"] == chat(base, "ok", duration=150.0).json()["cover"]
    # Passed through as it came: the first piece arrived before the upstream's pause ended.
    assert events[-2][0] - events[0][0] > 0.2


def test_metrics_and_status_count_proxied_answers(base):
    chat(base, "refuse", duration=150.0)
    doc = HTTP.get(f"{base}/v1/status").json()["proxy"]
    assert doc["parse"]["refusal"] >= 1 and doc["answers"]["refused"] >= 1
    assert doc["upstream_calls"] >= 1
    text = HTTP.get(f"{base}/metrics").text
    assert 'cover_proxy_parse_total{parse="refusal"}' in text
    assert 'cover_proxy_answers_total{status="refused"}' in text
    assert "cover_upstream_seconds_count " in text
    assert 'cover_requests_total{path="/v1/chat/completions",code="200"}' in text


def test_a_stream_request_to_a_failing_upstream_is_502_before_any_event(base):
    body = {"model": "boom", "stream": True, "messages": [], "cover": {"duration": 150.0}}
    r = HTTP.post(f"{base}/v1/chat/completions", json=body, timeout=10)
    assert r.status_code == 502 and "answered HTTP 500" in r.json()["error"]


def test_upstream_must_be_an_http_url(files, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["serve", "--calibrator", str(files["cal"]), "--upstream", "ftp://gpu/v1"])
    assert exc.value.code == 2
    assert "--upstream: expected an http:// or https:// URL" in capsys.readouterr().err


def test_an_answer_finds_its_querys_duration_where_videos_is_read_by_qid(files):
    """With --videos a ground truth read by qid (UAG-OOPS's clips), the answer's duration
    is its query's, as /v1/certify's rows find theirs (the stage's rule); the answer
    looked its vid up in that index, found none and came back rejected."""
    import numpy as np

    from cover.io.video_index import VideoIndex
    from cover.serve.calibrators import Sources, load_set
    from cover.serve.chat import CoverFields, certify_answer

    index = VideoIndex.of(np.array(["q1"]), np.array([120.0]), by="qid")
    loaded = load_set(Sources((("main", str(files["cal"])),), index, "gt.json", 2.0, False),
                      0).get(None)
    got = certify_answer(loaded, CoverFields(qid="q1", vid="a compilation"), ANSWERS["ok"],
                         index)
    assert got["status"] == "certified" and got["duration"] == 120.0
    miss = certify_answer(loaded, CoverFields(qid="q2", vid="a compilation"), ANSWERS["ok"],
                          index)
    assert miss["status"] == "rejected"
    assert miss["reason"].endswith("; query 'q2' is not in --videos")
