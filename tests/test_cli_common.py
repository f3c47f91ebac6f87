"""The command modules' shared pieces (``cover.cli._common``): the table of flags several
commands declare alike, a job built from the flags named as its parameters, and every
flag of a job-backed command reaching its job."""

from __future__ import annotations

import argparse
import inspect
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cli_files import command_parsers
from cover.cli._common import add_flags, job_of, printed


def _action(p: argparse.ArgumentParser, dest: str) -> argparse.Action:
    return next(a for a in p._actions if a.dest == dest)


def test_add_flags_declares_the_shared_flag_with_the_commands_own_wording():
    p = argparse.ArgumentParser()
    add_flags(p, "seed", "target", "on_error", seed="my seed",
              on_error={"default": "reject", "help": "mine"})
    seed, target, on_error = (_action(p, d) for d in ("seed", "target", "on_error"))
    assert (seed.option_strings, seed.type, seed.default, seed.help) == (
        ["--seed"], int, 42, "my seed")
    assert target.default == "envelope" and "windows" in (target.choices or ())
    assert (on_error.default, on_error.help) == ("reject", "mine")
    assert [a.dest for a in p._actions][1:] == ["seed", "target", "on_error"]  # in order
    q = argparse.ArgumentParser()
    add_flags(q, "on_error")
    assert _action(q, "on_error").default == "raise"  # one command's wording stays its own
    assert p.parse_args(["--seed", "7"]).seed == 7


def test_add_flags_refuses_wording_for_a_flag_it_does_not_declare():
    with pytest.raises(TypeError, match="cal_frac"):
        add_flags(argparse.ArgumentParser(), "seed", cal_frac="share")


@dataclass(frozen=True)
class _Job:
    a: str
    b: int = 1
    path: Path | None = None
    other: str = "default"


@given(a=st.text(max_size=5), b=st.integers(), path=st.sampled_from([None, "", "x/y"]),
       extra=st.dictionaries(st.sampled_from(["func", "command", "unrelated"]),
                             st.integers()),
       other=st.one_of(st.none(), st.text(max_size=3)))
def test_job_of_takes_the_flags_named_as_parameters(a, b, path, extra, other):
    args = argparse.Namespace(a=a, b=b, path=path, **extra)
    given_ = {} if other is None else {"other": other, "b": b + 1}
    job = job_of(_Job, args, paths=("path",), **given_)
    assert job.a == a
    assert job.b == (b if other is None else b + 1)  # what the command gives wins
    assert job.path == (Path(path) if path else None)  # an empty optional path: absent
    assert job.other == ("default" if other is None else other)


def test_printed_prints_every_line_and_exits_0(capsys):
    assert printed(iter(["one", "two"])) == 0
    assert capsys.readouterr().out == "one\ntwo\n"


#: command -> (its jobs, the arguments of a minimal command line, the flags the command
#: itself turns into other job parameters).
JOBS = {
    "calibrate": (["cover.jobs.calibrate_job:CalibrateJob"],
                  ["--preds", "p", "--gt", "g", "-o", "o"],
                  {"pred_format", "columns", "gt_format", "gt_columns", "gt_durations",
                   "relevance_from"}),  # -> formats
    "certify": (["cover.jobs.certify:CertifyJob"], ["--calibrator", "c", "--preds", "p",
                                                    "-o", "o"], set()),
    "evaluate": (["cover.jobs.evaluate:EvaluateFiles"], ["--regions", "r", "--gt", "g"],
                 set()),
    "serve": (["cover.serve:ServeOptions"], ["--calibrator", "c.json"],
              {"calibrator", "drift_delta"}),  # -> calibrators, delta
    "compare": (["cover.jobs.compare:CompareSpec", "cover.jobs.compare:sides"],
                ["a", "--gt", "g"],
                {"pred_format", "columns", "gt_format", "gt_columns", "gt_durations",
                 "relevance_from", "max_duration"}),
    "validity": (["cover.jobs.validity:run_validity"], ["--preds", "p", "--gt", "g", "--out",
                                                        "o"],
                 {"name", "resamples", "pred_format", "columns", "gt_format", "gt_columns",
                  "gt_durations", "relevance_from", "max_duration"}),
    "study": (["cover.jobs.study:run_studies", "cover.jobs.study_inputs:command_line",
               "cover.studies.protocol:Protocol"], ["all", "--preds", "p", "--gt", "g",
                                                    "--out", "o"],
              {"preds", "gt", "name", "dataset", "resamples", "no_report", "pred_format",
               "columns", "gt_format", "gt_columns", "gt_durations", "relevance_from",
               "max_duration", "on_error", "clip", "strict"}),
    "online": (["cover.jobs.online:run_online"], ["--preds", "p", "--gt", "g", "--out-dir",
                                                  "o"],
               {"out_dir", "no_figure", "name", "switch_name", "pred_format", "columns",
                "gt_format", "gt_columns", "gt_durations", "clip", "strict",
                "on_error", "relevance_from", "max_duration"}),  # -> read_options
    "ground": (["cover.grounders.endpoint:ChatClient", "cover.jobs.ground:run_ground"],
               ["--endpoint", "e", "--model", "m", "--videos", "v", "--queries", "q",
                "-o", "o"], {"endpoint", "frames", "api_key_env"}),
}


@pytest.mark.parametrize("command", sorted(JOBS))
def test_every_flag_of_a_job_backed_command_reaches_its_job(command):
    """A flag added to one of these commands without a job parameter of its name would
    be parsed and then dropped by ``job_of``: each flag is a parameter of one of its
    jobs, or one the command turns into another parameter itself."""
    import importlib

    jobs, argv, turned = JOBS[command]
    parser = dict((" ".join(path), p) for path, p in command_parsers())[command]
    dests = set(vars(parser.parse_args(argv))) - {"func"}
    params = set()
    for where in jobs:
        module, name = where.split(":")
        params |= set(inspect.signature(getattr(importlib.import_module(module), name))
                      .parameters)
    assert dests - params - turned == set()
    assert turned <= dests


@pytest.mark.parametrize("args", [["ensemble", "a.jsonl", "b.jsonl", "-o", "e.jsonl"],
                                  ["grounder", "predict", "--model", "m.json", "--queries",
                                   "q.jsonl", "-o", "p.jsonl"]])
@pytest.mark.parametrize("clip", ["-1", "0", "nan"])
def test_every_clip_flag_is_a_positive_number_named_by_the_flag(args, clip, capsys):
    """--clip of ensemble and grounder predict is checked as every other command's is,
    before any file is read, and the message names the flag."""
    from cover.cli import main

    with pytest.raises(SystemExit) as got:
        main([*args, "--clip", clip])
    assert got.value.code == 2
    assert "argument --clip: must be a finite number > 0" in capsys.readouterr().err


_BASE = {"split": ["--gt", "gt.jsonl", "--out-dir", "s"],
         "validity": ["--preds", "p.jsonl", "--gt", "gt.jsonl", "--out", "o"],
         "study": ["all", "--preds", "p.jsonl", "--gt", "gt.jsonl", "--out", "o"],
         "compare": ["a.jsonl", "--gt", "gt.jsonl"],
         "online": ["--preds", "p.jsonl", "--gt", "gt.jsonl", "--out-dir", "o"],
         "calibrate": ["--preds", "p.jsonl", "--gt", "gt.jsonl", "-o", "c.json"],
         "ensemble": ["a.jsonl", "b.jsonl", "-o", "e.jsonl"],
         "grounder": ["train", "--train", "t.jsonl", "-o", "m.json"],
         "parse-answers": ["a.jsonl", "-o", "p.jsonl"],
         "serve": ["--calibrator", "main=c.json"]}
#: (command, flag, a value it refuses, what the message says of it)
_CHECKED = [(c, "--cal-frac", v, "must be a number in (0, 1)")
            for c in ("split", "validity", "study", "compare", "online") for v in ("0", "1", "nan")]
_CHECKED += [
    ("validity", "--alphas", "1.5", "must be a number in (0, 1)"),
    ("calibrate", "--delta", "0", "must be a number in (0, 1)"),
    ("calibrate", "--delta", "1.5", "must be a number in (0, 1)"),
    ("calibrate", "--max-share", "0", "must be a number in (0, 1]"),
    ("calibrate", "--max-abstain", "1", "must be a number in (0, 1)"),
    ("calibrate", "--min-group-rows", "-3", "must be a whole number >= 0"),
    ("ensemble", "--min-members", "0", "must be a whole number >= 1"),
    ("validity", "--max-duration", "-150", "must be a finite number > 0"),
    ("grounder", "--alpha", "-1", "must be a finite number >= 0"),
    ("grounder", "--bins", "0", "must be a whole number >= 1"),
    ("grounder", "--max-features", "0", "must be a whole number >= 1"),
    ("online", "--switch-at", "1.5", "must be a number in [0, 1]"),
    ("online", "--window", "0", "must be a whole number >= 1"),
    ("online", "--min-scale", "-1", "must be a finite number > 0"),
    ("study", "--min-scale", "0", "must be a finite number > 0"),
    ("study", "--resample-frac", "0", "must be a number in (0, 1]"),
    ("parse-answers", "--fps", "0", "must be a finite number > 0"),
    ("parse-answers", "--samples", "-1", "must be a whole number >= 0"),
    ("serve", "--port", "70000", "must be a port number <= 65535"),
]


@pytest.mark.parametrize(("command", "flag", "value", "says"), _CHECKED)
def test_every_number_flag_is_checked_before_any_file_is_read(command, flag, value, says,
                                                               capsys):
    """A number a flag cannot take is a usage error naming the flag, before any file is
    read (the files here do not exist). These were read as any int or float and refused
    after the inputs were read, by the library's name for them ("fraction must be in
    (0, 1)", "window must be >= 1", "min_rows must be ..."), or not at all."""
    from cover.cli import main

    with pytest.raises(SystemExit) as got:
        main([command, *_BASE[command], flag, value])
    assert got.value.code == 2
    assert f"argument {flag}: {says}" in capsys.readouterr().err


def test_videos_is_one_flag_with_one_reading_on_every_command() -> None:
    """--videos of certify, serve and parse-answers is the shared flag: one help, and
    every one reads durations through cover.io.row_durations (any shape it takes)."""
    from cover.cli import build_parser
    from cover.cli._common import VIDEOS_HELP

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name in ("certify", "serve", "parse-answers"):
        flag = next(a for a in sub.choices[name]._actions if "--videos" in a.option_strings)
        assert flag.help == VIDEOS_HELP, name


def test_a_run_builds_only_its_command_and_parses_as_the_whole_parser() -> None:
    """``cover COMMAND ...`` builds the parser of COMMAND alone; its help, usage and
    parsed arguments are those of the same command in the whole parser."""
    from cover.cli import COMMANDS, build_parser

    def command(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return sub.choices[name]

    whole = build_parser()
    for name in COMMANDS:
        alone = build_parser(name)
        one = next(a for a in alone._actions if isinstance(a, argparse._SubParsersAction))
        assert list(one.choices) == [name]
        assert command(alone, name).format_help() == command(whole, name).format_help()
    argv = ["evaluate", "--regions", "r.jsonl", "--gt", "g.jsonl", "--json", "e.json"]
    assert vars(build_parser("evaluate").parse_args(argv)) == vars(whole.parse_args(argv))
