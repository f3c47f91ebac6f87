"""One HTTP POST whose whole time and response size are bounded.

urllib's own ``timeout`` bounds each socket operation, not the request: a server that
sends a byte every half second keeps a request alive for as long as it likes, and
``read()`` keeps a body of any size in memory. Here:

* a watchdog shuts the connection's socket down ``timeout`` seconds after the request
  started (connect, send, response headers and body together), which wakes any read
  blocked on it; the request then fails with :class:`TimeoutError`. (Name resolution
  and the TLS handshake are bounded per operation by the same ``timeout``.)
* the body is read in chunks and refused (:class:`ResponseTooLarge`) as soon as it
  passes ``max_bytes``, or at once when its ``Content-Length`` says it will; an
  over-size response is never kept whole.

urllib's opener is still used, so proxies from the environment keep working.
"""

from __future__ import annotations

import functools
import http.client
import socket
import threading
import urllib.error
import urllib.request
from typing import Any

#: Bytes read from the socket at a time.
_CHUNK = 1 << 16


class ResponseTooLarge(Exception):
    """The response body is longer than the limit (it is not read any further)."""


class HTTPStatusError(Exception):
    """The server answered with an HTTP error status: code, start of the body, and
    its ``Retry-After`` header (``None`` when absent)."""

    def __init__(self, code: int, detail: str, retry_after: str | None) -> None:
        super().__init__(f"HTTP {code}" + (f": {detail}" if detail else ""))
        self.code = code
        self.retry_after = retry_after


class _Watch:
    """Shuts down every socket attached to it once :meth:`fire` ran (or at attach time
    when it already had): a read blocked on a shut-down socket returns at once."""

    def __init__(self, timeout: float) -> None:
        self._lock = threading.Lock()
        self._socks: list[socket.socket] = []
        self.fired = False
        self._timer = threading.Timer(timeout, self.fire)
        self._timer.daemon = True

    def __enter__(self) -> _Watch:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def attach(self, sock: socket.socket) -> None:
        with self._lock:
            self._socks.append(sock)
            fired = self.fired
        if fired:
            _shut(sock)

    def fire(self) -> None:
        with self._lock:
            self.fired = True
            socks = list(self._socks)
        for sock in socks:
            _shut(sock)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed: nothing left to wake


class _Conn(http.client.HTTPConnection):
    def __init__(self, *args: Any, watch: _Watch, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._watch = watch

    def connect(self) -> None:
        super().connect()
        self._watch.attach(self.sock)


class _TLSConn(http.client.HTTPSConnection):
    def __init__(self, *args: Any, watch: _Watch, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._watch = watch

    def connect(self) -> None:
        super().connect()
        self._watch.attach(self.sock)


class _Request(urllib.request.Request):
    """A request carrying the watchdog its connection attaches its socket to."""

    def __init__(self, *args: Any, watch: _Watch, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.watch = watch


class _Handler(urllib.request.HTTPHandler):
    def http_open(self, req: _Request) -> http.client.HTTPResponse:  # type: ignore[override]
        return self.do_open(functools.partial(_Conn, watch=req.watch), req)


class _TLSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: _Request) -> http.client.HTTPResponse:  # type: ignore[override]
        return self.do_open(functools.partial(_TLSConn, watch=req.watch), req)


_OPENER = urllib.request.build_opener(_Handler, _TLSHandler)


def read_capped(resp: Any, max_bytes: int) -> bytes:
    """The body of ``resp``, read in chunks; :class:`ResponseTooLarge` past
    ``max_bytes`` (at once when ``Content-Length`` announces more)."""
    length = resp.headers.get("Content-Length") if resp.headers else None
    if length is not None and length.strip().isdigit() and int(length) > max_bytes:
        raise ResponseTooLarge(f"the response is {int(length)} bytes, more than the "
                               f"limit of {max_bytes} bytes")
    chunks: list[bytes] = []
    n = 0
    while True:
        chunk = resp.read(min(_CHUNK, max_bytes + 1 - n))
        if not chunk:
            return b"".join(chunks)
        n += len(chunk)
        if n > max_bytes:
            raise ResponseTooLarge(f"the response is longer than the limit of {max_bytes} "
                                   "bytes")
        chunks.append(chunk)


def post(url: str, body: bytes, headers: dict[str, str], *, timeout: float,
         max_bytes: int) -> bytes:
    """POST ``body`` to ``url`` and return the response body, within ``timeout``
    seconds in all and ``max_bytes`` of body (module docstring). Raises
    :class:`TimeoutError` past the deadline, :class:`HTTPStatusError` on an HTTP error
    status, :class:`ResponseTooLarge`, or urllib's and http.client's errors."""
    with _Watch(timeout) as watch:
        req = _Request(url, data=body, headers=headers, method="POST", watch=watch)
        try:
            try:
                with _OPENER.open(req, timeout=timeout) as resp:
                    data = read_capped(resp, max_bytes)
            except urllib.error.HTTPError as exc:
                detail = exc.read(300).decode("utf-8", "replace").strip()
                after = exc.headers.get("Retry-After") if exc.headers else None
                raise HTTPStatusError(exc.code, detail, after) from None
        except (OSError, http.client.HTTPException):
            if watch.fired:
                raise TimeoutError(f"no complete response within {timeout:g} s") from None
            raise
        if watch.fired:
            # the socket was shut down mid-body: what was read is not the whole answer
            raise TimeoutError(f"no complete response within {timeout:g} s")
    return data
