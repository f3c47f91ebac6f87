"""Every path a command reads or writes is declared on its argument (InputPath,
OutputPath, OutputOrStdout, OutputFolder) and checked by ``cover.cli.main`` before the
command runs: no output is an input, another output, a device or a pipe."""

from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from cli_files import command_parsers, leftovers, snapshot, synthetic, write_jsonl
from cover.cli import main
from cover.cli._common import InputPath, OutputFolder, OutputPath

#: A flag whose name or help looks like a path.
_PATH_DEST = re.compile(r"(^|_)(preds|gt|qids|regions|calibrator|videos|queries|durations|"
                        r"answers|files|train|results|log|summary|output|out|dir|json|humans|"
                        r"model|to)$")
_PATH_HELP = re.compile(r"\b(files?|folders?|jsonl|json|paths?|to write|here)\b", re.I)
_PATH_METAVAR = re.compile(r"FILE|DIR|PATH")

#: (command, flag) that look like a path but are not one, and why.
NOT_PATHS = {
    ("validity", "--name"): "a display name (its help mentions the file name it defaults to)",
    ("study", "--name"): "a grounder name",
    ("study", "--dataset"): "a dataset name",
    ("ensemble", "--name"): "a display name",
    ("online", "--name"): "a display name",
    ("ground", "--model"): "the model name the server serves, not a file",
    ("compare", "--name-a"): "a display name (defaults to its file's folder name)",
    ("compare", "--name-b"): "a display name (defaults to its file's folder name)",
    ("parse-answers", "--text-field"): "a field name, FILE=FIELD naming an answer file given",
    ("evaluate", "--columns"): "a column mapping (its help names JSON-lines regions)",
}


def _looks_like_a_path(action: argparse.Action) -> bool:
    from cover.cli import arg_types as c

    numbers = (int, float, c.positive_int, c.nonnegative_int, c.positive_float,
               c.nonnegative_float, c.resample_count, c.split_seed_count)
    if action.nargs == 0 or action.choices or action.type in numbers:
        return False  # a switch, a choice or a number cannot be a path
    return bool(_PATH_DEST.search(action.dest) or _PATH_HELP.search(action.help or "")
                or _PATH_METAVAR.search(str(action.metavar or "")))


def test_every_path_argument_is_declared_as_an_input_or_an_output():
    markers = (InputPath, OutputPath, OutputFolder)
    unmarked, seen = [], 0
    for path, parser in command_parsers():
        for action in parser._actions:
            if isinstance(action, (argparse._SubParsersAction, argparse._HelpAction)):
                continue
            flag = max(action.option_strings, key=len, default=action.dest)
            marked = isinstance(action.type, type) and issubclass(action.type, markers)
            seen += marked
            if _looks_like_a_path(action) and not marked \
                    and (" ".join(path), flag) not in NOT_PATHS:
                unmarked.append(f"cover {' '.join(path)} {flag}")
    assert unmarked == [], "declare these with type=InputPath / OutputPath / OutputFolder"
    assert seen > 40  # the walk really saw the commands


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    preds, gt = synthetic(tmp_path)
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "-o", str(cal)]) == 0
    regions = tmp_path / "regions.jsonl"
    assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--videos",
                 str(gt), "-o", str(regions)]) == 0
    return {"preds": preds, "gt": gt, "cal": cal, "regions": regions}


def _refused(args: list[str], words: str, capsys: Any, *keep: Path) -> None:
    """The run exits 2 before any work with ``words`` in its message; ``keep`` unchanged."""
    before = snapshot(*keep)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err, err
    assert snapshot(*keep) == before


def test_calibrate_shift_to_is_an_input(files, tmp_path, capsys):
    target = tmp_path / "target.jsonl"
    target.write_bytes(files["gt"].read_bytes())
    _refused(["calibrate", "--preds", str(files["preds"]), "--gt", str(files["gt"]), "--rule",
              "weighted", "--shift-to", str(target), "-o", str(target)],
             f"--output {target}: is also an input of this run (--shift-to {target})",
             capsys, target, *files.values())


def test_evaluate_calibrator_is_an_input(files, capsys):
    cal = files["cal"]
    _refused(["evaluate", "--regions", str(files["regions"]), "--gt", str(files["gt"]),
              "--calibrator", str(cal), "--json", str(cal)],
             f"--json {cal}: is also an input of this run (--calibrator {cal})",
             capsys, *files.values())


@pytest.mark.parametrize("case", ["output is queries", "log is output", "log is queries",
                                  "default log is queries"])
def test_ground_refuses_before_any_request(files, tmp_path, case, capsys, monkeypatch):
    def ask(*a: Any, **k: Any) -> None:
        pytest.fail("a request was sent")

    monkeypatch.setattr("cover.jobs.ground.run_ground", ask)
    queries, out = files["gt"], tmp_path / "out.jsonl"
    out.write_text("previous\n")
    if case == "output is queries":
        paths = ["-o", str(queries)]
        words = f"--output {queries}: is also an input of this run (--queries {queries})"
    elif case == "log is output":
        paths = ["-o", str(out), "--log", str(out)]
        words = f"--log {out}: is the same file as --output {out}"
    elif case == "log is queries":
        paths = ["-o", str(out), "--log", str(queries)]
        words = f"--log {queries}: is also an input of this run (--queries {queries})"
    else:  # no --log: it is <output>.log
        queries = tmp_path / "out.jsonl.log"
        queries.write_bytes(files["gt"].read_bytes())
        paths = ["-o", str(out)]
        words = f"--log {queries}: is also an input of this run (--queries {queries})"
    _refused(["ground", "--endpoint", "http://127.0.0.1:9/v1", "--model", "m", "--videos",
              str(tmp_path), "--queries", str(queries), *paths], words, capsys, out, queries,
             *files.values())


def _answers(path: Path, n: int = 3) -> Path:
    return write_jsonl(path, [{"qid": i, "vid": "a", "duration": 30,
                               "response": f"from {i} to {i + 5} seconds"} for i in range(n)])


def test_parse_answers_summary_cannot_be_the_predictions(tmp_path, capsys):
    src = _answers(tmp_path / "answers.jsonl")
    out = tmp_path / "x.json"
    out.write_text("previous\n")
    _refused(["parse-answers", str(src), "-o", str(out), "--summary", str(out)],
             f"--summary {out}: is the same file as --out {out}", capsys, src, out)


def test_parse_answers_out_dir_refuses_two_inputs_of_one_name(tmp_path, capsys):
    for sub in ("a", "b"):
        (tmp_path / sub).mkdir()
    a = _answers(tmp_path / "a" / "answers.jsonl")
    b = _answers(tmp_path / "b" / "answers.json", n=2)  # the same stem: the same output
    out = tmp_path / "out"
    _refused(["parse-answers", str(a), str(b), "--out-dir", str(out)],
             f"{a} and {b} would both be written to {out / 'answers.preds.jsonl'}",
             capsys, a, b)
    assert not out.exists()  # refused before any work
    c = _answers(tmp_path / "b" / "other.jsonl")
    assert main(["parse-answers", str(a), str(c), "--out-dir", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["answers.preds.jsonl", "other.preds.jsonl"]


def test_parse_answers_out_dir_target_cannot_be_the_summary(tmp_path, capsys):
    a = _answers(tmp_path / "answers.jsonl")
    out = tmp_path / "out"
    out.mkdir()
    summary = out / "answers.preds.jsonl"
    _refused(["parse-answers", str(a), "--out-dir", str(out), "--summary", str(summary)],
             f"--summary {summary}: is the same file as --out-dir {summary}", capsys, a)
    assert list(out.iterdir()) == []


def test_an_output_folder_that_is_a_file_is_refused_before_any_work(files, capsys):
    _refused(["validity", "--preds", str(files["preds"]), "--gt", str(files["gt"]), "--out",
              str(files["cal"])], f"--out {files['cal']}: is a file, not a folder",
             capsys, *files.values())


def test_a_fifo_or_a_link_to_one_is_refused(files, tmp_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    link = tmp_path / "stdout-like"
    link.symlink_to(fifo)
    for target in (fifo, link):
        _refused(["certify", "--calibrator", str(files["cal"]), "--preds", str(files["preds"]),
                  "--videos", str(files["gt"]), "-o", str(target)],
                 f"--output {target}: is a named pipe", capsys, *files.values())
    assert fifo.is_fifo() and link.is_symlink() and leftovers(tmp_path) == []


def test_dash_writes_standard_output_and_messages_go_to_stderr(files, tmp_path, capsys):
    assert main(["certify", "--calibrator", str(files["cal"]), "--preds", str(files["preds"]),
                 "--videos", str(files["gt"]), "-o", "-"]) == 0
    got = capsys.readouterr()
    assert got.out == files["regions"].read_text()
    assert "wrote -" in got.err and "certified" in got.err
    assert main(["evaluate", "--regions", str(files["regions"]), "--gt", str(files["gt"]),
                 "--json", "-"]) == 0
    got = capsys.readouterr()
    assert json.loads(got.out)["counts"]["rows"] == 60 and "rows evaluated" in got.err
    src = _answers(tmp_path / "answers.jsonl")
    assert main(["parse-answers", str(src), "-o", "-"]) == 0
    got = capsys.readouterr()
    assert [json.loads(x)["qid"] for x in got.out.splitlines()] == ["0", "1", "2"]


def test_dash_is_refused_where_it_makes_no_sense(files, capsys):
    with pytest.raises(SystemExit):
        main(["ensemble", str(files["preds"]), str(files["preds"]), "-o", "-"])
    assert "cannot write to standard output (-); give a file name" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["formats", "-"])
    assert "standard input (-) is not read" in capsys.readouterr().err
    _refused(["parse-answers", str(files["preds"]), "-o", "-", "--summary", "-"],
             "--summary -: is the same file as --out -", capsys, files["preds"])
