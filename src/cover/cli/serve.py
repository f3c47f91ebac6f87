"""``cover serve``: certify rows over HTTP (see :mod:`cover.serve`)."""

from __future__ import annotations

import argparse
import typing

from cover.cli._common import (
    InputPath,
    OutputPath,
    Subparsers,
    add_command,
    add_flags,
    job_of,
)
from cover.cli.arg_types import (
    alpha_text,
    fraction_in,
    port_number,
    positive_float,
    positive_int,
)


def _url(text: str) -> str:
    """argparse type: an http:// or https:// base URL."""
    from urllib.parse import urlsplit

    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(f"expected an http:// or https:// URL such as "
                                         f"http://127.0.0.1:8001/v1, got {text}")
    return text


class NamedCalibrator(InputPath):
    """``NAME=cal.json`` (or ``cal.json``, named by its file stem): the path, an input,
    with :attr:`label` the name requests use."""

    label: str

    def __new__(cls, text: str) -> NamedCalibrator:
        name, sep, path = text.partition("=")
        if not sep:
            name, path = "", text
        if sep and not name:
            raise argparse.ArgumentTypeError(f"expected NAME=FILE, got {text}")
        out = typing.cast(NamedCalibrator, super().__new__(cls, path))
        from pathlib import Path

        out.label = name or Path(path).stem
        return out


def add_parser(sub: Subparsers) -> None:
    p = add_command(
        sub, "serve", help="a certifying HTTP service (certify, feedback, drift alarm)",
        description="Serve POST /v1/certify (the cover blocks cover certify writes), "
        "feedback with online thresholds and a drift alarm, /v1/status and /metrics. "
        "Needs the serve extra (starlette, uvicorn). See docs/serve.md.",
        example="cover serve --calibrator main=calibrator.json --videos gt.jsonl --port 8000")
    p.add_argument("--calibrator", required=True, action="append", type=NamedCalibrator,
                   metavar="NAME=FILE",
                   help="a calibrator JSON from cover calibrate, under a name requests use "
                   "(repeat for several; the first is the default)")
    add_flags(p, "videos")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (the default serves this machine only)")
    p.add_argument("--port", type=port_number, default=8000, help="port to bind")
    p.add_argument("--token-env", metavar="VAR",
                   help="require Authorization: Bearer <the value of this variable>")
    p.add_argument("--max-body-bytes", type=positive_int, default=64 << 20,
                   help="largest request body accepted (413 above)")
    p.add_argument("--state", type=OutputPath,
                   help="SQLite file of the feedback log (WAL; created when missing): a "
                   "restart resumes the same online thresholds; without it, memory only")
    p.add_argument("--gamma", type=alpha_text, default="0.005",
                   help="ACI step size of the live threshold")
    p.add_argument("--window", type=positive_int, default=1000,
                   help="feedback scores the online thresholds are quantiles of")
    p.add_argument("--drift-delta", type=fraction_in(one=False), default=0.01,
                   help="false-alarm probability of the drift alarm (alarm at 1/delta)")
    p.add_argument("--upstream", type=_url, metavar="URL",
                   help="proxy mode: serve POST /v1/chat/completions, forwarded to "
                   "URL/chat/completions (an OpenAI-compatible video-LLM server, e.g. "
                   "http://127.0.0.1:8001/v1), each answer returned with its cover object")
    p.add_argument("--upstream-timeout", type=positive_float, default=120.0,
                   metavar="SECONDS",
                   help="longest wait to connect to the upstream and for each of its "
                   "answers (or stream chunks); past it the request gets 504")
    p.add_argument("--upstream-token-env", metavar="VAR",
                   help="send Authorization: Bearer <the value of this variable> upstream")
    p.add_argument("--log-level", default="warning",
                   choices=("critical", "error", "warning", "info", "debug"),
                   help="uvicorn's log level")
    add_flags(p, "strict", "on_error", "clip")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.errors import InputError
    from cover.serve import ServeOptions, serve

    names = [c.label for c in args.calibrator]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InputError(f"--calibrator: the name {dup[0]} is given twice; name each "
                         "calibrator NAME=FILE")
    return serve(job_of(ServeOptions, args, delta=args.drift_delta,
                        calibrators=tuple((c.label, str(c)) for c in args.calibrator)))
