"""``cover serve``: a certifying HTTP service in front of any grounder.

:func:`serve` builds the app (:func:`cover.serve.app.create_app`) and runs it under
uvicorn. Needs the ``serve`` extra: ``pip install 'cover-grounding[serve]'``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ServeOptions:
    """The ``cover serve`` command line, parsed."""

    calibrators: tuple[tuple[str, str], ...]
    host: str = "127.0.0.1"
    port: int = 8000
    token_env: str | None = None
    max_body_bytes: int = 64 << 20
    videos: str | None = None
    clip: float = 2.0
    strict: bool = False
    on_error: str = "raise"
    state: str | None = None
    gamma: str = "0.005"
    window: int = 1000
    delta: float = 0.01
    log_level: str = "warning"
    upstream: str | None = None
    upstream_timeout: float = 120.0
    upstream_token_env: str | None = None


def _modules() -> None:
    try:
        import httpx  # noqa: F401
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise ImportError("cover serve needs the serve extra: pip install "
                          "'cover-grounding[serve]' (starlette, uvicorn, httpx)") from None


def build(opts: ServeOptions) -> Any:
    """The ASGI app for ``opts`` (calibrators and ``--videos`` read now)."""
    import os

    _modules()  # before importing the app: say which extra is missing
    from cover.errors import InputError
    from cover.jobs.certify_stream import videos_index
    from cover.serve.app import ServeConfig, create_app
    from cover.serve.calibrators import Sources
    from cover.serve.proxy import ProxyConfig

    def secret(flag: str, var: str | None) -> str | None:
        value = os.environ.get(var) if var else None
        if var and not value:
            raise InputError(f"{flag} {var}: the variable is not set or empty")
        return value

    token = secret("--token-env", opts.token_env)
    proxy = None if opts.upstream is None else ProxyConfig(
        opts.upstream, opts.upstream_timeout, secret("--upstream-token-env",
                                                     opts.upstream_token_env))
    vd = videos_index(opts.videos, "requests") if opts.videos else None
    sources = Sources(opts.calibrators, vd, opts.videos or "--videos (not given)",
                      opts.clip, opts.strict)
    if opts.state is None:
        import warnings

        from cover.errors import CoverWarning

        warnings.warn(CoverWarning("no --state FILE: feedback and online thresholds are kept "
                                   "in memory only and lost when the service stops"),
                      stacklevel=1)
    return create_app(ServeConfig(sources, token, opts.max_body_bytes, opts.on_error,
                                  opts.state or ":memory:", opts.gamma, opts.window,
                                  opts.delta, proxy))


def serve(opts: ServeOptions) -> int:
    """Run the service until SIGINT / SIGTERM; returns the exit code."""
    app = build(opts)
    check_listen(opts.host, opts.port)
    import uvicorn

    uvicorn.run(app, host=opts.host, port=opts.port, log_level=opts.log_level,
                timeout_graceful_shutdown=5)
    return 0


def check_listen(host: str, port: int) -> None:
    """An :class:`InputError` naming --host / --port when the address cannot be resolved
    or bound (taken, not this machine's): uvicorn would log its own words and exit 3.
    A test bind, released at once (SO_REUSEADDR, as uvicorn binds)."""
    import socket

    from cover.errors import InputError

    try:
        family, kind, proto, _, addr = socket.getaddrinfo(host, port,
                                                          type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise InputError(f"--host {host}: cannot be resolved ({exc.strerror})") from None
    except UnicodeError:  # an empty or overlong label: no host name at all
        raise InputError(f"--host {host}: not a host name or address") from None
    with socket.socket(family, kind, proto) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(addr)
        except OSError as exc:
            raise InputError(f"--host {host} --port {port}: cannot listen there "
                             f"({exc.strerror or exc})") from None
