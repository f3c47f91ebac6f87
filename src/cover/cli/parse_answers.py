"""``cover parse-answers``: free-text grounder answers -> a prediction file, with rates.

Per file: how many answers parsed, were refusals, echoes of the prompt's example,
failures (and the other classes), with a sample of each; then one Moment-DETR-style
prediction file that every COVER command reads (unparseable = refusal = whole video).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from cover.cli._common import Subparsers, _report_problems, _say, add_command


def add_parser(sub: Subparsers) -> None:
    p = add_command(sub, "parse-answers",
                    help="parse video-LLM free-text answers into a prediction file",
                    description="Parse free-text grounder answers into intervals or refusals "
                    "(with the reason), report the parse / refusal / echo / failure rates per "
                    "file, and write a prediction file every command reads.",
                    example="cover parse-answers answers.json --duration-field end_time "
                    "-o preds.jsonl")
    p.add_argument("answers", nargs="+", help="answer file(s): JSON lines, or JSON keyed by qid")
    out = p.add_mutually_exclusive_group()
    out.add_argument("-o", "--out", help="prediction file to write (one input file)")
    out.add_argument("--out-dir", help="write <name>.preds.jsonl per input file here")
    p.add_argument("--summary", help="write the per-file rates and samples as JSON here")
    p.add_argument("--text-field", help="field holding the answer text (default: auto)")
    p.add_argument("--qid-field", default="qid", help="query id field (default qid)")
    p.add_argument("--duration-field", default="duration",
                   help="field holding the video duration in seconds (default duration)")
    p.add_argument("--videos", help="jsonl with vid + duration for rows that lack one")
    p.add_argument("--fps", type=float, help="frame rate, to read frame indices")
    p.add_argument("--bare", choices=("seconds", "percent", "bins", "frames"),
                   default="seconds",
                   help="how a number with no unit is read (bins = VTimeLLM 0-100 positions)")
    p.add_argument("--prompt-example", action="append", default=[], metavar="TEXT",
                   help="the prompt's own example answer; answers repeating it are echoes "
                        "(repeatable)")
    p.add_argument("--start-only", choices=("refuse", "to_end"), default="refuse",
                   help="a start with no end: a refusal (default) or [start, end of video]")
    p.add_argument("--samples", type=int, default=3, help="examples shown per class")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.errors import summarize
    from cover.grounders.parse.files import parse_answer_file, summary_lines
    from cover.io import read_durations, write_jsonl
    from cover.io.output import write_json

    if args.out and len(args.answers) > 1:
        raise ValueError("-o names one output file; with several answer files use --out-dir")
    durations = None
    if args.videos:
        vids, durs = read_durations(args.videos)
        durations = dict(zip(vids.tolist(), durs.tolist(), strict=True))
    summaries = []
    inputs = [*args.answers, args.videos]
    for path in args.answers:
        pf = parse_answer_file(
            path, text_field=args.text_field, qid_field=args.qid_field,
            duration_field=args.duration_field, durations=durations, fps=args.fps,
            prompt_examples=tuple(args.prompt_example), bare=args.bare,
            start_only=args.start_only)
        summary = pf.summary(k=args.samples)
        summaries.append(summary)
        for line in summary_lines(summary, samples=args.samples > 0):
            print(line)
        _report_problems(pf.problems, what=path)
        noted = [q for q in pf.problems if q.action == "noted"]
        if noted:
            _say(f"cover: {len(noted)} duration(s) set aside in {path} (each row parsed "
                 "without it):\n" + summarize(noted, limit=3))
        target = None
        if args.out:
            target = Path(args.out)
        elif args.out_dir:
            Path(args.out_dir).mkdir(parents=True, exist_ok=True)
            target = Path(args.out_dir) / f"{Path(path).stem}.preds.jsonl"
        if target is not None:
            write_jsonl(target, pf.rows, inputs=inputs)
            n_ref = len(pf.rows) - int(sum(1 for r in pf.rows if r["pred_relevant_windows"]))
            print(f"wrote {target}: {len(pf.rows)} rows ({n_ref} refusals, whole video)")
    if args.summary:
        write_json(args.summary, {"files": summaries}, inputs=inputs)
        print(f"wrote {args.summary}")
    if not (args.out or args.out_dir):
        _say("cover: no prediction file written (pass -o FILE or --out-dir DIR)")
    return 0
