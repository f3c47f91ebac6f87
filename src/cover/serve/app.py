"""The ``cover serve`` ASGI app (Starlette): certify rows over HTTP, byte for byte as
``cover certify`` does.

Every endpoint but ``GET /healthz`` needs ``Authorization: Bearer TOKEN`` when the
service was started with ``--token-env VAR`` (401 otherwise). A body larger than
``--max-body-bytes`` gets 413. Errors are JSON ``{"error": "..."}`` with a 4xx status;
a bad row is never a 500 and never dropped.

``POST /v1/certify``
    Body: one prediction row object in COVER's field names (Moment-DETR / Lighthouse:
    ``qid``, ``vid``, ``duration``, ``pred_relevant_windows``, ``pred_saliency_scores``,
    ...), a JSON list of such rows, JSON lines (one row a line), or a wrapper
    ``{"rows": [...], "calibrator": "NAME", "on_error": "reject"}``. Query parameters
    (they win over the wrapper's): ``calibrator=NAME`` (default: the first
    ``--calibrator``), ``on_error=raise|reject`` (default ``raise``),
    ``format=json|jsonl`` (default ``json``). A row without ``duration`` takes it from
    ``--videos FILE``.

    ``format=json`` answers 200 with::

        {"calibrator": "main", "rows": 2, "certified": 1, "refused": 0, "rejected": 1,
         "problems": [{"row": 1, "line": 2, "qid": "7", "problem": "...",
                       "action": "rejected"}],
         "results": [{"qid": 6, "vid": "v", "cover": {...}},
                     {"qid": 7, "vid": "w", "cover": {...}}]}

    ``results`` holds one entry per input row, in order: exactly the lines
    ``cover certify --compact`` writes for the same rows (the ``cover`` block is
    ``{"status": "certified"|"refused"|"rejected", "region": [[s, e], ...] | null,
    "refused": bool, "duration": T, "score": ..., "rule": ..., "alpha": ..., "k": ...,
    "n_calibration": ..., "threshold": ..., ["reason": "..."]}``). ``row`` is the
    0-based position of the row in the request, ``line`` its line number as
    ``cover certify`` would report it. ``format=jsonl`` answers the full lines
    ``cover certify`` writes (each input row with ``"cover"`` spliced in), as
    ``application/x-ndjson``, counts in the ``X-Cover-Rows`` / ``-Certified`` /
    ``-Refused`` / ``-Rejected`` headers.

    With ``on_error=raise`` any rejected row refuses the request: 422
    ``{"error": "row 1 (qid=7): <the problem, naming the field> ...", "problems": [...]}``.
    400: the body is not JSON / empty; 404: unknown calibrator name.

``POST /v1/feedback``
    ``{"qid": ..., "truth": [[s, e], ...], "prediction": {row} | "region": [[s, e], ...],
    "calibrator": NAME?}`` -> ``{"qid", "covered", "duplicate", "score", "p_value",
    "thresholds", "alarm"}`` (see :mod:`cover.serve.feedback`).

``GET /v1/status``
    JSON: calibrators, request and row counts, running coverage on feedback, live
    thresholds (ACI, DtACI), drift alarm state.

``GET /metrics``
    Prometheus text exposition (:mod:`cover.serve.metrics`).

``POST /v1/reload``
    Read the calibrator files again and swap them in atomically (SIGHUP does the same);
    ``{"generation": n, "calibrators": [...]}``, or 422 with the old set kept.

``POST /v1/chat/completions`` (with ``--upstream URL`` only)
    See :mod:`cover.serve.proxy`.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from cover.errors import CoverError
from cover.serve.calibrators import Live, Sources
from cover.serve.certify import RequestError, certify_request, parse_body, read_body
from cover.serve.feedback import feedback
from cover.serve.metrics import Metrics, exposition
from cover.serve.online import OnlineState
from cover.serve.proxy import Proxy, ProxyConfig
from cover.serve.store import FeedbackStore

#: Default request-size limit: 64 MiB (about 60,000 rows of 75-clip saliency).
DEFAULT_MAX_BODY = 64 << 20


@dataclass(frozen=True)
class ServeConfig:
    """What the service is started with (the ``cover serve`` flags)."""

    sources: Sources
    token: str | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY
    on_error: str = "raise"
    state: str = ":memory:"
    gamma: str = "0.005"
    window: int = 1000
    delta: float = 0.01
    proxy: ProxyConfig | None = None  # --upstream: proxy mode


Handler = Callable[[Request], Awaitable[Response]]


class Service:
    """The app's state: live calibrators, metrics, and the handlers."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        self.live = Live(config.sources)
        self.metrics = Metrics()
        self.started = time.time()
        self.store = FeedbackStore(config.state)
        self.online: dict[str, OnlineState] = {}
        self.proxy = Proxy(config.proxy, self) if config.proxy else None
        for name in self.live.current.by_name:
            self.state_of(name)

    def state_of(self, name: str) -> OnlineState:
        """The online state of calibrator ``name``, replayed from the log on first use."""
        with self.store.lock:
            st = self.online.get(name)
            if st is None:
                cal = self.live.current.get(name).cal
                t = cal.threshold_
                st = OnlineState(float(cal.alpha_fraction), None if t is None else float(t),
                                 gamma=self.config.gamma, window=self.config.window,
                                 delta=self.config.delta)
                for qid, score, covered in self.store.replay(name):
                    st.apply(qid, score, covered)
                self.online[name] = st
            return st

    async def feedback(self, request: Request) -> Response:
        body = await read_body(request, self.config.max_body_bytes)
        try:
            doc = json.loads(body)
        except ValueError as exc:
            raise RequestError(400, f"the request body is not valid JSON ({exc})") from None
        name = doc.get("calibrator") if isinstance(doc, dict) else None
        try:
            loaded = self.live.current.get(name)
        except CoverError as exc:
            raise RequestError(404, str(exc)) from None
        state = self.state_of(loaded.name)
        got = await run_in_threadpool(feedback, loaded, state, self.store, doc)
        return JSONResponse(got)

    def guarded(self, path: str, fn: Handler, *, auth: bool = True) -> Handler:
        """``fn`` with the token check, JSON errors and request metrics."""

        async def handler(request: Request) -> Response:
            t0 = time.perf_counter()
            try:
                if auth:
                    self._check_token(request)
                response = await fn(request)
            except RequestError as exc:
                response = JSONResponse(exc.body, status_code=exc.status)
            except CoverError as exc:
                response = JSONResponse({"error": str(exc)}, status_code=422)
            self.metrics.request(path, response.status_code, time.perf_counter() - t0)
            return response

        return handler

    def _check_token(self, request: Request) -> None:
        token = self.config.token
        if token is None:
            return
        got = request.headers.get("authorization", "")
        scheme, _, value = got.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(),
                                                                  token.encode()):
            raise RequestError(401, "missing or wrong bearer token (Authorization: Bearer "
                               "TOKEN; the token is in the service's --token-env variable)")

    async def certify(self, request: Request) -> Response:
        body = await read_body(request, self.config.max_body_bytes)
        req = parse_body(body, dict(request.query_params), on_error=self.config.on_error)
        cals = self.live.current  # one set for the whole request
        got = await run_in_threadpool(certify_request, cals, req)
        self.metrics.certified(got.counts)
        headers = {f"X-Cover-{k.title()}": str(v) for k, v in got.counts.items()}
        return Response(got.body, media_type=got.media_type, headers=headers)

    async def reload(self, request: Request) -> Response:
        try:
            new = await run_in_threadpool(self.live.reload)
        except (CoverError, ValueError, OSError) as exc:
            raise RequestError(422, f"reload failed, the calibrators in use are kept: "
                               f"{exc}") from None
        return JSONResponse({"generation": new.generation,
                             "calibrators": [c.describe() for c in new.by_name.values()]})

    def status_doc(self) -> dict[str, Any]:
        cals = self.live.current
        return {"uptime_seconds": round(time.time() - self.started, 3),
                "generation": cals.generation, "default_calibrator": cals.default,
                "calibrators": [c.describe() for c in cals.by_name.values()],
                **self.metrics.summary(),
                "online": {name: st.describe() for name, st in self.online.items()}}

    async def status(self, request: Request) -> Response:
        return JSONResponse(self.status_doc())

    def gauges(self) -> list[tuple[str, str, dict[str, str], float | None]]:
        cals = self.live.current
        out: list[tuple[str, str, dict[str, str], float | None]] = [
            ("cover_calibrator_generation", "Reloads of the calibrator set (1 at start).",
             {}, float(cals.generation))]
        online = list(self.online.items())
        for name, st in online:
            for rule, t in st.thresholds().items():
                value = None if t is None else float(t)  # "inf" text back to a number
                out.append(("cover_threshold", "Threshold by calibrator and rule (fitted, "
                            "live ACI and DtACI).", {"calibrator": name, "rule": rule}, value))
        for name, st in online:
            out.append(("cover_feedback_total", "Feedback received.", {"calibrator": name},
                        float(st.feedback)))
        for name, st in online:
            cov = st.describe()["coverage"]
            out.append(("cover_feedback_coverage", "Running coverage of the fitted "
                        "regions on feedback.", {"calibrator": name}, cov))
        for name, st in online:
            out.append(("cover_drift_martingale", "Conformal test martingale on the "
                        "feedback scores.", {"calibrator": name}, st.drift.value))
        for name, st in online:
            out.append(("cover_drift_alarm", "1 once the martingale reached 1/delta.",
                        {"calibrator": name}, float(st.drift.alarm)))
        return out

    async def prometheus(self, request: Request) -> Response:
        return PlainTextResponse(exposition(self.metrics, self.gauges()),
                                 media_type="text/plain; version=0.0.4")

    def routes(self) -> list[Route]:
        async def healthz(request: Request) -> Response:
            return JSONResponse({"ok": True})

        table: list[tuple[str, Handler, str, bool]] = [
            ("/healthz", healthz, "GET", False),
            ("/v1/certify", self.certify, "POST", True),
            ("/v1/feedback", self.feedback, "POST", True),
            ("/v1/reload", self.reload, "POST", True),
            ("/v1/status", self.status, "GET", True),
            ("/metrics", self.prometheus, "GET", True),
        ]
        if self.proxy is not None:
            table.append(("/v1/chat/completions", self.proxy.chat, "POST", True))
        return [Route(path, self.guarded(path, fn, auth=auth), methods=[method])
                for path, fn, method, auth in table]

    def on_sighup(self) -> None:
        """SIGHUP: reload; a failure is said on standard error and the old set kept."""
        try:
            new = self.live.reload()
            print(f"cover serve: reloaded calibrators (generation {new.generation})",
                  file=sys.stderr)
        except (CoverError, ValueError, OSError) as exc:
            print(f"cover serve: reload failed, the calibrators in use are kept: {exc}",
                  file=sys.stderr)


def create_app(config: ServeConfig) -> Starlette:
    """The ASGI app of ``config`` (calibrators read now: a bad file fails here)."""
    service = Service(config)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        import asyncio

        loop = asyncio.get_running_loop()
        # Only the main thread may own signal handlers (not under a test's thread).
        with contextlib.suppress(ValueError, RuntimeError, NotImplementedError):
            loop.add_signal_handler(signal.SIGHUP, service.on_sighup)
        yield
        if service.proxy is not None:
            await service.proxy.aclose()

    app = Starlette(routes=service.routes(), lifespan=lifespan)
    app.state.service = service
    return app

