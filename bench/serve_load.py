"""A bounded load test of ``cover serve``, on loopback only.

Run from the repository root (the service needs the ``serve`` extra)::

    .venv/bin/python bench/serve_load.py --out bench/results-serve.md
    .venv/bin/python bench/serve_load.py --requests 40 --clients 1 4 --out /tmp/smoke.md

It starts, each as a process of its own on 127.0.0.1: a fake OpenAI-compatible upstream
(answers every chat request with a fixed interval after ``--upstream-delay`` seconds)
and ``python -m cover serve`` with a calibrator fitted here on synthetic QVHighlights-like
rows, in proxy mode in front of that upstream. Then, for 1, 16 and 64 concurrent clients
(``--clients``), it sends a fixed number of requests (``--requests`` per cell) and
measures:

* ``POST /v1/certify`` with one row per request and with ``--batch-rows`` rows per
  request: rows per second, and latency p50 / p99;
* ``POST /v1/chat/completions`` to the upstream directly and through ``cover serve``:
  latency p50 / p99 of each, and the proxy's added latency (the difference of the two
  percentiles, not a percentile of differences).

Every answer is checked (status 200, as many results as rows sent, a ``cover`` object
on proxied answers): a load test that counts errors as throughput measures nothing.
Clients are one ``httpx.AsyncClient`` per cell (connections kept alive), in this process;
both sides of the proxy comparison pay the same client cost. Everything stops by itself:
the request count is fixed, every request has a timeout, and the two servers are
stopped when the script ends (also on an error or Ctrl-C).

Proxy request shape: the OpenAI chat body plus the video duration in
``"cover": {"duration": T}`` (``--duration-key``), as the service documents it. When the
``cover serve`` being measured has no ``--upstream`` (proxy mode not built), the proxy rows
say so and the certify rows are still measured.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shlex
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
ANSWER = "The moment happens from 12.0 to 18.5 seconds."


# ---- the fake upstream (run as: serve_load.py --fake-upstream PORT DELAY) -------------
def fake_upstream(port: int, delay: float) -> None:
    """A minimal ASGI chat-completions server under uvicorn: one fixed answer."""
    import uvicorn

    body = json.dumps({"id": "x", "object": "chat.completion", "model": "fake", "choices": [
        {"index": 0, "finish_reason": "stop",
         "message": {"role": "assistant", "content": ANSWER}}]}).encode()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        more = True
        while more:  # drain the request body
            more = (await receive()).get("more_body", False)
        if delay:
            await asyncio.sleep(delay)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error")


# ---- processes ----------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_up(url: str, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise RuntimeError(f"{url}: the process exited: {err.strip()[-600:]}")
        with contextlib.suppress(httpx.TransportError):
            httpx.get(url, timeout=1.0)
            return
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up in {timeout:g} s")


@contextlib.contextmanager
def process(args: list[str], probe: str, src: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``python ARGS`` with ``src`` on the path, up once ``probe`` answers; always stopped."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    proc = subprocess.Popen([sys.executable, *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        wait_up(probe, proc)
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


# ---- workload -----------------------------------------------------------------------
def fit_calibrator(folder: Path) -> Path:
    """A NORM split calibrator on 2000 synthetic rows, saved in ``folder``."""
    from workloads import synthetic

    import cover

    path = folder / "cal.json"
    cover.Calibrator(score="norm", alpha=0.1).fit(
        synthetic(2000, np.random.default_rng(0)).table).save(path)
    return path


def rows(n: int, start: int) -> list[dict[str, Any]]:
    """``n`` Moment-DETR-shaped prediction rows with distinct qids."""
    rng = np.random.default_rng(start)
    s = rng.uniform(0, 100, n)
    return [{"qid": start + i, "vid": f"v{(start + i) % 97}", "duration": 150.0,
             "pred_relevant_windows": [[round(float(s[i]), 2), round(float(s[i]) + 20, 2),
                                        0.9]]} for i in range(n)]


def chat_body(duration_key: str) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "fake", "temperature": 0, "max_tokens": 64,
                            "messages": [{"role": "user", "content": "Find the moment."}]}
    d: dict[str, Any] = body
    *head, last = duration_key.split(".")
    for h in head:
        d = d.setdefault(h, {})
    d[last] = 150.0
    return body


# ---- load ---------------------------------------------------------------------------
Check = Callable[[httpx.Response], None]


async def drive(url: str, bodies: Callable[[int], bytes], n: int, clients: int,
                check: Check) -> tuple[float, list[float]]:
    """``n`` POSTs from ``clients`` concurrent clients (after a few warm-up requests):
    wall seconds and the latencies, s."""
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=60.0) as client:
        async def worker(todo: Iterator[int], lat: list[float]) -> None:
            for i in todo:
                content = bodies(i)
                t0 = time.perf_counter()
                r = await client.post(url, content=content,
                                      headers={"Content-Type": "application/json"})
                lat.append(time.perf_counter() - t0)
                check(r)

        warm = iter(range(min(5, n)))
        await asyncio.gather(*(worker(warm, []) for _ in range(clients)))
        todo, lat = iter(range(n)), []
        t0 = time.perf_counter()
        await asyncio.gather(*(worker(todo, lat) for _ in range(clients)))
        return time.perf_counter() - t0, lat


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q)) * 1000.0


def certify_check(want: int) -> Check:
    def check(r: httpx.Response) -> None:
        if r.status_code != 200:
            raise RuntimeError(f"/v1/certify answered {r.status_code}: {r.text[:300]}")
        got = r.json()
        if got["rows"] != want or len(got["results"]) != want:
            raise RuntimeError(f"/v1/certify returned {len(got['results'])} of {want} rows")
    return check


def chat_check(proxied: bool) -> Check:
    def check(r: httpx.Response) -> None:
        if r.status_code != 200:
            raise RuntimeError(f"chat completions answered {r.status_code}: {r.text[:300]}")
        if proxied and "cover" not in r.json():
            raise RuntimeError("a proxied answer has no cover object")
    return check


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=2000, help="requests per cell")
    ap.add_argument("--batch-rows", type=int, default=100, help="rows per batched request")
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 16, 64])
    ap.add_argument("--upstream-delay", type=float, default=0.0,
                    help="the fake upstream's answer time, s (0: measure pure overhead)")
    ap.add_argument("--duration-key", default="cover.duration",
                    help="where the proxied request carries the video duration")
    ap.add_argument("--src", type=Path, default=ROOT / "src",
                    help="the COVER source tree whose cover serve is measured")
    ap.add_argument("--out", type=Path, default=BENCH / "results-serve.md")
    ap.add_argument("--note", default="",
                    help="a line for the report's header (e.g. what else ran on the machine)")
    ap.add_argument("--fake-upstream", nargs=2, metavar=("PORT", "DELAY"),
                    help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.fake_upstream:
        fake_upstream(int(a.fake_upstream[0]), float(a.fake_upstream[1]))
        return 0
    with tempfile.TemporaryDirectory(prefix="cover-serve-load-") as tmp, \
            contextlib.ExitStack() as stack:
        load_before = os.getloadavg()
        cal = fit_calibrator(Path(tmp))
        up_port, port = free_port(), free_port()
        up, base = f"http://127.0.0.1:{up_port}", f"http://127.0.0.1:{port}"
        stack.enter_context(process([__file__, "--fake-upstream", str(up_port),
                                     str(a.upstream_delay)], up, a.src))
        serve = ["-m", "cover", "serve", "--calibrator", f"main={cal}", "--port", str(port)]
        proxy = True
        try:
            stack.enter_context(process([*serve, "--upstream", f"{up}/v1"], f"{base}/healthz",
                                        a.src))
        except RuntimeError as exc:
            if "--upstream" not in str(exc):
                raise
            proxy = False  # this cover serve has no proxy mode yet: certify only
            stack.enter_context(process(serve, f"{base}/healthz", a.src))
        table = run_cells(a, base, up, proxy)
    write_report(a, table, proxy, (load_before, os.getloadavg()))
    print(f"wrote {a.out}")
    return 0


def run_cells(a: argparse.Namespace, base: str, up: str, proxy: bool) -> list[str]:
    """The table rows: every measurement at every client count."""
    out: list[str] = []

    def row(c: int, what: str, rate: float | None, lat: list[float]) -> None:
        rps = "" if rate is None else f"{rate:,.0f}"
        out.append(f"| {c} | {what} | {len(lat)} | {rps} | {pct(lat, 50):.2f} | "
                   f"{pct(lat, 99):.2f} |")
        print(out[-1], flush=True)

    def one(i: int) -> bytes:
        return json.dumps(rows(1, i)[0]).encode()

    batches = [json.dumps(rows(a.batch_rows, i * a.batch_rows)).encode()
               for i in range(min(a.requests, 50))]
    chat = json.dumps(chat_body(a.duration_key)).encode()
    n = a.requests
    for c in a.clients:
        wall, lat = asyncio.run(drive(f"{base}/v1/certify", one, n, c, certify_check(1)))
        row(c, "certify, 1 row/request", n / wall, lat)
        wall, lat = asyncio.run(drive(f"{base}/v1/certify", lambda i: batches[i % len(batches)],
                                      n, c, certify_check(a.batch_rows)))
        row(c, f"certify, {a.batch_rows} rows/request", n * a.batch_rows / wall, lat)
        _, direct = asyncio.run(drive(f"{up}/v1/chat/completions", lambda i: chat, n, c,
                                      chat_check(False)))
        row(c, "chat: upstream directly", None, direct)
        if not proxy:
            out.append(f"| {c} | chat: through cover serve | not measured: this cover serve "
                       "has no --upstream (proxy mode) | | | |")
            continue
        _, via = asyncio.run(drive(f"{base}/v1/chat/completions", lambda i: chat, n, c,
                                   chat_check(True)))
        row(c, "chat: through cover serve", None, via)
        out.append(f"| {c} | **proxy adds** | | | {pct(via, 50) - pct(direct, 50):+.2f} | "
                   f"{pct(via, 99) - pct(direct, 99):+.2f} |")
    return out


def write_report(a: argparse.Namespace, table: list[str], proxy: bool,
                 loads: tuple[tuple[float, ...], tuple[float, ...]]) -> None:
    cpus = os.cpu_count() or 1
    busy = max(loads[0][0], loads[1][0]) > 0.5 * cpus
    command = shlex.join(["python", "bench/serve_load.py", *sys.argv[1:]])
    lines = [
        "# `cover serve` under load (loopback)",
        "",
        "Written by `bench/serve_load.py` (see its docstring for what is measured and how):",
        "",
        f"    {command}",
        "",
        *([f"**{a.note}**", ""] if a.note else []),
        f"* load average (1, 5, 15 min) before: {', '.join(f'{x:.2f}' for x in loads[0])}; "
        f"after: {', '.join(f'{x:.2f}' for x in loads[1])}"
        + (f" -- **the machine was busy** (other work on its {cpus} CPUs): the latencies "
           "include waiting for a CPU; compare rows of one run, not runs" if busy else ""),
        f"* machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, {platform.system()} {platform.release()}",
        f"* {a.requests} requests per cell (after 5 warm-up requests), batched requests of "
        f"{a.batch_rows} rows; one uvicorn worker; the fake upstream answers after "
        f"{a.upstream_delay:g} s; clients, service and upstream share the machine",
        f"* proxy duration field: `{a.duration_key}`" + ("" if proxy else
                                                         " (proxy mode not available)"),
        "",
        "| clients | what | requests | rows/s | p50 ms | p99 ms |",
        "|---:|---|---:|---:|---:|---:|",
        *table,
        "",
        "`proxy adds` is the proxied p50 / p99 minus the direct p50 / p99 at the same "
        "concurrency.",
        "",
    ]
    a.out.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
