"""``cover study``: the paper's studies (SPEC §6) over one or more (grounder, dataset) pairs."""

from __future__ import annotations

import argparse
from pathlib import Path

from cover.cli._common import (
    InputPath,
    Subparsers,
    add_command,
    add_flags,
    flag_default,
    job_of,
)
from cover.cli.arg_types import fraction_in
from cover.cli.formats import add_format_flags, add_selection_flags, read_kwargs


def add_parser(sub: Subparsers) -> None:
    from cover.jobs.study import STUDIES

    p = add_command(sub, "study", help="the paper's studies: tables, figures and an HTML report",
                    description="Run one study or all of them over (--preds, --gt) pairs. "
                    "A grounder named the same on two datasets gets the transfer study.",
                    example="cover study all --preds qd_detr/preds.jsonl --gt gt.jsonl "
                    "--out study-results")
    p.add_argument("study", choices=(*STUDIES, "all"),
                   help="which study; rcps's main table uses the paper's hoeffding bound, "
                        "while `cover calibrate --rule rcps` defaults to binomial (both are "
                        "in rcps's bounds table)")
    add_flags(p, "preds", "gt",
              preds={"action": "append", "help": "prediction file; repeat for more pairs"},
              gt={"action": "append",
                  "help": "ground truth; one for all --preds or one per --preds"})
    p.add_argument("--name", action="append", help="grounder name per --preds "
                   "(default: the prediction file's folder, with the file name when one "
                   "folder holds several)")
    p.add_argument("--dataset", action="append", help="dataset name per --preds "
                   "(default: guessed from the --gt file name)")
    add_flags(p, "out", "alphas", "resamples", alphas="alpha grid (default: the paper's)",
              resamples="calibration resamples")
    p.add_argument("--resample-frac", type=fraction_in(one=True), default=0.5,
                   help="share of the pool's units per resample")
    add_flags(p, "seed", "cal_frac", "min_scale", "target", seed="split and resample seed")
    p.add_argument("--humans", type=InputPath, metavar="DATA_DIR",
                   help="add the human-grounder table from the re-annotations under DATA_DIR")
    add_flags(p, "split_seeds", split_seeds="coverage, efficiency, conditional studies")
    p.add_argument("--no-report", action="store_true",
                   help="skip report.html and the figures it shows (tables and JSON only)")
    add_format_flags(p, gt=True)  # one reading of every --preds / --gt
    add_selection_flags(p)
    add_flags(p, "strict", "clip")
    add_flags(p, "on_error", on_error="bad rows (and ground truth without a prediction): "
              "stop with an error (default) or set them aside with reasons")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.jobs.study import run_studies
    from cover.jobs.study_inputs import command_line, input_pairs
    from cover.studies.protocol import Protocol

    protocol = job_of(Protocol, args, n_resamples=args.resamples,
                      alphas=tuple(float(a) for a in args.alphas))
    inputs = input_pairs([Path(p) for p in args.preds], [Path(g) for g in args.gt],
                         args.name, args.dataset)
    # read as every other command reads the files; the command line records the reading
    # flags given otherwise than their defaults
    read = {k: v for k, v in read_kwargs(args).items()
            if k not in ("on_error", "clip", "strict") or v != flag_default(k)}
    # Both take min_scale, target and split_seeds from the flags of those names.
    out = Path(args.out)
    command = job_of(command_line, args, out=out, paths=("humans",), inputs=inputs,
                     protocol=protocol, read=read)
    job_of(run_studies, args, out=out, studies=[args.study], inputs=inputs,
           protocol=protocol, read=read, command=command,
           humans_dir=Path(args.humans) if args.humans else None,
           report=not args.no_report, figures=not args.no_report)
    print(f"wrote {out}/ (manifest.json, tables.md, per-pair folders"
          f"{'' if args.no_report else ', report.html'})")
    return 0
