"""``cover schema calibrator``: print the JSON Schema (draft 2020-12) of a COVER file, so
services in other languages can check a calibrator before they use it."""

from __future__ import annotations

import argparse
import json

from cover.cli._common import Subparsers, add_command

#: The documents that have a published schema.
DOCUMENTS = ("calibrator",)


def add_parser(sub: Subparsers) -> None:
    p = add_command(sub, "schema", help="print the JSON Schema of the calibrator file",
                    description="Print the JSON Schema (draft 2020-12) of a file COVER "
                    "writes, for checking it outside COVER (cover itself also checks the "
                    "checksum, the ranks and the threshold ranges when it loads one).",
                    example="cover schema calibrator > calibrator.schema.json")
    p.add_argument("document", choices=DOCUMENTS, help="which file's schema")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cover.calibrate.calibrator_schema import calibrator_schema

    print(json.dumps(calibrator_schema(), indent=2))
    return 0
