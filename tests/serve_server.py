"""Start the real ``cover serve`` app under uvicorn on a free loopback port: in a thread
(fast) or as a ``python -m cover serve`` subprocess (for signals and ``kill -9``)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

SRC = str(Path(__file__).resolve().parents[1] / "src")

#: One client for every request the serve tests make: ``httpx.get``/``post`` build a
#: client (and load the CA bundle, ~30 ms) per call. No connection is kept between
#: requests, as with those calls (servers here are killed and restarted).
HTTP = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_up(base: str, timeout: float = 15.0, proc: subprocess.Popen[bytes] | None = None
            ) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise RuntimeError(f"server exited: {err}")
        with contextlib.suppress(httpx.TransportError):
            if HTTP.get(f"{base}/healthz", timeout=1.0).status_code == 200:
                return
        time.sleep(0.05)
    raise RuntimeError(f"{base} did not come up")


@contextlib.contextmanager
def thread_server(app: object) -> Iterator[str]:
    """``app`` served by uvicorn in a thread; yields the base URL."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="error", lifespan="on"))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    base = f"http://127.0.0.1:{port}"
    try:
        wait_up(base)
        yield base
    finally:
        server.should_exit = True
        t.join(10)


@contextlib.contextmanager
def process_server(args: list[str], env: dict[str, str] | None = None
                   ) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``python -m cover serve ARGS --port P`` in a subprocess; yields (base, process)."""
    port = free_port()
    full_env = {**os.environ, "PYTHONPATH": SRC, **(env or {})}
    proc = subprocess.Popen([sys.executable, "-m", "cover", "serve", *args, "--port",
                             str(port)], env=full_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_up(base, proc=proc)
        yield base, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
