"""``cover parse-answers``: free-text grounder answers -> a prediction file, with rates.

Per file: how many answers parsed, were refusals, echoes of the prompt's example,
failures (and the other classes), with a sample of each; then one Moment-DETR-style
prediction file that every COVER command reads (unparseable = refusal = whole video).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cover.cli._common import (
    InputPath,
    OutputFolder,
    OutputOrStdout,
    Subparsers,
    add_command,
    add_flags,
)
from cover.cli.arg_types import nonnegative_int, positive_float
from cover.errors import InputError, report_problems, say


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


def _targets(args: argparse.Namespace) -> dict[str, str | Path]:
    """The prediction file each answer file is written to, checked before any work:
    with ``--out-dir``, ``<name>.preds.jsonl`` per input, and two inputs of one name
    (``a/answers.jsonl``, ``b/answers.jsonl``) are refused rather than one silently
    overwriting the other; no target may be an input or the ``--summary``."""
    from cover.io.output import check_outputs, make_folder

    if args.out:
        return {args.answers[0]: args.out}
    if not args.out_dir:
        return {}
    targets: dict[str, str | Path] = {}
    for path in args.answers:
        target = Path(args.out_dir) / f"{Path(path).stem}.preds.jsonl"
        first = next((src for src, t in targets.items() if t == target), None)
        if first is not None:
            raise InputError(f"{first} and {path} would both be written to {target} "
                             "(--out-dir names each output after its input file); rename "
                             "one, or run once per file with -o")
        targets[path] = target
    make_folder(args.out_dir)
    check_outputs([("--out-dir", t) for t in targets.values()]
                  + ([("--summary", args.summary)] if args.summary else []),
                  [("answers", p) for p in args.answers]
                  + ([("--videos", args.videos)] if args.videos else []))
    return targets


def run(args: argparse.Namespace) -> int:
    from cover.errors import summarize
    from cover.grounders.parse.fields import text_fields_per_file
    from cover.grounders.parse.files import parse_answer_file, summary_lines, warnings_of
    from cover.io import write_jsonl
    from cover.io.durations import read_video_durations
    from cover.io.output import write_json

    if args.out and len(args.answers) > 1:
        raise ValueError("-o names one output file; with several answer files use --out-dir")
    text_fields = text_fields_per_file(args.text_field, [str(a) for a in args.answers])
    targets = _targets(args)
    durations = None
    if args.videos:
        vids, durs = read_video_durations(args.videos)
        durations = dict(zip(vids.tolist(), durs.tolist(), strict=True))
    summaries = []
    inputs = [*args.answers, args.videos]
    for path, text_field in zip(args.answers, text_fields, strict=True):
        pf = parse_answer_file(
            path, text_field=text_field, qid_field=args.qid_field, vid_field=args.vid_field,
            vid_pattern=args.vid_pattern, duration_field=args.duration_field,
            durations=durations, fps=args.fps,
            prompt_examples=tuple(args.prompt_example), bare=args.bare,
            start_only=args.start_only)
        summary = pf.summary(k=args.samples)
        summaries.append(summary)
        for line in summary_lines(summary, samples=args.samples > 0):
            print(line)
        report_problems(pf.problems, what=path)
        for line in warnings_of(summary, duration_field=args.duration_field):
            say(line)
        noted = [q for q in pf.problems if q.action == "noted"]
        if noted:
            say(f"cover: {len(noted)} duration(s) set aside in {path} (each row parsed "
                 "without it):\n" + summarize(noted, limit=3))
        target = targets.get(path)
        if target is not None:
            write_jsonl(target, pf.rows, inputs=inputs)
            n_ref = len(pf.rows) - int(sum(1 for r in pf.rows if r["pred_relevant_windows"]))
            print(f"wrote {target}: {len(pf.rows)} rows ({n_ref} refusals, whole video)")
    if args.summary:
        write_json(args.summary, {"files": summaries}, inputs=inputs)
        print(f"wrote {args.summary}")
    if not (args.out or args.out_dir):
        say("cover: no prediction file written (pass -o FILE or --out-dir DIR)")
    return 0
