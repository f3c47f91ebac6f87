"""``cover parse-answers``: free-text grounder answers -> a prediction file, with rates.

Per file: how many answers parsed, were refusals, echoes of the prompt's example,
failures (and the other classes), with a sample of each; then one Moment-DETR-style
prediction file that every COVER command reads (unparseable = refusal = whole video).
"""

from __future__ import annotations

import argparse

from cover.cli._common import (
    InputPath,
    OutputFolder,
    OutputOrStdout,
    Subparsers,
    add_command,
    add_flags,
)
from cover.cli.arg_types import nonnegative_int, positive_float


def add_parser(sub: Subparsers) -> None:
    p = add_command(sub, "parse-answers",
                    help="parse video-LLM free-text answers into a prediction file",
                    description="Parse free-text grounder answers into intervals or refusals "
                    "(with the reason), report the parse / refusal / echo / failure rates per "
                    "file, and write a prediction file every command reads.",
                    example="cover parse-answers answers.json --duration-field end_time "
                    "-o preds.jsonl")
    p.add_argument("answers", nargs="+", type=InputPath,
                   help="answer file(s): JSON lines, or JSON keyed by qid")
    out = p.add_mutually_exclusive_group()
    out.add_argument("-o", "--out", type=OutputOrStdout,
                     help="prediction file to write (one input file; - for standard output)")
    out.add_argument("--out-dir", type=OutputFolder,
                     help="write <name>.preds.jsonl per input file here")
    p.add_argument("--summary", type=OutputOrStdout,
                   help="write the per-file rates and samples as JSON here (- for standard "
                   "output)")
    p.add_argument("--text-field", action="append", default=[], metavar="[FILE=]FIELD",
                   help="field holding the answer text (default: detected per file, the "
                   "field whose values read like answers); FILE=FIELD for one file, or "
                   "repeat once per file in file order")
    p.add_argument("--qid-field", default="qid", help="query id field (default qid)")
    vid = p.add_mutually_exclusive_group()
    vid.add_argument("--vid-field", metavar="NAME",
                     help="field holding the video id (default: vid; in the UAG-OOPS "
                     "layout the clip's source compilation; else the qid, with a warning)")
    vid.add_argument("--vid-pattern", metavar="REGEX",
                     help="read the video id from the qid: the regex's 'vid' group, else "
                     "its first group, else the whole match (e.g. '^(?P<vid>.+)_\\d+$')")
    p.add_argument("--duration-field", default="duration",
                   help="field holding the video duration in seconds (default duration)")
    add_flags(p, "videos")
    p.add_argument("--fps", type=positive_float, help="frame rate, to read frame indices")
    p.add_argument("--bare", choices=("seconds", "percent", "bins", "frames"),
                   default="seconds",
                   help="how a number with no unit is read (bins = VTimeLLM 0-100 positions)")
    p.add_argument("--prompt-example", action="append", default=[], metavar="TEXT",
                   help="the prompt's own example answer; answers repeating it are echoes "
                        "(repeatable)")
    p.add_argument("--start-only", choices=("refuse", "to_end"), default="refuse",
                   help="a start with no end: a refusal (default) or [start, end of video]")
    p.add_argument("--samples", type=nonnegative_int, default=3, help="examples shown per class")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.grounders.parse.fields import text_fields_per_file
    from cover.jobs.parse_answers import parse_answers

    answers = [str(a) for a in args.answers]
    parse_answers(answers, text_fields=text_fields_per_file(args.text_field, answers),
                  out=args.out, out_dir=args.out_dir, summary=args.summary,
                  videos=args.videos, samples=args.samples,
                  duration_field=args.duration_field, qid_field=args.qid_field,
                  vid_field=args.vid_field, vid_pattern=args.vid_pattern, fps=args.fps,
                  prompt_examples=tuple(args.prompt_example), bare=args.bare,
                  start_only=args.start_only)
    return 0
