"""``cover ensemble``: several prediction files of the same queries -> one grounder that
reports its boundary uncertainty (mean top-1 window, ``start_std``, ``end_std``)."""

from __future__ import annotations

import argparse

from cover.cli._common import InputPath, Subparsers, add_command, add_flags
from cover.cli.arg_types import positive_int
from cover.errors import report_problems


def add_parser(sub: Subparsers) -> None:
    p = add_command(sub, "ensemble", help="mean and sd of several grounders' top-1 windows",
                    description="Combine prediction files of the same queries into one: the "
                    "mean of the members' top-1 boundaries and their standard deviation "
                    "(start_std, end_std), an uncertainty-reporting grounder.",
                    example="cover ensemble run1/preds.jsonl run2/preds.jsonl run3/preds.jsonl "
                    "-o ensemble.jsonl")
    p.add_argument("preds", nargs="+", type=InputPath,
                   help="prediction jsonl files (Moment-DETR format), >= 2")
    p.add_argument("--name", action="append", help="display name per file (for the counts)")
    p.add_argument("--min-members", type=positive_int, default=2,
                   help="members that must give a row an interval, else the row is refused "
                        "(default 2)")
    add_flags(p, "clip", "on_error", "output", output="ensemble prediction jsonl to write")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.errors import InputError
    from cover.grounders.ensemble import ensemble
    from cover.io import read_predictions, write_jsonl

    if len(args.preds) < 2:
        raise InputError("give at least two prediction files")
    names = args.name or list(args.preds)
    if len(names) != len(args.preds):
        raise InputError("give one --name per prediction file")
    tables = []
    for path in args.preds:
        loaded = read_predictions(path, clip=args.clip, on_error=args.on_error)
        report_problems(loaded.problems, what=path)
        tables.append(loaded.table)
    ens = ensemble(tables, names=names, min_members=args.min_members)
    write_jsonl(args.output, ens.records(), inputs=args.preds)
    c = ens.counts
    print(f"ensemble of {c['members']} files: {c['rows']} queries, {c['all_members']} with an "
          f"interval from every member, {c['refused']} refused (fewer than "
          f"{args.min_members} members), {c['with_relevance']} with mean relevance")
    for nm in names:
        print(f"  {nm}: missing {c[f'missing_in[{nm}]']}, refused {c[f'refused_by[{nm}]']}")
    print(f"wrote {args.output}")
    return 0
