"""A live video-LLM as a grounder: frames + query to an OpenAI-compatible chat endpoint.

Servers such as vLLM and SGLang serve Qwen2.5-VL or InternVL behind
``POST {base}/chat/completions``. One request per query; the user message is, in order:

1. text: ``The video lasts {T:.1f} seconds. Here are {n} frames sampled uniformly from
   it, each preceded by its timestamp.``
2. per frame: text ``Frame at {t:.1f} s:`` then an ``image_url`` part holding the frame
   as ``data:image/jpeg;base64,...``;
3. text: ``Find the moment that matches this description: "{query}". Answer with its
   start and end time in seconds, in the form "<start> - <end> seconds" (for example
   "12.0 - 18.5 seconds"). If the moment does not happen in the video, say so.``

with ``temperature = 0``. The example in the prompt (:data:`PROMPT_EXAMPLE`) is handed to
the answer parser, so an answer that merely copies it is an ``echo``, not a prediction.

Transport is httpx (:mod:`cover.grounders.transport`): one connection pool per client,
shared by every thread that asks and reused between requests. ``timeout`` bounds each
attempt as a whole (connect, send, headers and body), and a response body longer than
``max_response_bytes`` fails the request without being kept (not retried: the same
request would get the same answer). A request that times out, cannot connect, or gets
HTTP 408, 429 or 5xx is retried up to ``retries`` times. Before retry ``k`` (from 0) it
waits a random time between 0 and ``min(max_backoff, backoff · 2^k)`` seconds ("full
jitter": clients that failed together do not come back together); when the answer said
how long to wait (``retry-after-ms``, or ``Retry-After`` in seconds or as an HTTP-date)
it waits that long instead, at most ``max_backoff``. Other HTTP errors are not retried.
A client holds a connection pool: use it in a ``with`` block, or :meth:`ChatClient.close`.
"""

from __future__ import annotations

import base64
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cover.grounders.transport import (
    BadURL,
    HTTPStatusError,
    RequestFailed,
    ResponseTooLarge,
    Transport,
)
from cover.grounders.video import VideoSample

PROMPT_VERSION = 1
PROMPT_EXAMPLE = "12.0 - 18.5 seconds"
RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
#: Default limit on one response body, bytes: a 256-token answer is a few kB.
MAX_RESPONSE_BYTES = 4 << 20


def full_jitter(cap: float) -> float:
    """A wait drawn uniformly from ``[0, cap]`` (exponential backoff with full jitter)."""
    return random.uniform(0.0, cap)


def build_messages(query: str, sample: VideoSample) -> list[dict[str, Any]]:
    """The chat messages of one query (module docstring gives the exact wording)."""
    parts: list[dict[str, Any]] = [{
        "type": "text",
        "text": f"The video lasts {sample.duration:.1f} seconds. Here are "
                f"{len(sample.frames)} frames sampled uniformly from it, each preceded by "
                "its timestamp.",
    }]
    for f in sample.frames:
        parts.append({"type": "text", "text": f"Frame at {f.time:.1f} s:"})
        parts.append({"type": "image_url", "image_url": {
            "url": "data:image/jpeg;base64," + base64.b64encode(f.jpeg).decode("ascii")}})
    parts.append({
        "type": "text",
        "text": f'Find the moment that matches this description: "{query.strip()}". Answer '
                'with its start and end time in seconds, in the form "<start> - <end> '
                f'seconds" (for example "{PROMPT_EXAMPLE}"). If the moment does not happen '
                "in the video, say so.",
    })
    return [{"role": "user", "content": parts}]


class EndpointError(Exception):
    """A request that failed for good (after retries, or not retryable)."""

    def __init__(self, message: str, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


@dataclass(frozen=True)
class Reply:
    """The model's answer text, how many HTTP attempts it took, and the wall time."""

    text: str
    attempts: int
    seconds: float


def chat_url(url: str) -> str:
    """``.../v1`` or a server root -> the chat-completions URL (a full URL is kept)."""
    u = url.rstrip("/")
    if u.endswith("/chat/completions"):
        return u
    return u + ("/chat/completions" if u.endswith("/v1") else "/v1/chat/completions")


def answer_text(doc: Any) -> str:
    """``choices[0].message.content`` as text (a list of text parts is joined)."""
    try:
        content = doc["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ValueError("the response has no choices[0].message.content") from None
    if content is None:
        return ""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


@dataclass
class ChatClient:
    """One OpenAI-compatible chat endpoint; :meth:`complete` retries as documented and may
    be called from many threads at once. ``timeout`` (s) bounds each attempt as a whole,
    ``max_response_bytes`` its body; ``jitter`` turns the backoff cap into the wait."""

    url: str
    model: str
    timeout: float = 120.0
    retries: int = 4
    backoff: float = 1.0
    max_backoff: float = 30.0
    max_tokens: int = 256
    api_key: str | None = None
    sleep: Callable[[float], None] = time.sleep
    max_response_bytes: int = MAX_RESPONSE_BYTES
    jitter: Callable[[float], float] = full_jitter
    _transport: Transport = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        bad = [f"{name} must be {rule}, got {value}" for name, value, rule, ok in (
            ("timeout", self.timeout, "a finite number > 0", 0 < self.timeout < float("inf")),
            ("retries", self.retries, "an integer >= 0", self.retries >= 0),
            ("backoff", self.backoff, "a finite number >= 0",
             0 <= self.backoff < float("inf")),
            ("max_tokens", self.max_tokens, "an integer >= 1", self.max_tokens >= 1),
            ("max_response_bytes", self.max_response_bytes, "an integer >= 1",
             self.max_response_bytes >= 1)) if not ok]
        if bad:
            raise ValueError("ChatClient: " + "; ".join(bad))
        self._transport = Transport()

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections (a closed client sends nothing more)."""
        self._transport.close()

    def _post(self, body: bytes) -> Any:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = self._transport.post(chat_url(self.url), body, headers, timeout=self.timeout,
                                    max_bytes=self.max_response_bytes)
        return json.loads(data.decode("utf-8"))

    def complete(self, messages: list[dict[str, Any]]) -> Reply:
        body = json.dumps({"model": self.model, "messages": messages, "temperature": 0,
                           "max_tokens": self.max_tokens}).encode("utf-8")
        t0 = time.monotonic()
        last = ""
        for attempt in range(1, self.retries + 2):
            wait = self.jitter(min(self.max_backoff, self.backoff * 2 ** (attempt - 1)))
            try:
                doc = self._post(body)
                return Reply(answer_text(doc), attempt, time.monotonic() - t0)
            except HTTPStatusError as exc:
                last = str(exc)
                if exc.code not in RETRY_STATUS:
                    raise EndpointError(last, attempt) from None
                if exc.retry_after is not None:  # the server said when: no guessing
                    wait = min(self.max_backoff, exc.retry_after)
            except ResponseTooLarge as exc:
                raise EndpointError(f"{exc} (--max-response-bytes); not kept",
                                    attempt) from None
            except BadURL as exc:
                raise EndpointError(f"cannot ask {exc} (--endpoint)", attempt) from None
            except (RequestFailed, TimeoutError) as exc:
                # refused / reset connections, TLS errors, broken HTTP, the deadline
                last = str(exc) if isinstance(exc, RequestFailed) else f"TimeoutError: {exc}"
            except (ValueError, UnicodeDecodeError) as exc:
                raise EndpointError(f"malformed response: {exc}", attempt) from None
            if attempt <= self.retries:
                self.sleep(wait)
        raise EndpointError(f"gave up after {self.retries + 1} attempts ({last})",
                            self.retries + 1)
