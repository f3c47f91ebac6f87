"""``cover certify``: certified regions for new predictions (no labels needed)."""

from __future__ import annotations

import argparse

from cover.cli._common import (
    InputPath,
    OutputOrStdout,
    Subparsers,
    add_command,
    add_flags,
    job_of,
    printed,
)
from cover.cli.arg_types import fraction_in
from cover.cli.formats import add_format_flags, add_relevance_flag


def add_parser(sub: Subparsers) -> None:
    p = add_command(
        sub, "certify", help="certified regions for new predictions",
        description="Certified regions for new predictions (no labels needed, only video "
        "durations). Every input row is written back with a cover block: certified, "
        "refused (the whole video) or rejected with its reason.",
        example="cover certify --calibrator calibrator.json --preds preds.jsonl "
        "--videos gt.jsonl --qids splits/test_qids.txt -o regions.jsonl")
    p.add_argument("--calibrator", required=True, type=InputPath,
                   help="calibrator JSON from cover calibrate")
    add_flags(p, "preds", "videos", "qids", "output", qids="certify only these query ids", output={
        "type": OutputOrStdout,
        "help": "regions to write (- for standard output); the name sets the format: "
        ".parquet (from a Parquet input with --columns), .csv/.tsv (CSV rows with cover "
        "columns, from a CSV input with --columns), anything else JSON lines"})
    p.add_argument("--max-p", type=fraction_in(one=True), metavar="P",
                   help="abstain on the rows whose conformal p-value (cover.p_value: the "
                   "smallest alpha at which the region is narrower than the video) is above "
                   "P; needs a calibrator fitted with --keep-scores")
    p.add_argument("--compact", action="store_true",
                   help="write only qid, vid and the cover block (Moment-DETR JSON lines, and "
                   "Parquet or CSV with --columns written as such)")
    add_flags(p, "in_memory", "batch_rows", "strict", "on_error", "clip",
              in_memory="read the whole input at once, even when it could be streamed "
              "(JSON lines: as one batch, the same output)")
    add_format_flags(p, gt=False)
    add_relevance_flag(p, calibrated=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.jobs.certify import CertifyJob, certify

    return printed(certify(job_of(CertifyJob, args)))
