"""``cover certify``: certified regions for new predictions (no labels needed)."""

from __future__ import annotations

import argparse
import math
import warnings
from typing import Any

import numpy as np

from cover.cli._common import (
    InputPath,
    OutputOrStdout,
    Subparsers,
    add_command,
    add_input_flags,
    positive_int,
    report_problems,
    say,
)
from cover.cli.formats import add_format_flags
from cover.errors import CoverWarning, InputError, RowProblem


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
    p.add_argument("--preds", required=True, type=InputPath,
                   help="predictions (any format of `cover formats`)")
    p.add_argument("--videos", type=InputPath,
                   help="video durations when preds lack them: any jsonl with vid "
                   "and duration, or a JSON object vid -> {duration} (charades.json)")
    p.add_argument("--qids", type=InputPath, help="certify only these query ids")
    p.add_argument("-o", "--output", required=True, type=OutputOrStdout,
                   help="regions to write (- for standard output): JSON lines (Parquet for "
                   "a Parquet input; CSV rows with cover columns when a CSV input is written "
                   "to a .csv)")
    p.add_argument("--max-p", type=_unit_interval, metavar="P",
                   help="abstain on the rows whose conformal p-value (cover.p_value: the "
                   "smallest alpha at which the region is narrower than the video) is above "
                   "P; needs a calibrator fitted with --keep-scores; reads the input whole")
    p.add_argument("--compact", action="store_true",
                   help="write only qid, vid and the cover block (streamed inputs)")
    p.add_argument("--in-memory", action="store_true",
                   help="read the whole input even when it could be streamed")
    p.add_argument("--batch-rows", type=positive_int, default=16_384,
                   help="rows per batch when streaming (memory is bounded by one batch)")
    add_input_flags(p)
    add_format_flags(p, gt=False)
    p.set_defaults(func=run)


def _unit_interval(text: str) -> float:
    """A number in (0, 1] (``--max-p``)."""
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not 0 < v <= 1:
        raise argparse.ArgumentTypeError(f"must be a number in (0, 1], got {text!r}")
    return v


def run(args: argparse.Namespace) -> int:
    from cover.calibrate import Calibrator
    from cover.data.join import fill_durations
    from cover.io import formats
    from cover.io.durations import read_video_durations
    from cover.io.jsonl import raise_on_rejections
    from cover.io.qids import read_qid_lines, unknown_qids
    from cover.io.regions_jsonl import certified_rows, write_certified
    from cover.jobs.certify_stream import certify_streaming, streamable
    from cover.row_status import ABSTAINED, CERTIFIED, REFUSED, REJECTED, row_status

    inputs = [args.calibrator, args.preds, args.videos, args.qids]
    kind = None if args.in_memory or args.max_p is not None else streamable(
        args.preds, args.pred_format, args.columns, args.output)
    if kind is not None:
        certify_streaming(kind, calibrator=args.calibrator, preds=args.preds,
                          output=args.output, videos=args.videos, qids=args.qids,
                          columns=args.columns, clip=args.clip, strict=args.strict,
                          on_error=args.on_error, compact=args.compact,
                          batch_rows=args.batch_rows)
        return 0
    if args.compact:
        raise InputError("--compact applies to streamed inputs (Moment-DETR JSON lines, "
                         "Parquet with --columns, CSV with --columns written to .csv)")
    cal = Calibrator.load(args.calibrator)
    if args.max_p is not None and cal.score_sketch_ is None:
        raise InputError(f"--max-p needs per-row p-values, and {args.calibrator} kept no "
                         "calibration scores: fit it with cover calibrate --keep-scores")
    got = formats.read(args.preds, "predictions", format=args.pred_format, options=formats.Options(
        clip=args.clip, on_error=args.on_error, columns=args.columns))
    say(f"{args.preds}: {got.format} ({len(got.loaded.table)} rows)")
    preds = got.loaded
    table = preds.table
    problems: list[RowProblem] = []
    if args.qids:
        wanted, lines = read_qid_lines(args.qids)
        problems += unknown_qids(args.qids, wanted, lines, table.qid, args.preds)
        table = table.select_qids(wanted)
    vids, durs = read_video_durations(args.videos) if args.videos else (None, None)
    table, filled = fill_durations(table, vids, durs, strict=args.strict,
                                   source=args.videos or "--videos (not given)")
    problems += filled
    no_duration = [p for p in problems if p.problem.startswith("no duration known")]
    if no_duration and not args.videos and args.on_error == "raise":
        raise InputError(
            f"{len(no_duration)} prediction row(s) carry no duration, e.g. {no_duration[0]}.\n"
            "Pass --videos FILE: any jsonl with 'vid' and 'duration' fields (QVHighlights' "
            "highlight_*_release.jsonl files qualify; no ground truth is needed)."
        )
    raise_on_rejections(problems, args.on_error, args.preds)
    regions = cal.certify(table)
    if args.max_p is not None:
        from cover.calibrate.pvalues import abstain_above

        regions = abstain_above(regions, args.max_p)
    rejected = dict(preds.rejected)
    lines = preds.table.line if preds.table.line is not None else np.zeros(0, dtype=np.int64)
    records: list[Any] = [] if preds.table.records is None else list(preds.table.records)
    by_line = {int(ln): rec for ln, rec in zip(lines.tolist(), records, strict=True)}
    for p in problems:
        if p.action == "rejected" and p.path == preds.table.source and p.line in by_line:
            rejected[p.line] = by_line[p.line]
    meta = {"score": cal.score, "rule": cal.rule, "alpha": float(cal.alpha_fraction),
            "k": cal.k_, "n_calibration": cal.n_}
    fo = cal.fitted_on_ or {}
    in_cal = None
    if fo.get("sha256"):
        meta["calibration_sha256"] = fo["sha256"]
    if fo.get("qids") is not None:
        in_cal = np.isin(table.qid, np.asarray(fo["qids"], dtype=str))
        if in_cal.any():
            warnings.warn(CoverWarning(
                f"{int(in_cal.sum())} of the {len(table)} rows certified are rows the "
                "calibrator was fitted on (marked cover.in_calibration); coverage measured "
                "on them does not test the guarantee"), stacklevel=1)
    rows = certified_rows(table, regions, meta, rejected, preds.problems + problems,
                          in_calibration=in_cal)
    write_certified(args.output, rows, inputs=inputs)
    report_problems(preds.problems + problems, what=args.preds)
    status = row_status(regions)  # an empty region is rejected, never certified
    n_ref, n_empty = int((status == REFUSED).sum()), int((status == REJECTED).sum())
    n_abs = int((status == ABSTAINED).sum())
    print(f"certified {int((status == CERTIFIED).sum())}, refused (whole video) {n_ref}, "
          + (f"abstained (whole video) {n_abs}, " if n_abs else "")
          + f"rejected {len(rejected) + n_empty} of {len(rows)} input rows; mean region length "
          f"{regions.length.mean() if len(regions) else float('nan'):.1f} s")
    print(f"wrote {args.output}")
    return 0
