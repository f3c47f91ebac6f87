"""``cover grounder train|predict``: a text-only grounder that trains here on CPU in seconds
(:mod:`cover.grounders.blind`), for users with no grounder of their own yet."""

from __future__ import annotations

import argparse

from cover.cli._common import InputPath, Subparsers, add_command, add_flags, job_of
from cover.cli.arg_types import nonnegative_float, positive_int
from cover.errors import report_problems


def add_parser(sub: Subparsers) -> None:
    p = add_command(sub, "grounder", help="train / run the text-only CPU grounder",
                    description="A text-only (blind) grounder that runs on CPU: `train` fits it "
                    "on a labelled train split, `predict` answers queries with a window and a "
                    "per-clip relevance signal.",
                    example="cover grounder train --train train.jsonl -o blind.json")
    inner = p.add_subparsers(dest="grounder_command", required=True)
    t = add_command(inner, "train", help="fit on a labelled train split (query text + windows)",
                    description="Fit the text-only grounder on a labelled train split and save "
                    "it as a JSON model file.",
                    example="cover grounder train --train charades_train_release.jsonl "
                    "-o blind.json")
    t.add_argument("--train", required=True, type=InputPath,
                   help="any ground-truth file with query text (Lighthouse jsonl, ActivityNet "
                        "Captions json, TACoS, Charades-STA ...)")
    add_flags(t, "output", output="model JSON to write")
    t.add_argument("--prior-only", action="store_true",
                   help="the length-prior baseline: the training set's mean start/end")
    t.add_argument("--alpha", type=nonnegative_float, default=1.0, help="ridge penalty (default 1)")
    t.add_argument("--bins", type=positive_int, default=20, help="relevance bins (default 20)")
    t.add_argument("--max-features", type=positive_int, default=2000, help="vocabulary size limit")
    t.add_argument("--durations", type=InputPath,
                   help="video durations file, for formats that lack them "
                   "(Charades-STA)")
    add_flags(t, "on_error", on_error={"default": "reject", "help": "training rows with bad "
                                        "windows: set aside and counted (default) or stop"})
    t.set_defaults(func=run_train)
    q = add_command(inner, "predict", help="predict a window and per-clip relevance per query",
                    description="Predict a window and a per-clip relevance signal per query "
                    "with a model from `cover grounder train`.",
                    example="cover grounder predict --model blind.json --queries "
                    "charades_test_release.jsonl -o preds.jsonl")
    q.add_argument("--model", required=True, type=InputPath,
                   help="model JSON from `cover grounder train`")
    q.add_argument("--queries", required=True, type=InputPath,
                   help="jsonl with qid, vid, query, duration, or any ground-truth file")
    add_flags(q, "clip", "output")
    q.add_argument("--durations", type=InputPath,
                   help="video durations file, for formats that lack them")
    add_flags(q, "on_error")
    q.set_defaults(func=run_predict)


def run_train(args: argparse.Namespace) -> int:
    from cover.grounders.blind import BlindGrounder
    from cover.grounders.queries import read_queries

    loaded = read_queries(args.train, durations=args.durations, on_error=args.on_error)
    report_problems(loaded.problems, what=args.train)
    if loaded.table.truth is None:
        from cover.errors import InputError
        raise InputError(f"{args.train}: training needs labelled rows (relevant_windows)")
    model = job_of(BlindGrounder, args).fit(loaded.table)
    model.save(args.output, inputs=[args.train])
    kind = "length prior" if args.prior_only else f"{len(model.vocabulary_)} terms"
    print(f"trained the blind grounder ({kind}) on {model.n_train_} queries; wrote "
          f"{args.output}")
    return 0


def run_predict(args: argparse.Namespace) -> int:
    from cover.grounders.blind import BlindGrounder, prediction_rows
    from cover.grounders.queries import read_queries
    from cover.io import write_jsonl

    model = BlindGrounder.load(args.model)
    loaded = read_queries(args.queries, durations=args.durations, on_error=args.on_error)
    report_problems(loaded.problems, what=args.queries)
    table = model.predict(loaded.table, clip=args.clip)
    write_jsonl(args.output, prediction_rows(table), inputs=[args.model, args.queries])
    print(f"predicted {len(table)} queries; wrote {args.output}")
    return 0
