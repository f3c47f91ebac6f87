"""``cover ground`` end to end against a local server that speaks the OpenAI chat protocol
(slow, failing-then-succeeding, refusing, echoing and broken answers), on videos written
in the test. No external network: the server listens on 127.0.0.1."""

from __future__ import annotations

import base64
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from cover.cli import main
from cover.grounders.endpoint import (
    PROMPT_EXAMPLE,
    ChatClient,
    EndpointError,
    answer_text,
    chat_url,
)
from cover.io import read_predictions
from videos import write_video

MODEL = "test-vlm"
FRAMES = 4


class FakeVLM:
    """Behaviour per query keyword; counts requests and the most ever in flight."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: Counter[str] = Counter()
        self.inflight = 0
        self.max_inflight = 0
        self.broken = True
        self.bad: list[str] = []

    def reply(self, body: dict[str, Any]) -> tuple[int, str]:
        parts = body["messages"][0]["content"]
        texts = [p["text"] for p in parts if p["type"] == "text"]
        images = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
        duration = float(re.search(r"lasts ([\d.]+) seconds", texts[0]).group(1))
        times = [float(re.search(r"Frame at ([\d.]+) s:", t).group(1)) for t in texts[1:-1]]
        query = re.search(r'description: "(.*)"\.', texts[-1]).group(1)
        ok = (body["model"] == MODEL and body["temperature"] == 0 and len(images) == FRAMES
              and len(times) == FRAMES and all(0 <= t <= duration for t in times)
              and all(base64.b64decode(u.split(",", 1)[1])[:2] == b"\xff\xd8" for u in images)
              and PROMPT_EXAMPLE in texts[-1])
        if not ok:
            self.bad.append(query)
            return 400, "bad request"
        with self.lock:
            self.calls[query] += 1
            n = self.calls[query]
        time.sleep(0.05)
        if "slow" in query and n == 1:
            time.sleep(2.0)  # longer than the client's timeout: it retries
        if "flaky" in query and n <= 2:
            return (503, "overloaded") if n == 1 else (500, "oops")
        if "broken" in query and self.broken:
            return 500, "internal error"
        if "invalid" in query:
            return 400, "this model does not take images"
        if "refuse" in query:
            return 200, "I'm sorry, but I cannot determine when that happens."
        if "echo" in query:
            return 200, PROMPT_EXAMPLE
        return 200, f"The moment happens from 0.5 to {duration - 0.5:.1f} seconds."


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        fake: FakeVLM = self.server.fake  # type: ignore[attr-defined]
        with fake.lock:
            fake.inflight += 1
            fake.max_inflight = max(fake.max_inflight, fake.inflight)
        try:
            if self.path != "/v1/chat/completions":
                code, text = 404, "not found"
            else:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                code, text = fake.reply(body)
            payload = (json.dumps({"choices": [{"index": 0, "message": {
                "role": "assistant", "content": text}}]}) if code == 200
                else json.dumps({"error": text})).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up on a slow answer
        finally:
            with fake.lock:
                fake.inflight -= 1

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, FakeVLM]]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    fake = FakeVLM()
    httpd.fake = fake  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", fake
    finally:
        httpd.shutdown()
        httpd.server_close()


QUERIES = [
    (101, "va", "a person opens the door"),
    (102, "vb", "flaky moment"),
    (103, "vc", "refuse this one"),
    (104, "va", "slow moment"),
    (105, "vb", "echo the example"),
    (106, "vc", "broken server moment"),
    (107, "va", "invalid request"),
    (108, "vb", "someone waves"),
    (109, "vbad", "a damaged video"),
]


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    vids = tmp_path / "videos"
    vids.mkdir()
    for name, seconds in (("va", 2.0), ("vb", 3.0), ("vc", 4.0)):
        write_video(vids / f"{name}.mp4", seconds=seconds)
    (vids / "vbad.mp4").write_bytes(b"this is not a video")
    q = tmp_path / "q.jsonl"
    q.write_text("".join(json.dumps({"qid": i, "vid": v, "query": t}) + "\n"
                         for i, v, t in QUERIES))
    return vids, q


def test_ground_end_to_end_with_retries_refusals_and_resume(tmp_path, server, capsys):
    url, fake = server
    vids, q = _setup(tmp_path)
    out = tmp_path / "preds.jsonl"
    cmd = ["ground", "--endpoint", url, "--model", MODEL, "--videos", str(vids), "--queries",
           str(q), "-o", str(out), "--frames", str(FRAMES), "--concurrency", "3",
           "--timeout", "1.0", "--retries", "3", "--backoff", "0.01"]
    assert main(cmd) == 0
    assert fake.bad == []  # every request carried the documented prompt
    assert fake.max_inflight <= 3
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["qid"] for r in rows] == [i for i, _, _ in QUERIES]  # query order, int qids
    by = {r["qid"]: r for r in rows}
    assert by[101]["pred_relevant_windows"] == [[0.5, 1.5, 1.0]]
    assert by[101]["answer"].startswith("The moment happens") and by[101]["duration"] == 2.0
    assert by[101]["answer_parse"]["status"] == "ok" and len(by[101]["frame_times"]) == FRAMES
    assert by[102]["answer_parse"]["status"] == "ok" and by[102]["attempts"] >= 3
    assert by[103]["answer_parse"]["status"] == "refusal"
    assert by[103]["pred_relevant_windows"] == [] and "sorry" in by[103]["answer"]
    assert by[104]["answer_parse"]["status"] == "ok" and by[104]["attempts"] >= 2
    assert by[105]["answer_parse"]["status"] == "echo" and by[105]["pred_relevant_windows"] == []
    assert by[106]["answer"] is None and by[106]["attempts"] == 4
    assert by[106]["answer_parse"]["unanswered"] and "HTTP 500" in \
        by[106]["answer_parse"]["reason"]
    assert by[107]["attempts"] == 1 and "HTTP 400" in by[107]["answer_parse"]["reason"]
    assert by[109]["answer_parse"]["unanswered"] and "video:" in \
        by[109]["answer_parse"]["reason"] and by[109]["attempts"] == 0
    assert "a damaged video" not in fake.calls  # never sent
    table = read_predictions(out).table
    assert len(table) == 9 and int(table.has_interval.sum()) == 4
    said = capsys.readouterr().out
    assert "0 answered in an earlier run (log), 9 asked now; 3 without an answer" in said

    # Rerun: only the two failed queries are asked again; the server is fixed meanwhile.
    fake.broken = False
    before = dict(fake.calls)
    assert main(cmd) == 0
    asked = {k for k in fake.calls if fake.calls[k] != before.get(k, 0)}
    assert asked == {"broken server moment", "invalid request"}
    by = {r["qid"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert by[106]["answer_parse"]["status"] == "ok"
    assert by[101]["answer"] == rows[0]["answer"]
    assert "6 answered in an earlier run (log), 3 asked now; 2 without an answer" in \
        capsys.readouterr().out

    # A torn last line (interrupted write) is skipped; nothing is asked twice.
    log = Path(f"{out}.log")
    with log.open("a") as fh:
        fh.write('{"qid": "108", "vid": "vb", "ans')
    before = dict(fake.calls)
    assert main(cmd) == 1  # both queries asked again failed again: said, and not 0
    assert fake.calls["invalid request"] == before["invalid request"] + 1
    assert all(fake.calls[k] == before[k] for k in before if k != "invalid request")
    said = capsys.readouterr()
    assert "skipped 1 unreadable log line" in said.out
    assert "every request failed (2 of 2 asked)" in said.err and "1 x HTTP 400" in said.err
    assert len(read_predictions(out).table) == 9

    # Other settings on the same log are refused, not mixed.
    assert main([x if x != str(FRAMES) else "2" for x in cmd]) == 2
    assert "write to another output" in capsys.readouterr().err


def test_missing_video_is_named(tmp_path, server, capsys):
    url, _ = server
    vids, q = _setup(tmp_path)
    (vids / "vc.mp4").unlink()
    cmd = ["ground", "--endpoint", url, "--model", MODEL, "--videos", str(vids), "--queries",
           str(q), "-o", str(tmp_path / "p.jsonl"), "--frames", str(FRAMES)]
    assert main(cmd) == 2
    assert "qid=103" in capsys.readouterr().err and not (tmp_path / "p.jsonl").exists()


def test_client_helpers_and_connection_refused():
    assert chat_url("http://h:1/v1") == "http://h:1/v1/chat/completions"
    assert chat_url("http://h:1") == "http://h:1/v1/chat/completions"
    assert chat_url("http://h:1/v1/chat/completions/") == "http://h:1/v1/chat/completions"
    assert answer_text({"choices": [{"message": {"content": [{"type": "text", "text": "a"},
                                                             {"type": "text", "text": "b"}]}}]}) \
        == "ab"
    with pytest.raises(ValueError, match="choices"):
        answer_text({"error": "x"})
    waits: list[float] = []
    with ChatClient("http://127.0.0.1:9/v1", MODEL, timeout=0.5, retries=3, backoff=0.5,
                    max_backoff=1.5, sleep=waits.append, jitter=lambda cap: cap) as client, \
            pytest.raises(EndpointError, match="gave up after 4 attempts") as err:
        client.complete([{"role": "user", "content": "hi"}])
    assert err.value.attempts == 4 and "ConnectError" in str(err.value)
    assert waits == [0.5, 1.0, 1.5]  # the jitter's cap: exponential, capped


# ---- bounded requests: a whole-request deadline and a response size limit ---------------
class Hostile(BaseHTTPRequestHandler):
    """Misbehaves by the keyword in the request: trickles the body or the headers a byte
    at a time, announces a huge body, or streams one past any limit."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        try:
            if "trickle-headers" in body:
                self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                for _ in range(60):
                    self.wfile.write(b"X-Slow: 1\r\n")
                    self.wfile.flush()
                    time.sleep(0.1)
            elif "trickle" in body:
                self.send_response(200)
                self.send_header("Content-Length", "1000")
                self.end_headers()
                for _ in range(60):  # a byte every 0.1 s: each read is quick, the whole is not
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.1)
            elif "announce" in body:
                self.send_response(200)
                self.send_header("Content-Length", str(100 * 1024 * 1024))
                self.end_headers()
                self.wfile.write(b'{"choices": [{"message": {"content": "' + b"x" * 5000)
            else:  # no Content-Length: an answer streamed until the connection closes
                self.send_response(200)
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(b'{"choices": [{"message": {"content": "')
                for _ in range(200):
                    self.wfile.write(b"12.0 - 18.5 seconds " * 50)
                self.wfile.write(b'"}}]}')
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up, as it should

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def hostile() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.parametrize("what", ["trickle", "trickle-headers"])
def test_the_timeout_bounds_the_whole_request(hostile: str, what: str) -> None:
    t0 = time.monotonic()
    with ChatClient(hostile, MODEL, timeout=0.5, retries=0) as client, \
            pytest.raises(EndpointError) as err:
        client.complete([{"role": "user", "content": what}])
    took = time.monotonic() - t0
    assert took < 1.5, took  # the server would go on for 6 s
    assert str(err.value) == ("gave up after 1 attempts (TimeoutError: no complete response "
                              "within 0.5 s)")


@pytest.mark.parametrize(("what", "message"), [
    ("announce", "the response is 104857600 bytes, more than the limit of 1000 bytes "
                 "(--max-response-bytes); not kept"),
    ("stream", "the response is longer than the limit of 1000 bytes (--max-response-bytes); "
               "not kept"),
])
def test_a_response_past_the_size_limit_fails_unkept(hostile: str, what: str,
                                                     message: str) -> None:
    t0 = time.monotonic()
    with ChatClient(hostile, MODEL, timeout=5, retries=3, max_response_bytes=1000) as client, \
            pytest.raises(EndpointError) as err:
        client.complete([{"role": "user", "content": what}])
    assert str(err.value) == message and err.value.attempts == 1  # never retried
    assert time.monotonic() - t0 < 2


def test_the_client_checks_its_settings() -> None:
    with pytest.raises(ValueError, match=r"timeout must be a finite number > 0, got 0; "
                                         r"retries must be an integer >= 0, got -1"):
        ChatClient("http://h/v1", MODEL, timeout=0, retries=-1)


def _one_query_run(tmp_path: Path, url: str, text: str, *extra: str) -> list[str]:
    vids = tmp_path / "videos"
    vids.mkdir(exist_ok=True)
    write_video(vids / "va.mp4", seconds=1.0)
    q = tmp_path / "q.jsonl"
    q.write_text("".join(json.dumps({"qid": i, "vid": "va", "query": f"{text} {i}"}) + "\n"
                         for i in (1, 2)))
    return ["ground", "--endpoint", url, "--model", MODEL, "--videos", str(vids),
            "--queries", str(q), "-o", str(tmp_path / "p.jsonl"), "--frames", "2",
            "--retries", "0", *extra]


def test_a_run_where_every_request_failed_exits_non_zero(tmp_path, hostile, capsys):
    cmd = _one_query_run(tmp_path, hostile, "stream", "--max-response-bytes", "1000")
    assert main(cmd) == 1
    err = capsys.readouterr().err
    assert "cover: error: every request failed (2 of 2 asked)" in err
    assert ("2 x the response is longer than the limit of 1000 bytes (--max-response-bytes); "
            "not kept (e.g. qid=") in err
    out, log = tmp_path / "p.jsonl", tmp_path / "p.jsonl.log"
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["pred_relevant_windows"] for r in rows] == [[], []]  # refusals, not lost
    assert all(r["answer_parse"]["unanswered"] for r in rows)
    assert log.stat().st_size < 2000 and out.stat().st_size < 2000  # the body was not kept


def test_a_run_with_answers_exits_zero(tmp_path, server, capsys):
    url, _ = server
    cmd = _one_query_run(tmp_path, url, "someone waves")
    cmd[cmd.index("--frames") + 1] = str(FRAMES)
    assert main(cmd) == 0
    assert "every request failed" not in capsys.readouterr().err


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--retries", "-1", "argument --retries: must be a whole number >= 0, got -1"),
    ("--timeout", "0", "argument --timeout: must be a finite number > 0, got 0"),
    ("--timeout", "-1", "argument --timeout: must be a finite number > 0, got -1"),
    ("--backoff", "-1", "argument --backoff: must be a finite number >= 0, got -1"),
    ("--max-side", "0", "argument --max-side: must be a whole number >= 1, got 0"),
    ("--max-tokens", "0", "argument --max-tokens: must be a whole number >= 1, got 0"),
    ("--frames", "0", "argument --frames: must be a whole number >= 1, got 0"),
    ("--concurrency", "0", "argument --concurrency: must be a whole number >= 1, got 0"),
    ("--max-response-bytes", "0",
     "argument --max-response-bytes: must be a whole number >= 1, got 0"),
    ("--frames", "2.5", "argument --frames: expected a whole number, got 2.5"),
])
def test_numeric_flags_are_checked_up_front(tmp_path, capsys, flag, value, message):
    cmd = _one_query_run(tmp_path, "http://127.0.0.1:9/v1", "q")
    with pytest.raises(SystemExit) as exit_:
        main([*cmd, flag, value])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "p.jsonl.log").exists()  # nothing was started


@pytest.mark.parametrize(("vid", "why"), [("../outside", "has a '..' part"),
                                         ("ABS", "is an absolute path"),
                                         ("sub/../../outside", "has a '..' part")])
def test_a_vid_reaching_outside_videos_is_refused(tmp_path, server, capsys, vid, why):
    url, fake = server
    write_video(tmp_path / "outside.mp4", seconds=1.0)  # a video the query must not reach
    (tmp_path / "videos" / "sub").mkdir(parents=True)
    if vid == "ABS":
        vid = str(tmp_path / "outside")
    cmd = _one_query_run(tmp_path, url, "someone waves")
    q = tmp_path / "q.jsonl"
    q.write_text(q.read_text() + json.dumps({"qid": 7, "vid": vid, "query": "sneaky"}) + "\n")
    before = q.read_bytes()
    assert main(cmd) == 2
    err = capsys.readouterr().err
    assert f"q.jsonl:3 (qid=7): the vid {json.dumps(vid)[:20]}" in err
    assert f"{why}: a video must be a file inside" in err and not fake.calls  # nothing sent
    assert q.read_bytes() == before and not (tmp_path / "p.jsonl").exists()
    cmd[cmd.index("--frames") + 1] = str(FRAMES)
    assert main([*cmd, "--on-error", "reject"]) == 0  # set aside, the others asked
    rows = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert [r["qid"] for r in rows] == [1, 2] and "sneaky" not in fake.calls
    assert "1 row(s) rejected" in capsys.readouterr().err


# ---- httpx: connection reuse, Retry-After, jittered backoff ------------------------------
class KeepAlive(BaseHTTPRequestHandler):
    """HTTP/1.1 with keep-alive; counts connections (one handler per connection). A
    request whose content names a header answers 429 with it once, then 200."""

    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        with self.server.lock:  # type: ignore[attr-defined]
            self.server.connections += 1  # type: ignore[attr-defined]

    def do_POST(self) -> None:
        srv: Any = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = body["messages"][0]["content"]
        with srv.lock:
            srv.calls[text] += 1
            first = srv.calls[text] == 1
        code, payload, extra = 200, json.dumps({"choices": [{"message": {
            "content": "0.5 - 1.0 seconds"}}]}).encode(), {}
        if first and ":" in text:
            name, value = text.split(":", 1)
            code, payload, extra = 429, b'{"error": "slow down"}', {name: value.strip()}
        self.send_response(code)
        for k, v in extra.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def keepalive() -> Iterator[tuple[str, Any]]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), KeepAlive)
    httpd.daemon_threads = True
    httpd.lock, httpd.connections, httpd.calls = threading.Lock(), 0, Counter()
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", httpd
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_connections_are_reused_across_requests_and_threads(keepalive):
    url, srv = keepalive
    with ChatClient(url, MODEL, timeout=5, retries=0) as client:
        for i in range(10):
            assert client.complete([{"role": "user", "content": f"q{i}"}]).text
        assert srv.connections == 1  # one connection for ten sequential requests
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(4) as pool:
            replies = list(pool.map(lambda i: client.complete(
                [{"role": "user", "content": f"t{i}"}]), range(40)))
    assert [r.attempts for r in replies] == [1] * 40
    assert sum(srv.calls.values()) == 50 and max(srv.calls.values()) == 1  # none twice
    assert srv.connections <= 4  # at most one per thread in flight, kept alive


@pytest.mark.parametrize(("header", "wait"), [
    ("Retry-After: 3", 3.0),
    ("Retry-After: 0.25", 0.25),
    ("retry-after-ms: 120", 0.12),
    ("Retry-After: 100", 30.0),  # capped at max_backoff
    ("Retry-After: Thu, 01 Jan 1970 00:00:00 GMT", 0.0),  # a date already past
    ("Retry-After: soon", 0.5),  # unreadable: the backoff's own wait
])
def test_retry_after_is_honoured(keepalive, header, wait):
    url, srv = keepalive
    waits: list[float] = []
    with ChatClient(url, MODEL, timeout=5, retries=2, backoff=0.5, max_backoff=30,
                    sleep=waits.append, jitter=lambda cap: cap) as client:
        reply = client.complete([{"role": "user", "content": header}])
    assert reply.attempts == 2 and waits == [pytest.approx(wait)]
    assert srv.calls[header] == 2


def test_retry_after_seconds_reads_every_form():
    from cover.grounders.transport import retry_after_seconds
    now = 1_700_000_000.0
    date = "Tue, 14 Nov 2023 22:13:27 GMT"  # now + 7 s
    assert retry_after_seconds({"Retry-After": date}, now=now) == 7.0
    assert retry_after_seconds({"retry-after": " 12 "}) == 12.0
    assert retry_after_seconds({"Retry-After-Ms": "1500", "Retry-After": "9"}) == 1.5
    for bad in ({}, {"Retry-After": "-1"}, {"Retry-After": "later"}, {"Retry-After": ""},
                {"retry-after-ms": "nan"}, {"Retry-After": "inf"}):
        assert retry_after_seconds(bad, now=now) is None, bad


def test_default_backoff_is_full_jitter_below_the_exponential_cap():
    waits: list[float] = []
    with ChatClient("http://127.0.0.1:9/v1", MODEL, timeout=0.5, retries=6, backoff=0.5,
                    max_backoff=4.0, sleep=waits.append) as client, \
            pytest.raises(EndpointError):
        client.complete([{"role": "user", "content": "hi"}])
    caps = [0.5, 1.0, 2.0, 4.0, 4.0, 4.0]
    assert len(waits) == 6 and all(0 <= w <= c for w, c in zip(waits, caps, strict=True))
    assert waits != caps  # drawn, not the cap itself


def test_an_unusable_endpoint_url_is_not_retried():
    waits: list[float] = []
    with ChatClient("ftp://127.0.0.1/v1", MODEL, retries=3, sleep=waits.append) as client, \
            pytest.raises(EndpointError, match=r"cannot ask ftp://127\.0\.0\.1/v1/chat/"
                                               r"completions: .*\(--endpoint\)") as err:
        client.complete([{"role": "user", "content": "hi"}])
    assert err.value.attempts == 1 and waits == []


def test_a_closed_client_sends_nothing(keepalive):
    url, srv = keepalive
    client = ChatClient(url, MODEL, retries=0)
    client.complete([{"role": "user", "content": "one"}])
    client.close()
    client.close()  # twice is fine
    with pytest.raises(RuntimeError, match="closed"):
        client.complete([{"role": "user", "content": "two"}])
    assert srv.calls["two"] == 0
