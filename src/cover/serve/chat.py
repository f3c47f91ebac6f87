"""Proxy mode's reading of one chat exchange: COVER's request fields (``"cover"``), the
answer text of a completion or of its streamed chunks, and the answer's ``cover``
object (see :mod:`cover.serve.proxy` for the contract)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from cover.grounders.parse import answers_to_predictions, parse_answer
from cover.grounders.parse.batch import columns_of
from cover.io.seen import SeenIds
from cover.io.video_index import VideoIndex
from cover.serve.calibrators import Loaded
from cover.serve.certify import SOURCE, RequestError

NO_DURATION = "no video duration given (cover.duration)"


@dataclass(frozen=True)
class CoverFields:
    """The request's ``cover`` object, checked."""

    duration: float | None = None
    calibrator: str | None = None
    qid: str | None = None
    vid: str | None = None
    examples: tuple[str, ...] = ()


def _text(x: Any, field: str) -> str | None:
    if x is None or isinstance(x, str):
        return x
    if isinstance(x, int | float) and not isinstance(x, bool):
        return str(x)
    raise RequestError(400, f"cover.{field}: expected text, got {type(x).__name__}")


def cover_fields(doc: dict[str, Any]) -> CoverFields:
    """Take ``doc["cover"]`` out of the request (it never goes upstream) and check it:
    400 naming the field when a value cannot be used."""
    raw = doc.pop("cover", None)
    if raw is None:
        return CoverFields()
    if not isinstance(raw, dict):
        raise RequestError(400, "cover: expected an object such as {\"duration\": 150.0}")
    d = raw.get("duration")
    if d is not None:
        ok = isinstance(d, int | float) and not isinstance(d, bool) and math.isfinite(d)
        if not ok or d <= 0:
            raise RequestError(400, f"cover.duration: expected the video's length in seconds "
                               f"(a positive number), got {json.dumps(d)}")
        d = float(d)
    ex = raw.get("prompt_examples", ())
    ex = [ex] if isinstance(ex, str) else ex
    if not isinstance(ex, list | tuple) or not all(isinstance(e, str) for e in ex):
        raise RequestError(400, "cover.prompt_examples: expected a list of texts (the "
                           "prompt's example answers)")
    return CoverFields(d, _text(raw.get("calibrator"), "calibrator"),
                       _text(raw.get("qid"), "qid"), _text(raw.get("vid"), "vid"), tuple(ex))


def content(message: Any) -> str:
    """The text of a message's ``content`` (a string, or a list of ``text`` parts)."""
    c = message.get("content") if isinstance(message, dict) else None
    if isinstance(c, list):
        return "".join(p.get("text", "") for p in c if isinstance(p, dict)
                       and isinstance(p.get("text"), str))
    return c if isinstance(c, str) else ""


def certify_answer(loaded: Loaded, fields: CoverFields, text: str,
                   videos: VideoIndex | None) -> dict[str, Any]:
    """The ``cover`` object of one answer ``text`` (see the module docstring)."""
    T = fields.duration
    # the lookup of every path: by the video, or by the query where --videos is a ground
    # truth read by qid (:attr:`VideoIndex.by`)
    by_qid = videos is not None and videos.by == "qid"
    key, noun = (fields.qid, "query") if by_qid else (fields.vid, "video")
    if T is None and key is not None and videos is not None:
        _, known = videos.known(np.array([key]))
        T = float(known[0]) if known.size else None
    parsed = parse_answer(text, duration=T, prompt_examples=fields.examples)
    extra = {"calibrator": loaded.name, **({"qid": fields.qid} if fields.qid else {}),
             "parse": parsed.status, "parse_reason": parsed.reason,
             "intervals": [list(iv) for iv in parsed.intervals]}
    if T is None:
        reason = NO_DURATION if key is None else (
            f"{NO_DURATION}; {noun} {key!r} is not in --videos")
        return {"status": "rejected", "region": None, "refused": False, "reason": reason,
                **extra}
    qid = fields.qid or "chat"
    rows, _ = answers_to_predictions([qid], [text], vid=[fields.vid or qid], durations=[T],
                                     parsed=columns_of([parsed], [text]))
    done = loaded.compact.run(SOURCE, [(1, json.dumps(rows[0]).encode())], SeenIds())
    block = json.loads(done.parts[0])["cover"]
    block.pop("line", None)  # a request has no line number
    return {**block, **extra}


def sse_data(event: bytes) -> str:
    """The ``data:`` lines of one SSE event, joined (SSE rules: one space after the colon
    is dropped)."""
    lines = event.decode("utf-8", "replace").splitlines()
    return "\n".join(x[5:].removeprefix(" ") for x in lines if x.startswith("data:"))


def accumulate(data: str, texts: list[str], head: dict[str, Any]) -> None:
    """Add the first choice's delta text of one chunk to ``texts``; keep its id, created
    and model in ``head`` (for the cover event)."""
    try:
        got = json.loads(data)
    except ValueError:
        return  # a comment or keep-alive: passed through, nothing to read
    if not isinstance(got, dict):
        return
    for k in ("id", "created", "model"):
        if k in got and k not in head:
            head[k] = got[k]
    for ch in got.get("choices") or ():
        if isinstance(ch, dict) and ch.get("index", 0) == 0:
            texts.append(content(ch.get("delta")))


def sse(obj: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"
