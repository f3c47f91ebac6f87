"""Proxy mode (``cover serve --upstream URL``): an OpenAI-compatible
``POST /v1/chat/completions`` in front of a video-LLM server (vLLM, SGLang, ...).

The request is the OpenAI chat body plus COVER's own fields under a top-level
``"cover"`` object (the ``openai`` client sends it with ``extra_body``)::

    "cover": {"duration": 150.0,              # the video's length, s (needed to certify)
              "calibrator": "main",           # optional: default = the first --calibrator
              "qid": "7", "vid": "v1",        # optional; vid finds the duration in --videos
              "prompt_examples": ["..."]}     # optional: the prompt's example answer(s)

``"cover"`` is removed and the rest forwarded unchanged to ``URL/chat/completions``.
The answer text (the first choice's ``message.content``) is read by
:func:`cover.grounders.parse.parse_answer` and turned into the prediction row
:func:`cover.grounders.parse.answers_to_predictions` writes, which the named calibrator
certifies through the same kernel as ``/v1/certify`` (so the block equals what
``cover certify`` writes for that row). Only ``ok`` / ``zero_length`` answers are
predictions; a refusal, an echo of a prompt example, a failure, a start-only or an
out-of-range answer is refused: the whole video.

Non-streaming: the upstream JSON comes back byte for byte with ``"cover": {...}`` added
as its last key: the certify block (``status``, ``region``, ``refused``, ``duration``,
``score``, ``rule``, ``alpha``, ...; ``reason`` when rejected) plus ``calibrator``,
``qid`` (when sent), ``parse`` (the class), ``parse_reason`` and ``intervals`` (what
the answer stated, seconds). Without a duration: ``"status": "rejected"``, ``"reason":
"no video duration given (cover.duration)"``, the answer still returned.

Streaming (``"stream": true``): the upstream's SSE events pass through as they arrive;
``data: [DONE]`` is held back, one more event is sent, a chunk with ``"choices": []``
and the ``cover`` object, then ``data: [DONE]``. An upstream failure mid-stream is an
event ``{"error": {"message": ..., "type": "upstream_error"}}`` then ``[DONE]``.

Upstream failures: unreachable or 5xx or malformed JSON -> 502, no answer within
``--upstream-timeout`` -> 504, as ``{"error": "...", "upstream": URL}``; a 4xx from the
upstream (the request's own fault) is passed through unchanged.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

import httpx
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from cover.errors import CoverError
from cover.serve.calibrators import Loaded
from cover.serve.certify import RequestError, read_body
from cover.serve.chat import (
    CoverFields,
    accumulate,
    certify_answer,
    content,
    cover_fields,
    sse,
    sse_data,
)
from cover.stream.jsonl import splice


class Service(Protocol):
    """What the proxy reads of the service (:class:`cover.serve.app.Service`): its
    configuration, live calibrators and metrics (a protocol: the app imports the proxy)."""

    config: Any
    live: Any
    metrics: Any

_EVENT_END = re.compile(rb"\r?\n\r?\n")


@dataclass(frozen=True)
class ProxyConfig:
    """``--upstream URL`` (the base, e.g. ``http://gpu:8001/v1``), ``--upstream-timeout``
    (s: to connect, and for each wait on the upstream) and the upstream's own token."""

    upstream: str
    timeout: float = 120.0
    token: str | None = None

    @property
    def url(self) -> str:
        return self.upstream.rstrip("/") + "/chat/completions"


def _failure(status: int, message: str, url: str) -> RequestError:
    return RequestError(status, message, upstream=url)


def _snippet(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    return (text[:200] + "...") if len(text) > 200 else text or "(an empty body)"


class Proxy:
    """The chat-completions handler: one :class:`httpx.AsyncClient` for the app's life
    (connections kept alive to the upstream), closed with the app."""

    def __init__(self, config: ProxyConfig, service: Service) -> None:
        self.config = config
        self.service = service
        t = config.timeout
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(t, connect=min(t, 10.0)),
                                        limits=httpx.Limits(max_connections=256,
                                                            max_keepalive_connections=64))

    async def aclose(self) -> None:
        await self.client.aclose()

    def _headers(self, request: Request) -> dict[str, str]:
        h = {"Content-Type": "application/json"}
        if self.config.token:
            h["Authorization"] = f"Bearer {self.config.token}"
        elif self.service.config.token is None and "authorization" in request.headers:
            # No token of our own: the client's key is the upstream's.
            h["Authorization"] = request.headers["authorization"]
        return h

    def _error(self, exc: httpx.HTTPError) -> RequestError:
        url = self.config.url
        if isinstance(exc, httpx.TimeoutException):
            self.service.metrics.upstream_errors["timeout"] += 1
            return _failure(504, f"the upstream {url} did not answer within "
                            f"{self.config.timeout:g} s (--upstream-timeout)", url)
        why = str(exc) or type(exc).__name__
        if isinstance(exc, httpx.ConnectError):
            self.service.metrics.upstream_errors["unreachable"] += 1
            return _failure(502, f"cannot reach the upstream {url} ({why})", url)
        self.service.metrics.upstream_errors["broken"] += 1
        return _failure(502, f"the upstream {url} broke off its answer ({why})", url)

    def _status(self, r: httpx.Response, body: bytes) -> Response | None:
        """A 4xx passed through; 502 for any other non-2xx; None for a 2xx."""
        if 200 <= r.status_code < 300:
            return None
        if 400 <= r.status_code < 500:
            return Response(body, status_code=r.status_code,
                            media_type=r.headers.get("content-type", "application/json"))
        self.service.metrics.upstream_errors["status"] += 1
        raise _failure(502, f"the upstream {self.config.url} answered HTTP {r.status_code}: "
                       f"{_snippet(body)}", self.config.url)

    async def chat(self, request: Request) -> Response:
        body = await read_body(request, self.service.config.max_body_bytes)
        try:
            doc = json.loads(body)
        except ValueError as exc:
            raise RequestError(400, f"the request body is not valid JSON ({exc})") from None
        if not isinstance(doc, dict):
            raise RequestError(400, "the request body must be a chat-completions object")
        fields = cover_fields(doc)
        try:
            loaded = self.service.live.current.get(fields.calibrator)
        except CoverError as exc:
            raise RequestError(404, str(exc)) from None
        up = self.client.build_request("POST", self.config.url, content=json.dumps(doc),
                                       headers=self._headers(request))
        t0 = time.perf_counter()
        try:
            r = await self.client.send(up, stream=True)
        except httpx.HTTPError as exc:
            raise self._error(exc) from None
        streamed = r.headers.get("content-type", "").startswith("text/event-stream")
        if not streamed or not 200 <= r.status_code < 300:
            try:
                raw = await r.aread()
            except httpx.HTTPError as exc:
                raise self._error(exc) from None
            finally:
                await r.aclose()
            self.service.metrics.upstream.observe(time.perf_counter() - t0)
            return self._status(r, raw) or await self._answer(raw, loaded, fields)
        return StreamingResponse(self._events(r, t0, loaded, fields),
                                 media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache"})

    async def _answer(self, raw: bytes, loaded: Loaded, fields: CoverFields) -> Response:
        url = self.config.url
        try:
            got = json.loads(raw)
        except ValueError as exc:
            self.service.metrics.upstream_errors["malformed"] += 1
            raise _failure(502, f"the upstream {url} answered malformed JSON ({exc}): "
                           f"{_snippet(raw)}", url) from None
        choices = got.get("choices") if isinstance(got, dict) else None
        if not isinstance(choices, list):
            self.service.metrics.upstream_errors["malformed"] += 1
            raise _failure(502, f"the upstream {url} answered JSON that is not a chat "
                           f"completion (no choices list): {_snippet(raw)}", url)
        text = content(choices[0].get("message")) if choices and isinstance(
            choices[0], dict) else ""
        block = await self._certify(loaded, fields, text)
        out = (splice(raw, block) if "cover" not in got else
               json.dumps({**got, "cover": block}).encode())
        return Response(out, media_type="application/json")

    async def _certify(self, loaded: Loaded, fields: CoverFields, text: str
                       ) -> dict[str, Any]:
        # A millisecond or two of parsing and numpy: off the event loop, so other
        # requests' streams keep flowing meanwhile.
        block = await run_in_threadpool(certify_answer, loaded, fields, text,
                                        self.service.config.sources.videos)
        self.service.metrics.answered(block["status"], block["parse"])
        return block

    async def _events(self, r: httpx.Response, t0: float, loaded: Loaded,
                      fields: CoverFields) -> AsyncIterator[bytes]:
        """The upstream's events as they come, then the ``cover`` event and ``[DONE]``."""
        buf, texts, head = b"", list[str](), dict[str, Any]()
        try:
            async for chunk in r.aiter_bytes():
                buf += chunk
                while (m := _EVENT_END.search(buf)) is not None:
                    event, buf = buf[:m.start()], buf[m.end():]
                    data = sse_data(event)
                    if data == "[DONE]":
                        continue  # sent after the cover event
                    accumulate(data, texts, head)
                    yield event + b"\n\n"
        except httpx.HTTPError as exc:
            err = self._error(exc)
            yield sse({"error": {"message": err.body["error"], "type": "upstream_error"}})
            yield b"data: [DONE]\n\n"
            return
        finally:
            await r.aclose()
        if buf.strip() and sse_data(buf) != "[DONE]":
            accumulate(sse_data(buf), texts, head)
            yield buf.rstrip(b"\r\n") + b"\n\n"
        self.service.metrics.upstream.observe(time.perf_counter() - t0)
        block = await self._certify(loaded, fields, "".join(texts))
        yield sse({**head, "object": "chat.completion.chunk", "choices": [], "cover": block})
        yield b"data: [DONE]\n\n"
