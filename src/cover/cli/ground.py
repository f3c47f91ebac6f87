"""``cover ground``: a live video-LLM grounder behind an OpenAI-compatible endpoint
(vLLM, SGLang): sample frames, ask, parse, write a prediction file; resumable."""

from __future__ import annotations

import argparse
import os

from cover.cli._common import (
    InputPath,
    OutputPath,
    Subparsers,
    _report_problems,
    add_command,
)


def add_parser(sub: Subparsers) -> None:
    p = add_command(sub, "ground", help="ask a video-LLM endpoint for every query's moment",
                    description="Sample frames from each video, ask an OpenAI-compatible chat "
                    "endpoint for the query's moment, parse the answer and write a prediction "
                    "file (raw answers kept; a rerun skips queries already answered).",
                    example="cover ground --endpoint http://127.0.0.1:8000/v1 --model "
                    "Qwen2.5-VL-7B-Instruct --videos videos --queries queries.jsonl "
                    "-o preds.jsonl")
    p.add_argument("--endpoint", required=True,
                   help="server URL, e.g. http://127.0.0.1:8000/v1 (chat completions)")
    p.add_argument("--model", required=True, help="model name the server serves")
    p.add_argument("--videos", required=True, type=InputPath,
                   help="folder holding <vid>.mp4 (or .mkv ...)")
    p.add_argument("--queries", required=True, type=InputPath,
                   help="jsonl with qid, vid, query (duration optional: read from the video)")
    p.add_argument("-o", "--output", required=True, type=OutputPath,
                   help="prediction jsonl to write")
    p.add_argument("--frames", type=int, default=16, help="frames per video (default 16)")
    p.add_argument("--max-side", type=int, default=448, help="frame size limit, px")
    p.add_argument("--concurrency", type=int, default=4, help="requests in flight (default 4)")
    p.add_argument("--timeout", type=float, default=120.0, help="per request, s (default 120)")
    p.add_argument("--retries", type=int, default=4, help="retries per request (default 4)")
    p.add_argument("--backoff", type=float, default=1.0,
                   help="first retry wait, s; doubles each time (default 1)")
    p.add_argument("--max-tokens", type=int, default=256, help="answer length limit, tokens")
    p.add_argument("--api-key-env", metavar="VAR",
                   help="environment variable holding a bearer token, if the server needs one")
    # --log is read too (a rerun resumes from it), but it is written: an output, so it
    # must differ from every input and from -o
    p.add_argument("--log", type=OutputPath, help="resumable log (default: <output>.log)")
    p.add_argument("--on-error", choices=("raise", "reject"), default="raise",
                   help="queries without a video: stop (default) or set them aside")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.errors import InputError
    from cover.grounders.endpoint import ChatClient
    from cover.io.output import check_outputs
    from cover.jobs.ground import run_ground

    if args.log is None:  # the default log is an output too (main checked a given --log)
        check_outputs([("--log", f"{args.output}.log")],
                      [("--queries", args.queries), ("--videos", args.videos)])
    key = None
    if args.api_key_env:
        key = os.environ.get(args.api_key_env)
        if not key:
            raise InputError(f"environment variable {args.api_key_env} is not set")
    client = ChatClient(args.endpoint, args.model, timeout=args.timeout, retries=args.retries,
                        backoff=args.backoff, max_tokens=args.max_tokens, api_key=key)
    s = run_ground(args.queries, args.videos, args.output, client, n_frames=args.frames,
                   max_side=args.max_side, concurrency=args.concurrency, log=args.log,
                   on_error=args.on_error)
    _report_problems(s.problems, what=args.queries)
    print(f"{s.queries} queries: {s.from_log} answered in an earlier run (log), {s.asked} "
          f"asked now; {s.unanswered} without an answer (request or video failed for good; "
          "rerun to retry them)")
    print("answers: " + ", ".join(f"{k} {v}" for k, v in sorted(s.statuses.items())))
    if s.torn_log_lines:
        print(f"skipped {s.torn_log_lines} unreadable log line(s) (an interrupted write)")
    print(f"wrote {args.output}")
    return 0
