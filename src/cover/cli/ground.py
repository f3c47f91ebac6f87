"""``cover ground``: a live video-LLM grounder behind an OpenAI-compatible endpoint
(vLLM, SGLang): sample frames, ask, parse, write a prediction file; resumable."""

from __future__ import annotations

import argparse
import os
from collections import Counter

from cover.cli._common import (
    InputPath,
    OutputPath,
    Subparsers,
    add_command,
    add_flags,
    job_of,
)
from cover.cli.arg_types import (
    nonnegative_float,
    nonnegative_int,
    positive_float,
    positive_int,
)
from cover.errors import report_problems, say

#: Exit status of a run in which every request failed (the prediction file is written).
EXIT_ALL_FAILED = 1


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
    add_flags(p, "output")
    p.add_argument("--frames", type=positive_int, default=16,
                   help="frames per video (default 16)")
    p.add_argument("--max-side", type=positive_int, default=448, help="frame size limit, px")
    p.add_argument("--concurrency", type=positive_int, default=4,
                   help="requests in flight (default 4)")
    p.add_argument("--timeout", type=positive_float, default=120.0,
                   help="per request attempt, s, all of it: connect, send, the whole answer "
                        "(default 120)")
    p.add_argument("--retries", type=nonnegative_int, default=4,
                   help="retries per request (default 4)")
    p.add_argument("--backoff", type=nonnegative_float, default=1.0,
                   help="first retry wait, s, at most: the cap doubles each time, the wait "
                        "is drawn at random below it (default 1)")
    p.add_argument("--max-tokens", type=positive_int, default=256,
                   help="answer length limit, tokens")
    p.add_argument("--max-response-bytes", type=positive_int, default=None, metavar="N",
                   help="longest response body kept; a longer one fails that request "
                        "(default 4 MiB)")
    p.add_argument("--api-key-env", metavar="VAR",
                   help="environment variable holding a bearer token, if the server needs one")
    # --log is read too (a rerun resumes from it), but it is written: an output, so it
    # must differ from every input and from -o
    p.add_argument("--log", type=OutputPath, help="resumable log (default: <output>.log)")
    add_flags(p, "on_error", on_error="queries without a usable video (missing, or a vid "
              "reaching outside --videos): stop (default) or set them aside")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.errors import InputError
    from cover.grounders.endpoint import MAX_RESPONSE_BYTES, ChatClient
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
    with job_of(ChatClient, args, url=args.endpoint, api_key=key,
                max_response_bytes=args.max_response_bytes or MAX_RESPONSE_BYTES) as client:
        s = job_of(run_ground, args, client=client, n_frames=args.frames)
    report_problems(s.problems, what=args.queries)
    print(f"{s.queries} queries: {s.from_log} answered in an earlier run (log), {s.asked} "
          f"asked now; {s.unanswered} without an answer (request or video failed for good; "
          "rerun to retry them)")
    print("answers: " + ", ".join(f"{k} {v}" for k, v in sorted(s.statuses.items())))
    if s.torn_log_lines:
        print(f"skipped {s.torn_log_lines} unreadable log line(s) (an interrupted write)")
    print(f"wrote {args.output}")
    if s.all_failed:
        say(f"cover: error: every request failed ({len(s.failed)} of {s.asked} asked); "
             "the prediction file lists them as refusals. Why:")
        for why, n in Counter(why for _, why in s.failed).most_common(4):
            first = next(q for q, w in s.failed if w == why)
            say(f"  {n} x {why} (e.g. qid={first})")
        return EXIT_ALL_FAILED
    return 0
