"""Nothing lost, nothing overwritten: every command refuses to write over its inputs, a
failed or interrupted run leaves earlier outputs intact, and inputs are never changed."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from cli_files import command_parsers
from cli_files import leftovers as _leftovers
from cli_files import snapshot as _snapshot
from cli_files import synthetic as _synthetic
from cli_files import write_jsonl as _write_jsonl
from cover.cli import main


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    preds, gt = _synthetic(tmp_path)
    qids = tmp_path / "q.txt"
    qids.write_text("".join(f"{i}\n" for i in range(40)))
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "-o", str(cal)]) == 0
    regions = tmp_path / "regions.jsonl"
    assert main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--videos",
                 str(gt), "-o", str(regions)]) == 0
    return {"preds": preds, "gt": gt, "qids": qids, "cal": cal, "regions": regions}


def _certify(f: dict[str, Path], out: Path) -> list[str]:
    return ["certify", "--calibrator", str(f["cal"]), "--preds", str(f["preds"]), "--videos",
            str(f["gt"]), "--qids", str(f["qids"]), "-o", str(out)]


@pytest.mark.parametrize("which", ["preds", "gt", "cal", "qids", "symlink"])
def test_certify_refuses_to_write_over_an_input(files, tmp_path, which, capsys):
    if which == "symlink":
        target = tmp_path / "alias.jsonl"
        target.symlink_to(files["preds"])
    else:
        target = files[which]
    before = _snapshot(*files.values())
    assert main(_certify(files, target)) == 2
    err = capsys.readouterr().err
    assert "is also an input of this run" in err and "Traceback" not in err
    assert _snapshot(*files.values()) == before
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("which", ["preds", "gt", "qids"])
def test_calibrate_refuses_to_write_over_an_input(files, which, capsys):
    before = _snapshot(*files.values())
    assert main(["calibrate", "--preds", str(files["preds"]), "--gt", str(files["gt"]),
                 "--qids", str(files["qids"]), "-o", str(files[which])]) == 2
    assert "is also an input of this run" in capsys.readouterr().err
    assert _snapshot(*files.values()) == before


@pytest.mark.parametrize("which", ["regions", "gt"])
def test_evaluate_refuses_to_write_json_over_an_input(files, which, capsys):
    before = _snapshot(*files.values())
    assert main(["evaluate", "--regions", str(files["regions"]), "--gt", str(files["gt"]),
                 "--json", str(files[which])]) == 2
    assert "is also an input of this run" in capsys.readouterr().err
    assert _snapshot(*files.values()) == before


def test_failed_run_keeps_the_previous_output(files, tmp_path, capsys):
    out = tmp_path / "out.jsonl"
    assert main(_certify(files, out)) == 0
    previous = out.read_bytes()
    bad = _write_jsonl(tmp_path / "bad.jsonl", [{"qid": 1, "vid": "v0_0.0_150.0",
                                                 "pred_relevant_windows": [[5, 1, 1]]}])
    files["preds"] = bad
    before = _snapshot(*files.values())
    assert main(_certify(files, out)) == 2
    assert "bad.jsonl:1 (qid=1)" in capsys.readouterr().err
    assert out.read_bytes() == previous and _snapshot(*files.values()) == before
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("case", ["missing folder", "folder as output", "folder as input",
                                  "folder as predictions", "unreadable input"])
def test_file_system_problems_are_messages_not_tracebacks(files, tmp_path, case, capsys,
                                                          monkeypatch):
    args = _certify(files, tmp_path / "out.jsonl")
    if case == "missing folder":
        args[-1] = str(tmp_path / "nowhere" / "out.jsonl")
        words = "does not exist; create it first"
    elif case == "folder as output":
        args[-1] = str(tmp_path)
        words = "is a folder"
    elif case == "folder as input":
        args[args.index("--qids") + 1] = str(tmp_path)
        words = "is a folder"
    elif case == "folder as predictions":
        args[args.index("--preds") + 1] = str(tmp_path)
        words = "is a folder; give a file"
    else:
        os.chmod(files["preds"], 0)
        if os.geteuid() == 0:  # root reads any file: fail the read as it would for a user
            real, real_open = Path.read_bytes, Path.open

            def denied(self: Path) -> bytes:
                if self == files["preds"]:
                    raise PermissionError(13, "Permission denied", str(self))
                return real(self)

            def denied_open(self: Path, *a: Any, **k: Any) -> Any:  # the streaming reader
                if self == files["preds"]:
                    raise PermissionError(13, "Permission denied", str(self))
                return real_open(self, *a, **k)

            monkeypatch.setattr(Path, "read_bytes", denied)
            monkeypatch.setattr(Path, "open", denied_open)
        words = "preds.jsonl"  # named, with the system's reason (wording varies by reader)
    try:
        assert main(args) == 2
    finally:
        os.chmod(files["preds"], 0o644)
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
    if case == "unreadable input":
        assert "Permission denied" in err
    assert not (tmp_path / "out.jsonl").exists() and _leftovers(tmp_path) == []


def test_non_finite_echoed_fields_are_written_by_the_policy(files, tmp_path, capsys):
    rows = [json.loads(x) for x in files["preds"].read_text().splitlines()]
    lines = [json.dumps(r) for r in rows]
    # Python's json writes (and reads) bare NaN / Infinity; strict JSON cannot hold them.
    lines[3] = lines[3][:-1] + ', "extra_conf": NaN, "meta": {"s": [1, Infinity]}}'
    lines[5] = lines[5][:-1] + ', "extra_conf": -Infinity}'
    preds = _write_jsonl(tmp_path / "nan.jsonl", lines)
    out = tmp_path / "out.jsonl"
    for mode in ("raise", "reject"):
        assert main(["certify", "--calibrator", str(files["cal"]), "--preds", str(preds),
                     "--videos", str(files["gt"]), "-o", str(out), "--on-error", mode]) == 0
        text = out.read_text()
        got = [json.loads(x, parse_constant=lambda c: pytest.fail(c))
               for x in text.splitlines()]
        assert len(got) == len(rows)
        assert got[3]["extra_conf"] is None and got[3]["meta"] == {"s": [1, "inf"]}
        assert got[3]["cover"]["non_finite_fields"] == ["extra_conf", "meta.s[1]"]
        assert got[3]["cover"]["status"] == "certified"
        assert got[5]["extra_conf"] == "-inf"
        assert "non_finite_fields" not in got[4]["cover"]
    assert main(["evaluate", "--regions", str(out), "--gt", str(files["gt"])]) == 0
    assert "60 rows evaluated" in capsys.readouterr().out


def test_evaluate_json_is_strict_json(files, tmp_path):
    # One row refused and the rest dropped: the non-refused metrics are NaN (no rows).
    metrics = tmp_path / "m.json"
    assert main(["evaluate", "--regions", str(files["regions"]), "--gt", str(files["gt"]),
                 "--json", str(metrics), "--refusal-policy", "drop"]) == 0
    doc = json.loads(metrics.read_text(), parse_constant=lambda c: pytest.fail(c))
    assert doc["counts"]["rows"] == 60
    one = tmp_path / "one.jsonl"
    rows = [json.loads(x) for x in files["regions"].read_text().splitlines()][:1]
    rows[0]["cover"] |= {"refused": True, "status": "refused"}
    _write_jsonl(one, rows)
    assert main(["evaluate", "--regions", str(one), "--gt", str(files["gt"]), "--json",
                 str(metrics), "--refusal-policy", "drop"]) == 0
    doc = json.loads(metrics.read_text(), parse_constant=lambda c: pytest.fail(c))
    assert doc["marginal"]["coverage"] is None and doc["non_refused"]["n"] == 0


_PAUSE_WRITER = textwrap.dedent("""
    import signal, sys, time
    import cover.io.regions_jsonl as rj

    # Ctrl-C as a terminal gives it: a process started with SIGINT ignored keeps it ignored
    # (Python then installs no KeyboardInterrupt), and a test worker may have inherited
    # that from a library another test started in it.
    signal.signal(signal.SIGINT, signal.default_int_handler)

    import cover.stream.jsonl as sj

    def pausing(real, at):
        n = 0

        def paused(*args):
            # Pause the writer part-way through the file so the interrupt lands mid-write.
            nonlocal n
            n += 1
            if n == at:
                open(sys.argv[1], "w").close()
                time.sleep(120)
            return real(*args)
        return paused

    rj.echo_line = pausing(rj.echo_line, 1000)  # the in-memory writer
    sj._out_line = pausing(sj._out_line, 1000)  # the streaming writer, row by row
    sj._fast_out = pausing(sj._fast_out, 2)  # ... and a batch at a time: the second batch
    from cover.cli import main
    sys.exit(main(sys.argv[2:]))
""")


@pytest.mark.parametrize(("sig", "path", "code", "words"), [
    (signal.SIGINT, ["--batch-rows", "1000"], 130, "interrupted"),
    (signal.SIGINT, ["--in-memory"], 130, "interrupted"),
    (signal.SIGTERM, ["--batch-rows", "1000"], 143, "terminated"),  # kill, docker stop
], ids=["ctrl-c streamed", "ctrl-c in-memory", "sigterm streamed"])
def test_a_signal_during_a_large_write_keeps_the_previous_output(tmp_path, sig, path, code,
                                                                 words):
    preds, gt = _synthetic(tmp_path, n=5000, seed=1)
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "-o", str(cal)]) == 0
    if "--in-memory" in path:
        # JSON lines read whole are the stream's one batch; the whole read that writes
        # row by row is that of a file read as a document: the same rows as a JSON array.
        rows = preds.read_text().splitlines()
        preds = tmp_path / "preds.json"
        preds.write_text("[" + ",\n".join(rows) + "]\n")
    out = tmp_path / "regions.jsonl"
    out.write_text('{"previous": "output"}\n')
    before = _snapshot(preds, gt, cal, out)
    ready = tmp_path / "ready"
    script = tmp_path / "run.py"
    script.write_text(_PAUSE_WRITER)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(ready), "certify", "--calibrator", str(cal),
         "--preds", str(preds), "--videos", str(gt), "-o", str(out), *path],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while not ready.exists():
            if proc.poll() is not None:
                pytest.fail(f"the run ended before writing: {proc.communicate()}")
            time.sleep(0.02)
        partial = [p for p in tmp_path.iterdir() if p.name.startswith(".regions.jsonl.")]
        assert len(partial) == 1 and partial[0].stat().st_size > 0  # mid-write
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code
    assert words in err and "Traceback" not in err
    assert _snapshot(preds, gt, cal, out) == before
    assert _leftovers(tmp_path) == []


def test_a_closed_standard_output_ends_the_run_quietly():
    # `cover formats | head -0`: the reader is gone before the first line is written
    proc = subprocess.Popen([sys.executable, "-m", "cover", "formats"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141  # 128 + SIGPIPE, as a Unix tool stopped by it
    assert err == ""  # no "Broken pipe", no traceback, no "Exception ignored"


@pytest.mark.parametrize("path", [" ".join(p) for p, _ in command_parsers()])
def test_help_shows_defaults_and_an_example(path, capsys):
    from cover.cli._common import HelpFormatter

    parser = dict((" ".join(p), q) for p, q in command_parsers())[path]
    with pytest.raises(SystemExit):
        main([*path.split(), "--help"])
    text = capsys.readouterr().out
    assert f"example:\n  cover {path} " in text
    # argparse formats an option's help with %, not a description: "%%" there shows as is
    assert "%%" not in text, path
    assert issubclass(parser.formatter_class, HelpFormatter), path
    fmt = HelpFormatter("cover")
    for action in parser._actions:
        if action.option_strings and action.default not in (None, False, argparse.SUPPRESS):
            # argparse prints nothing, not even the default, for an option without help
            assert action.help, (path, action.option_strings)
            assert "default" in (fmt._get_help_string(action) or ""), (path,
                                                                       action.option_strings)


def test_messages_never_show_python_reprs(files, tmp_path, capsys):
    rows = [json.loads(x) for x in files["preds"].read_text().splitlines()]
    rows[2]["vid"] = "another_video"
    preds = _write_jsonl(tmp_path / "p.jsonl", rows)
    assert main(["calibrate", "--preds", str(preds), "--gt", str(files["gt"]), "-o",
                 str(tmp_path / "c.json")]) == 2
    err = capsys.readouterr().err
    assert "p.jsonl:3 (qid=2)" in err and "another_video" in err
    assert "np.str_" not in err and "np.float" not in err


