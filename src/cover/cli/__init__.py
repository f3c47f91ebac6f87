"""The ``cover`` command line: one thin module per command, the logic in the library.

Every command reads real files, says what happened to every input row (kept,
clipped, refused or rejected, with counts), and exits non-zero with a message that
names file, line and qid when the input is bad. A command module has
``add_parser(sub)`` and ``run(args) -> exit code``; :data:`COMMANDS` lists them in
the order ``cover --help`` shows.
"""

from __future__ import annotations

import argparse
import importlib
import warnings
from collections.abc import Sequence
from typing import Any

from cover._version import __version__
from cover.cli._common import _say
from cover.errors import CoverError, CoverWarning

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

#: Command modules under ``cover.cli``, in help order.
COMMANDS: tuple[str, ...] = ("calibrate", "certify", "evaluate", "split", "validity",
                             "compare", "study", "report",
                             "demo",
                             "ensemble", "online",
                             "parse-answers", "grounder", "data", "formats",
                             "ground")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="cover",
        description="Conformal coverage guarantees for video temporal grounders.",
        epilog="example:\n  cover demo --out cover-demo    (then `cover COMMAND --help`)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--version", action="version", version=f"cover {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    for name in COMMANDS:
        importlib.import_module(f"cover.cli.{name.replace('-', '_')}").add_parser(sub)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    def show(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
        _say(f"cover: warning: {message}")

    warnings.showwarning = show
    warnings.simplefilter("always", CoverWarning)
    try:
        return int(args.func(args))
    except (CoverError, ValueError) as exc:
        _say(f"cover: error: {exc}")
        return EXIT_USAGE
    except OSError as exc:  # a file that cannot be read or written: no traceback
        where = f"{exc.filename}: " if exc.filename else ""
        _say(f"cover: error: {where}{exc.strerror or exc}")
        return EXIT_USAGE
    except ImportError as exc:  # an optional extra that is not installed
        _say(f"cover: error: {exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        # Every output is written to a temporary file and renamed only when complete.
        _say("cover: interrupted; files being written were discarded, earlier outputs are "
             "intact")
        return EXIT_INTERRUPTED
