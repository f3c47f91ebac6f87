"""Helpers shared by the command modules: path arguments (inputs, outputs, results
folders, checked before any work), the shared flags, a job built from the flags and its
summary printed. Number types: :mod:`cover.cli.arg_types`."""

from __future__ import annotations

import argparse
import functools
import inspect
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from cover.cli.arg_types import (
    Distinct,
    alpha_text,
    fraction_in,
    positive_float,
    positive_int,
    resample_count,
    split_seed_count,
)
from cover.io.qvhighlights import DURATIONS_SHAPES

J = TypeVar("J")

#: What ``add_subparsers()`` returns; each command module's ``add_parser`` takes it.
Subparsers = argparse._SubParsersAction


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter,
                    argparse.RawDescriptionHelpFormatter):
    """``--help`` shows every default and keeps the example's line breaks; an option
    without a default (None) or whose help already names it is left as written."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default is None or action.default is False or "default" in text:
            return action.help
        return super()._get_help_string(action)


def add_command(sub: Subparsers, name: str, *, help: str, description: str,
                example: str) -> argparse.ArgumentParser:
    """A sub-command parser whose ``--help`` shows defaults and one example."""
    p: argparse.ArgumentParser = sub.add_parser(
        name, help=help, description=description, epilog=f"example:\n  {example}",
        formatter_class=HelpFormatter)
    return p


class InputPath(str):
    """argparse type of every file or folder a command reads. :func:`cover.cli.main`
    finds these on the parsed arguments and refuses, before the command runs, an output
    that is the same file as any of them; declaring the type on the argument is what
    keeps a new flag from being forgotten (a test checks every path-like flag has it)."""

    def __new__(cls, text: str) -> InputPath:
        if text == "-":
            raise argparse.ArgumentTypeError("standard input (-) is not read; give a file name")
        return super().__new__(cls, text)


class OutputPath(str):
    """argparse type of a file a command writes (atomically, :mod:`cover.io.output`);
    checked by :func:`cover.cli.main` against every input and every other output."""

    #: Whether ``-`` (standard output) is accepted.
    stdout = False

    def __new__(cls, text: str) -> OutputPath:
        if text == "-" and not cls.stdout:
            raise argparse.ArgumentTypeError("this option cannot write to standard output "
                                             "(-); give a file name")
        return super().__new__(cls, text)


class OutputOrStdout(OutputPath):
    """An :class:`OutputPath` that may be ``-``: standard output, written once the work
    is done (the command's messages then go to standard error)."""

    stdout = True


#: ``--out`` of the commands writing a results folder (cover.io.folders).
RESULTS_FOLDER_HELP = ("results folder, written all or nothing: built beside it and renamed "
                       "into place when the run succeeds; a previous COVER results folder "
                       "there is replaced whole, a folder holding other files is refused")

#: ``--videos`` wherever durations are read from a file (cover.io.durations).
VIDEOS_HELP = (f"video durations for rows that lack them: {DURATIONS_SHAPES}; or a ground "
               "truth of any format: by vid where each video has one length, else each "
               "row finds its query's (by qid; UAG-OOPS clips, rows that name no vid)")


class OutputFolder(str):
    """argparse type of a folder a command writes files into; checked by
    :func:`cover.cli.main` (not a file, not another output)."""


def declared_paths(parser: argparse.ArgumentParser, args: argparse.Namespace
                   ) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """``(inputs, outputs, folders)`` given on the command line, each ``(flag, path)``:
    every value of the chosen command's arguments typed :class:`InputPath`,
    :class:`OutputPath` or :class:`OutputFolder` (lists of them too)."""
    inputs: list[tuple[str, str]] = []
    outputs: list[tuple[str, str]] = []
    folders: list[tuple[str, str]] = []
    for action in parser._actions:
        value = getattr(args, action.dest, None)
        if isinstance(action, argparse._SubParsersAction):
            if value in action.choices:
                for got, more in zip((inputs, outputs, folders),
                                     declared_paths(action.choices[value], args), strict=True):
                    got += more
            continue
        label = max(action.option_strings, key=len, default=action.dest)
        for v in value if isinstance(value, list) else [value]:
            for kind, into in ((InputPath, inputs), (OutputPath, outputs),
                               (OutputFolder, folders)):
                if isinstance(v, kind):
                    into.append((label, v))
    return inputs, outputs, folders


def check_paths(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, before any work, an output that cannot be written, is one of the inputs
    or is another output (:func:`cover.io.output.check_outputs`), and an output folder
    that is a file."""
    from cover.errors import OutputError
    from cover.io.output import check_folder, check_outputs

    inputs, outputs, folders = declared_paths(parser, args)
    check_outputs(outputs, inputs)
    for label, folder in folders:
        try:
            check_folder(folder)
        except OutputError as exc:
            raise OutputError(f"{label} {exc}") from None


def writes_stdout(parser: argparse.ArgumentParser, args: argparse.Namespace) -> bool:
    """Whether an output of this command line is ``-`` (standard output)."""
    return any(path == "-" for _, path in declared_paths(parser, args)[1])


@functools.cache
def _flag_table() -> dict[str, dict[str, Any]]:
    """dest -> ``add_argument`` keywords of the flags several commands declare alike, each
    ``--dest`` with ``-`` for ``_`` (built when first asked: choices from the library)."""
    from cover.scores import ALL_FAMILIES, TARGETS
    from cover.studies.protocol import PAPER_ALPHAS

    return {
        "preds": dict(required=True, type=InputPath,
                      help="predictions (any format of `cover formats`)"),
        "gt": dict(required=True, type=InputPath,
                   help="ground truth (any format of `cover formats`)"),
        "qids": dict(type=InputPath),
        "videos": dict(type=InputPath, metavar="FILE", help=VIDEOS_HELP),
        "output": dict(required=True, type=OutputPath, help="prediction jsonl to write"),
        "out": dict(required=True, type=OutputFolder, help=RESULTS_FOLDER_HELP),
        "json": dict(type=OutputOrStdout),
        "score": dict(choices=ALL_FAMILIES, default="norm", help="score family"),
        "alpha": dict(type=alpha_text, default="0.1", help="miscoverage level in (0, 1)"),
        # argparse hands this list itself to every run without --alphas: never mutated
        "alphas": dict(nargs="+", type=fraction_in(one=False), action=Distinct,
                       default=list(PAPER_ALPHAS)),
        "seed": dict(type=int, default=42),
        "cal_frac": dict(type=fraction_in(one=False), default=0.4,
                         help="share of source videos (the split unit) that calibrate"),
        "resamples": dict(type=resample_count, default=50,
                          help="calibration resamples per cell (at least 2: the spread)"),
        "split_seeds": dict(type=split_seed_count, default=0, metavar="N",  # {}: the spread covers
                            help="also repeat the unit-level split with seeds 0..N-1 and "
                            "report each cell's spread over the N seeds, N >= 2 ({})"),
        "min_scale": dict(type=positive_float, default=1.0, help="NORM scale floor, s"),
        "target": dict(choices=TARGETS, default="envelope",
                       help="cover the envelope of multi-window truth, or every window"),
        "in_memory": dict(action="store_true"),
        "batch_rows": dict(type=positive_int, default=16_384,
                           help="rows per batch when streaming (memory is bounded by one batch)"),
        "strict": dict(action="store_true",
                       help="reject rows whose windows reach outside [0, T] instead of clipping"),
        "on_error": dict(choices=("raise", "reject"), default="raise", help="bad rows: stop "
                         "with an error, or set them aside with reasons and go on"),
        "clip": dict(type=positive_float, default=2.0,
                     help="relevance clip length in seconds (> 0)"),
    }


def flag_default(name: str) -> Any:
    """The default of the shared flag ``name`` (False for a switch)."""
    return _flag_table()[name].get("default", False)


#: The shared flags that also have a one-letter spelling.
_SHORT = {"output": ("-o",)}


def add_flags(p: argparse.ArgumentParser, *names: str, **own: str | dict[str, Any]) -> None:
    """Declare the shared flags ``names`` (dests, in help order) on ``p``; ``own[dest]``
    is the command's own help text (a str, put in the ``{}`` of a shared help that has
    one) or keywords (a dict) over the shared ones."""
    table = _flag_table()
    if set(own) - set(names):
        raise TypeError(f"own wording for flags not declared: {sorted(set(own) - set(names))}")
    for name in names:
        mine = own.get(name, {})
        if isinstance(mine, str):
            shared = table[name].get("help") or ""
            mine = {"help": shared.replace("{}", mine) if "{}" in shared else mine}
        p.add_argument(*_SHORT.get(name, ()), "--" + name.replace("_", "-"),
                       **table[name] | mine)


def job_of(job: Callable[..., J], args: argparse.Namespace, *, paths: Iterable[str] = (),
           **given: Any) -> J:
    """``job`` (a job's dataclass or function) called with every parsed flag named as one
    of its parameters, and ``given``, what the command worked out, over them. ``paths``
    are optional path flags: a :class:`~pathlib.Path`, or None when absent or empty."""
    names = inspect.signature(job).parameters
    flags = {k: v for k, v in vars(args).items() if k in names}
    flags |= {k: Path(flags[k]) if flags[k] else None for k in paths}
    return job(**flags | given)


def printed(lines: Iterable[str]) -> int:
    """Print a job's summary lines; the exit status of a command that got this far (0)."""
    for line in lines:
        print(line)
    return 0
