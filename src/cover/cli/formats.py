"""``cover formats``: the file formats COVER reads, one example row each; and the
``--format`` / ``--columns`` flags the reading commands share."""

from __future__ import annotations

import argparse
from typing import Any

from cover.cli._common import InputPath, Subparsers, add_command
from cover.cli.arg_types import positive_float
from cover.errors import say


def add_parser(sub: Subparsers) -> None:
    p = add_command(sub, "formats", help="list the prediction and ground-truth formats read, "
                    "or name the format of files",
                    description="List the prediction and ground-truth formats COVER reads, "
                    "with one example row each; given files, name the format detected in each "
                    "(exit status 2 when a file has none).",
                    example="cover formats preds.jsonl charades_sta_test.txt")
    p.add_argument("files", nargs="*", type=InputPath,
                   help="name the detected format of these files")
    p.add_argument("--explain", action="store_true",
                   help="for each file: the format detected, the mapping it is read with "
                        "and the first rows read")
    p.set_defaults(func=run)


def add_relevance_flag(p: argparse.ArgumentParser, *, calibrated: bool = False) -> None:
    """``--relevance-from``, the one definition of the flag (study, validity, calibrate,
    certify, evaluate); ``calibrated``: a command that applies a calibrator, whose
    recorded source is the default and which a contradicting flag is an error against."""
    default = ("default: the calibrator's, as recorded by cover calibrate; a different "
               "source is an error" if calibrated else
               "default: the file's saliency; layouts with proposals and no saliency do "
               "this already")
    p.add_argument("--relevance-from", choices=("proposals",), default=None,
                   help="build the per-clip relevance (SLS) from the scored predicted windows: "
                        f"each clip gets the best score of the windows overlapping it ({default})")


def add_selection_flags(p: argparse.ArgumentParser) -> None:
    """``--relevance-from`` and ``--max-duration``: what is kept of the rows read."""
    add_relevance_flag(p)
    p.add_argument("--max-duration", type=positive_float, metavar="SECONDS", default=None,
                   help="keep only queries on videos of at most SECONDS (ground-truth "
                        "duration), counted; the COVER paper's ActivityNet protocol is 150")


def add_format_flags(p: argparse.ArgumentParser, *, gt: bool, preds: bool = True) -> None:
    """``--format``/``--columns`` for ``--preds``; with ``gt`` also ``--gt-format``,
    ``--gt-columns`` and ``--gt-durations``."""
    if preds:
        p.add_argument("--format", dest="pred_format", metavar="NAME",
                       help="prediction format (default: detected; see `cover formats`)")
        p.add_argument("--columns", metavar="MAP",
                       help="read --preds as a table: qid=COL,start=COL,end=COL[,vid=..,...]")
    if gt:
        p.add_argument("--gt-format", metavar="NAME",
                       help="ground-truth format (default: detected)")
        p.add_argument("--gt-columns", metavar="MAP", help="read --gt as a table (see --columns)")
        p.add_argument("--gt-durations", metavar="FILE", type=InputPath,
                       help="video durations for ground truth without them (Charades-STA text: "
                            "charades.json; default: charades.json beside it)")


def format_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The :func:`cover.io.labelled.load_labelled` keyword arguments of those flags, the
    ones given (a flag not given is the reader's default, None)."""
    keys = ("pred_format", "columns", "gt_format", "gt_columns", "gt_durations",
            "relevance_from", "max_duration")
    return {k: v for k in keys if (v := getattr(args, k, None)) is not None}


def read_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """:func:`format_kwargs` and the reading flags every reading command shares
    (``--clip``, ``--strict``, ``--on-error``) for a job that hands them all to
    :func:`cover.io.labelled.load_labelled`."""
    return format_kwargs(args) | {k: getattr(args, k) for k in ("clip", "strict", "on_error")}


def _detect(path: str) -> tuple[str, bool]:
    """``<format> (<role>)`` of ``path``, or why none fits; and whether one does."""
    from cover.errors import InputError
    from cover.io.formats import OtherRole, Role, detect

    found: list[str] = []
    roles: tuple[Role, ...] = ("predictions", "ground_truth")
    for role in roles:
        try:
            f, _ = detect(path, role)
        except OtherRole:
            continue  # the other role's format: found on that pass
        except InputError as exc:
            if role == "ground_truth" and not found:
                from cover.io.peek import peek

                answers = peek(path).answer_field()
                if answers is not None:  # not a format: an input of parse-answers
                    return (f"free-text answers (field {answers!r}), not a prediction file: "
                            f"read them with `cover parse-answers {path}`"), False
                return f"error: {exc}", False
            continue
        found.append(f"{f.name} ({role.replace('_', ' ')})")
    return ", ".join(dict.fromkeys(found)), True


def run(args: argparse.Namespace) -> int:
    from cover.io.formats import COLUMNS_EXAMPLE, COLUMNS_FORMAT, FORMATS

    if args.files:
        # every file named (or why not) first; exit 2 when any was not named, as any
        # other command given an input it cannot read
        named = True
        for path in args.files:
            if args.explain:
                from cover.cli.formats_explain import explain

                text, ok = explain(path)
            else:
                said, ok = _detect(path)
                text = f"{path}: {said}"
            print(text)
            named &= ok
        return 0 if named else 2

    for role, title in (("predictions", "Predictions (--preds)"),
                        ("ground_truth", "Ground truth (--gt)")):
        print(f"{title}:")
        for f in FORMATS:
            if f.role == role:
                print(f"  {f.name:<22} {f.title}")
                if f.unit:
                    print(f"  {'':<22} split unit: {f.unit}")
                print(f"  {'':<22} e.g. {f.example}")
        print(f"  {COLUMNS_FORMAT:<22} any jsonl / json / CSV / Parquet table with a column "
              "mapping")
        print(f"  {'':<22} e.g. {COLUMNS_EXAMPLE}")
        print()
    say("The format is detected from the file; --format / --gt-format NAME overrides it.")
    return 0
