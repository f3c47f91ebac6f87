"""``POST /v1/certify``: the request's rows through the very kernel ``cover certify``
streams JSON lines with (:class:`cover.stream.jsonl.CertifyKernel`).

The body becomes JSON lines first: JSON lines are taken as sent (their bytes are what
``cover certify`` would echo); a row object or a list of rows is written one
``json.dumps(row)`` per line. Then one batch goes through the kernel, with a fresh
duplicate check (a qid repeated *within* the request is rejected, as in one file).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from cover.errors import InputError, RowProblem
from cover.io.lines import nonblank_lines
from cover.io.seen import SeenIds
from cover.serve.calibrators import CalibratorSet

if TYPE_CHECKING:
    from starlette.requests import Request

#: What problems and errors call the request body, as a file name in a message.
SOURCE = "request"


class RequestError(Exception):
    """A request the service refuses, with its HTTP status and a JSON body."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.body = {"error": message, **extra}


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, refused with 413 as soon as it passes ``limit`` bytes (before
    reading it when ``Content-Length`` says so)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise RequestError(413, f"the request body is {declared} bytes; this service "
                           f"takes at most {limit} (--max-body-bytes)")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RequestError(413, f"the request body passes {limit} bytes; this service "
                               f"takes at most {limit} (--max-body-bytes)")
        chunks.append(chunk)
    return b"".join(chunks)


@dataclass
class CertifyRequest:
    """The rows of a request as numbered lines, and its options."""

    lines: list[tuple[int, bytes]]
    calibrator: str | None = None
    on_error: Literal["raise", "reject"] = "raise"
    format: Literal["json", "jsonl"] = "json"
    options: dict[str, Any] = field(default_factory=dict)


def _json_rows(rows: list[Any]) -> list[tuple[int, bytes]]:
    return [(i + 1, json.dumps(r).encode()) for i, r in enumerate(rows)]


def parse_body(body: bytes, query: dict[str, str], *, on_error: str = "raise"
               ) -> CertifyRequest:
    """Rows and options of a certify request: the body is a row object, a list of rows,
    ``{"rows": [...], "calibrator": ..., "on_error": ...}`` or JSON lines; options come
    from the query string (``calibrator``, ``on_error``, ``format``) or the wrapper;
    ``on_error`` is the default the service was started with."""
    text = body.lstrip()
    opts: dict[str, Any] = dict(query)
    if not text:
        raise RequestError(400, "the request body is empty: send a row object, a list of "
                           "rows or JSON lines")
    if text[:1] == b"[":
        try:
            rows = json.loads(body)
        except ValueError as exc:
            raise RequestError(400, f"the request body is not valid JSON ({exc})") from None
        lines = _json_rows(rows)
    else:
        try:
            doc = json.loads(body)
        except ValueError:
            doc = None  # JSON lines (or not JSON: the kernel rejects each bad line)
        if isinstance(doc, dict) and "rows" in doc and "qid" not in doc:
            if not isinstance(doc["rows"], list):
                raise RequestError(400, "rows: expected a list of prediction rows")
            opts = {**{k: v for k, v in doc.items() if k != "rows"}, **opts}
            lines = _json_rows(doc["rows"])
        elif doc is not None:
            lines = _json_rows([doc])
        else:
            lines = list(nonblank_lines(body))
    on_error = opts.get("on_error", on_error)
    if on_error not in ("raise", "reject"):
        raise RequestError(400, f"on_error: expected raise or reject, got {on_error!r}")
    fmt = opts.get("format", "json")
    if fmt not in ("json", "jsonl"):
        raise RequestError(400, f"format: expected json or jsonl, got {fmt!r}")
    name = opts.get("calibrator")
    if name is not None and not isinstance(name, str):
        raise RequestError(400, "calibrator: expected a calibrator name (text)")
    return CertifyRequest(lines, name, "reject" if on_error == "reject" else "raise", fmt,
                          opts)


@dataclass(frozen=True)
class CertifyResult:
    """A certified request: the response bytes and its media type, and the counts."""

    body: bytes
    media_type: str
    counts: dict[str, int]
    calibrator: str


def _problem(p: RowProblem, row_of: dict[int, int]) -> dict[str, Any]:
    return {"row": row_of.get(p.line), "line": p.line, "qid": p.qid, "problem": p.problem,
            "action": p.action}


def certify_request(cals: CalibratorSet, req: CertifyRequest) -> CertifyResult:
    """Certify the request's rows with the calibrator it names (the default one when
    none). Under ``on_error="raise"`` a rejected row refuses the whole request (422)
    with every problem; under ``"reject"`` every row comes back, rejected ones with
    their reason."""
    try:
        loaded = cals.get(req.calibrator)
    except InputError as exc:
        raise RequestError(404, str(exc)) from None
    kernel = loaded.kernel if req.format == "jsonl" else loaded.compact
    row_of = {line: i for i, (line, _) in enumerate(req.lines)}
    if not req.lines:
        raise RequestError(400, "the request holds no rows")
    try:
        done = kernel.run(SOURCE, req.lines, SeenIds())
    except (InputError, ValueError) as exc:
        raise RequestError(422, str(exc)) from None
    problems = [_problem(p, row_of) for p in done.found]
    if done.bad and req.on_error == "raise":
        first = done.bad[0]
        raise RequestError(
            422, f"row {row_of.get(first.line)}"
            f"{f' (qid={first.qid})' if first.qid is not None else ''}: {first.problem} "
            f"({len(done.bad)} row(s) rejected; send on_error=reject to get every row back "
            "with its status)", problems=[p for p in problems if p["action"] == "rejected"])
    status = done.status.tolist()
    counts = {"rows": len(status), **{k: status.count(k) for k in
                                      ("certified", "refused", "rejected")}}
    out = b"".join(done.parts)
    if req.format == "jsonl":
        return CertifyResult(out, "application/x-ndjson", counts, loaded.name)
    head = json.dumps({"calibrator": loaded.name, **counts, "problems": problems})
    # The results are the compact lines ``cover certify --compact`` writes, verbatim.
    results = b", ".join(out.rstrip(b"\n").split(b"\n")) if out else b""
    body = head[:-1].encode() + b', "results": [' + results + b"]}"
    return CertifyResult(body, "application/json", counts, loaded.name)
