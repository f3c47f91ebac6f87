"""HTTP for ``cover ground``: one connection pool per run, every POST bounded in time and size.

The client is httpx (``pip install 'cover-grounding[ground]'``). One :class:`Transport`
holds one ``httpx.AsyncClient`` driven by an event loop in a thread of its own; any
number of threads may call :meth:`Transport.post` at once, and connections are kept
alive and reused between requests (one TCP + TLS handshake per connection, not per
query). Proxies from the environment (``HTTPS_PROXY``, ``NO_PROXY``) keep working.

httpx's timeouts bound each phase (connect, each read, each write), not the request: a
server that sends a byte every half second would keep a request alive for as long as it
likes. Here:

* each attempt runs under one deadline, ``timeout`` seconds after it started, covering
  the wait for a pooled connection, connecting, sending, the response headers and the
  streamed body together; past it the request is cancelled (its connection is closed,
  not reused) and fails with :class:`TimeoutError`.
* the body is read in chunks and refused (:class:`ResponseTooLarge`) as soon as it
  passes ``max_bytes``, or at once when its ``Content-Length`` says it will; an over-size
  response is never kept whole. Responses are asked for uncompressed
  (``Accept-Encoding: identity``): an answer is a few kB, and a compressed body could
  expand far past the limit inside one chunk.
"""

from __future__ import annotations

import asyncio
import datetime
import email.utils
import math
import re
import threading
import time
import weakref
from collections.abc import Mapping

try:
    import httpx
except ImportError:  # pragma: no cover - exercised only without the extra
    raise ImportError("cover ground needs httpx: pip install 'cover-grounding[ground]'") \
        from None

#: Bytes read from the socket at a time.
_CHUNK = 1 << 16
#: Bytes of an error response kept for its message.
_DETAIL = 300
_SECONDS = re.compile(r"\d+(\.\d+)?")


class ResponseTooLarge(Exception):
    """The response body is longer than the limit (it is not read any further)."""


class RequestFailed(Exception):
    """No HTTP answer: the connection was refused, reset or broken mid-answer, or the
    answer was not valid HTTP. The message starts with the kind (``ConnectError: ...``)."""


class BadURL(ValueError):
    """The URL cannot be requested at all (not http/https, or malformed)."""


class HTTPStatusError(Exception):
    """The server answered with a status other than 2xx: code, start of the body, and
    how long it asked us to wait (:func:`retry_after_seconds`; ``None`` when it did not)."""

    def __init__(self, code: int, detail: str, retry_after: float | None) -> None:
        super().__init__(f"HTTP {code}" + (f": {detail}" if detail else ""))
        self.code = code
        self.retry_after = retry_after


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """The wait a response asks for, in seconds, or ``None`` when it asks for none.

    ``retry-after-ms`` (milliseconds, as OpenAI-compatible servers send) wins over
    ``Retry-After``, which is either seconds (``120``; a decimal is accepted) or an
    HTTP-date (``Wed, 21 Oct 2015 07:28:00 GMT``: the wait is until then, from ``now``,
    Unix seconds, default the clock). A date already past is a wait of 0; an unreadable,
    negative or infinite value is ignored.

    >>> retry_after_seconds({"Retry-After": "2", "retry-after-ms": "250"})
    0.25
    >>> retry_after_seconds({"Retry-After": "Thu, 01 Jan 1970 00:01:00 GMT"}, now=45.0)
    15.0
    """
    lower = {k.lower(): v.strip() for k, v in headers.items()}
    ms = lower.get("retry-after-ms", "")
    if _SECONDS.fullmatch(ms):
        return float(ms) / 1000.0
    value = lower.get("retry-after", "")
    if _SECONDS.fullmatch(value):
        seconds = float(value)
        return seconds if math.isfinite(seconds) else None
    if not value:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # an HTTP-date is GMT even when it does not say so
        when = when.replace(tzinfo=datetime.UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


async def _read_capped(resp: httpx.Response, max_bytes: int) -> bytes:
    """The body of ``resp``, streamed; :class:`ResponseTooLarge` past ``max_bytes`` (at
    once when ``Content-Length`` announces more)."""
    length = resp.headers.get("Content-Length")
    if length is not None and length.strip().isdigit() and int(length) > max_bytes:
        raise ResponseTooLarge(f"the response is {int(length)} bytes, more than the "
                               f"limit of {max_bytes} bytes")
    chunks: list[bytes] = []
    n = 0
    async for chunk in resp.aiter_bytes(_CHUNK):
        n += len(chunk)
        if n > max_bytes:
            raise ResponseTooLarge(f"the response is longer than the limit of {max_bytes} "
                                   "bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def _error_detail(resp: httpx.Response) -> str:
    """The start of an error response's body, as text (the rest is not read)."""
    got = b""
    async for chunk in resp.aiter_bytes(_DETAIL):
        got += chunk
        if len(got) >= _DETAIL:
            break
    return got[:_DETAIL].decode("utf-8", "replace").strip()


def _shut(loop: asyncio.AbstractEventLoop, client: httpx.AsyncClient,
          thread: threading.Thread) -> None:
    """Close the pool's connections, stop the loop and its thread."""
    if loop.is_closed():
        return
    if threading.current_thread() is not thread and loop.is_running():
        done = asyncio.run_coroutine_threadsafe(client.aclose(), loop)
        try:
            done.result(timeout=5)
        except Exception:  # closing sockets that are already gone: nothing to do
            pass
    loop.call_soon_threadsafe(loop.stop)
    if threading.current_thread() is not thread:
        thread.join(timeout=5)
        loop.close()


class Transport:
    """A connection pool and the thread its event loop runs in (started on the first
    request). Thread-safe; :meth:`close` (or leaving a ``with`` block) releases both,
    as does garbage collection."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: httpx.AsyncClient | None = None
        self._closer: weakref.finalize | None = None
        self._closed = False

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            closer = self._closer
        if closer is not None:
            closer()

    def _start(self) -> tuple[asyncio.AbstractEventLoop, httpx.AsyncClient]:
        with self._lock:
            if self._closed:
                raise RuntimeError("this HTTP transport is closed")
            if self._loop is None or self._client is None:
                loop = asyncio.new_event_loop()
                # the run's own thread pool bounds the connections; keep every one alive
                limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
                client = httpx.AsyncClient(limits=limits, trust_env=True)
                thread = threading.Thread(target=loop.run_forever, name="cover-http",
                                          daemon=True)
                thread.start()
                self._closer = weakref.finalize(self, _shut, loop, client, thread)
                self._loop, self._client = loop, client
            return self._loop, self._client

    def post(self, url: str, body: bytes, headers: dict[str, str], *, timeout: float,
             max_bytes: int) -> bytes:
        """POST ``body`` to ``url`` and return the response body, within ``timeout``
        seconds in all and ``max_bytes`` of body (module docstring). Raises
        :class:`TimeoutError` past the deadline, :class:`HTTPStatusError` on a non-2xx
        status, :class:`ResponseTooLarge`, :class:`RequestFailed` or :class:`BadURL`."""
        loop, client = self._start()
        fut = asyncio.run_coroutine_threadsafe(
            self._post(client, url, body, headers, timeout, max_bytes), loop)
        try:
            return fut.result()
        except BaseException:
            fut.cancel()  # an interrupt in the caller also ends the request it waited on
            raise

    @staticmethod
    async def _post(client: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str],
                    timeout: float, max_bytes: int) -> bytes:
        headers = {"Accept-Encoding": "identity", **headers}
        try:
            async with asyncio.timeout(timeout), \
                    client.stream("POST", url, content=body, headers=headers,
                                  timeout=timeout) as resp:
                if not resp.is_success:
                    detail = await _error_detail(resp)
                    raise HTTPStatusError(resp.status_code, detail,
                                          retry_after_seconds(resp.headers))
                return await _read_capped(resp, max_bytes)
        except (TimeoutError, httpx.TimeoutException):
            raise TimeoutError(f"no complete response within {timeout:g} s") from None
        except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise BadURL(f"{url}: {exc}") from None
        except httpx.TransportError as exc:
            raise RequestFailed(f"{type(exc).__name__}: {exc}") from None
