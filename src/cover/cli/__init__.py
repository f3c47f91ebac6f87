"""The ``cover`` command line: one thin module per command, the logic in the library.

Every command reads real files, says what happened to every input row (kept,
clipped, refused or rejected, with counts), and exits non-zero with a message that
names file, line and qid when the input is bad. A command module has
``add_parser(sub)`` and ``run(args) -> exit code``; :data:`COMMANDS` lists them in
the order ``cover --help`` shows.

Every path argument is declared with its role as its argparse type
(:class:`~cover.cli._common.InputPath`, ``OutputPath``, ``OutputOrStdout``,
``OutputFolder``); :func:`main` checks them all before the command runs: no output is
an input or another output, none is a device, pipe or folder.

Exit codes: 0 done; 2 an error (message on standard error); 130 interrupted (Ctrl-C);
143 terminated (SIGTERM: ``kill``, ``timeout``, ``docker stop``), cleaned up as for
Ctrl-C (the files being written are discarded); 141 standard output closed early
(``cover ... | head -1``): the run stops quietly, as a Unix tool killed by SIGPIPE
would, and the shell's ``pipefail`` still sees that it did not finish (a command that
writes a results folder prints its summary once the folder is in place, so the folder
is kept).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import select
import signal
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

from cover._version import __version__
from cover.cli._common import check_paths, writes_stdout
from cover.errors import CoverError, CoverWarning, say

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 128 + signal.SIGTERM
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the program is so that it unwinds as Ctrl-C does: every
    writer deletes its temporary file (a ``KeyboardInterrupt`` subclass, so code that
    cleans up on Ctrl-C cleans up on SIGTERM too)."""

#: Command modules under ``cover.cli``, in help order.
COMMANDS: tuple[str, ...] = ("calibrate", "certify", "evaluate", "split", "validity",
                             "compare", "study", "report",
                             "demo",
                             "ensemble", "online",
                             "parse-answers", "grounder", "data", "formats",
                             "schema", "ground", "serve")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``cover`` parser with every command, or with the one command ``only`` (what a
    run of that command parses with: building all of them costs more than most runs)."""
    ap = argparse.ArgumentParser(
        prog="cover",
        description="Conformal coverage guarantees for video temporal grounders.",
        epilog="example:\n  cover demo --out cover-demo    (then `cover COMMAND --help`)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--version", action="version", version=f"cover {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    for name in COMMANDS if only is None else (only,):
        importlib.import_module(f"cover.cli.{name.replace('-', '_')}").add_parser(sub)
    return ap


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` in the main thread while the command runs
    (the previous handler is put back after). A process forked from this one gets the
    default action back (it dies), as it would without COVER."""
    pid = os.getpid()

    def handler(signum: int, frame: Any) -> None:
        if os.getpid() != pid:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise Terminated

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (main() called from a worker): leave it
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stdout_closed() -> bool:
    """Whether standard output is a pipe whose reader has gone (``| head -1``), rather
    than some other pipe or socket the run was writing to."""
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(event & select.POLLERR for _, event in poll.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def _quiet_stdout() -> None:
    """Point standard output at /dev/null, so the interpreter's last flush of what is
    still buffered does not fail with "Broken pipe" again at exit."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    from cover.io.output import data_to_stdout

    argv = list(sys.argv[1:] if argv is None else argv)
    # A command named first is the only parser built; anything else (no command, an
    # unknown one, --help, --version) gets the whole parser and its usage.
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args = parser.parse_args(argv)

    def show(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
        say(f"cover: warning: {message}")

    warnings.showwarning = show
    warnings.simplefilter("always", CoverWarning)
    try:
        with _sigterm_unwinds():
            check_paths(parser, args)
            with (data_to_stdout() if writes_stdout(parser, args) else
                  contextlib.nullcontext()):
                code = int(args.func(args))
            sys.stdout.flush()  # a closed pipe fails here, not in the interpreter's exit
            return code
    except BrokenPipeError as exc:
        if not _stdout_closed():
            say(f"cover: error: {exc.filename or 'a pipe'}: {exc.strerror or exc}")
            return EXIT_USAGE
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except (CoverError, ValueError, ImportError) as exc:  # ImportError: an extra not installed
        say(f"cover: error: {exc}")
        return EXIT_USAGE
    except OSError as exc:  # a file that cannot be read or written: no traceback
        where = f"{exc.filename}: " if exc.filename else ""
        say(f"cover: error: {where}{exc.strerror or exc}")
        return EXIT_USAGE
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM as Terminated
        # Every output is written to a temporary file and renamed only when complete.
        term = isinstance(exc, Terminated)
        say(f"cover: {'terminated' if term else 'interrupted'}; files being written were "
            "discarded, earlier outputs are intact")
        return EXIT_TERMINATED if term else EXIT_INTERRUPTED
