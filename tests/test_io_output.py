"""The atomic writer: whole file or previous file, never a partial one; inputs refused."""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.errors import OutputError
from cover.io.output import (
    atomic_open,
    check_outputs,
    check_target,
    data_to_stdout,
    make_folder,
    strict_json,
    write_bytes,
    write_json,
    write_text,
)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_failure_mid_write_keeps_the_previous_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "out.jsonl"
    target.write_text("previous\n")
    with pytest.raises(RuntimeError), atomic_open(target) as fh:
        fh.write("half a file\n" * 1000)
        raise RuntimeError("boom")
    assert target.read_text() == "previous\n"
    assert _leftovers(tmp_path) == []


def test_keyboard_interrupt_mid_write_keeps_the_previous_file(tmp_path):
    target = tmp_path / "out.jsonl"
    target.write_text("previous\n")
    with pytest.raises(KeyboardInterrupt), atomic_open(target) as fh:
        fh.write("x" * 100_000)
        raise KeyboardInterrupt
    assert target.read_text() == "previous\n"
    assert _leftovers(tmp_path) == []


def test_two_writers_to_one_target_give_one_whole_file(tmp_path):
    target = tmp_path / "out.txt"
    with atomic_open(target) as a:
        a.write("first run\n" * 50)
        with atomic_open(target) as b:
            b.write("second run\n" * 50)
        assert target.read_text() == "second run\n" * 50
    assert target.read_text() == "first run\n" * 50
    assert _leftovers(tmp_path) == []


def test_existing_permissions_are_kept(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    os.chmod(target, 0o640)
    write_text(target, "new")
    assert target.read_text() == "new" and (target.stat().st_mode & 0o777) == 0o640


@pytest.mark.parametrize("link", ["same", "symlink", "hardlink"])
def test_a_target_that_is_an_input_is_refused_and_untouched(tmp_path, link):
    src = tmp_path / "preds.jsonl"
    src.write_bytes(b'{"qid": 1}\n')
    target = {"same": src, "symlink": tmp_path / "alias.jsonl",
              "hardlink": tmp_path / "hard.jsonl"}[link]
    if link == "symlink":
        target.symlink_to(src)
    elif link == "hardlink":
        os.link(src, target)
    with pytest.raises(OutputError, match=r"preds\.jsonl.*write the output somewhere else"):
        write_bytes(target, b"overwritten", inputs=[None, src])
    assert src.read_bytes() == b'{"qid": 1}\n'
    assert _leftovers(tmp_path) == []


def test_unwritable_targets_are_named(tmp_path):
    with pytest.raises(OutputError, match="does not exist; create it first"):
        check_target(tmp_path / "nowhere" / "x.json")
    with pytest.raises(OutputError, match="is a folder"):
        check_target(tmp_path)
    (tmp_path / "file").write_text("")
    with pytest.raises(OutputError, match="is not a folder"):
        check_target(tmp_path / "file" / "x.json")
    with pytest.raises(OutputError, match="is a file, not a folder"):
        make_folder(tmp_path / "file")
    if os.geteuid() != 0:  # root may write anywhere
        ro = make_folder(tmp_path / "ro")
        os.chmod(ro, 0o500)
        try:
            with pytest.raises(OutputError, match="not writable"):
                check_target(ro / "x.json")
        finally:
            os.chmod(ro, 0o700)


def test_write_json_is_strict(tmp_path):
    with pytest.raises(ValueError):
        write_json(tmp_path / "m.json", {"x": math.nan})
    assert not (tmp_path / "m.json").exists() and _leftovers(tmp_path) == []
    write_json(tmp_path / "m.json", strict_json({"x": math.nan, "y": [np.float64(np.inf)],
                                                 "z": np.int64(3), "w": np.bool_(True)}))
    assert json.loads((tmp_path / "m.json").read_text()) == {"x": None, "y": ["inf"],
                                                             "z": 3, "w": True}


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=4),
    max_leaves=20)


@settings(max_examples=100)
@given(_json_values)
def test_strict_json_always_serialises(doc):
    text = json.dumps(strict_json(doc), allow_nan=False)
    json.loads(text, parse_constant=lambda c: pytest.fail(f"bare {c} in {text}"))


def test_special_files_are_refused_and_left_as_they_are(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "to-pipe"
    link.symlink_to(fifo)
    for target, words in ((fifo, "pipe: is a named pipe, not a regular file"),
                          (link, f"to-pipe: is a named pipe (through the link to {fifo})")):
        with pytest.raises(OutputError, match=re.escape(words)):
            write_text(target, "data\n")
        assert target.is_fifo() if target == fifo else target.is_symlink()
    assert fifo.is_fifo() and _leftovers(tmp_path) == []


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
def test_a_device_is_refused_before_any_write(device):
    # check_target only looks; it is what atomic_open calls before opening anything
    if not Path(device).exists():
        pytest.skip(f"no {device} here")
    with pytest.raises(OutputError, match=f"{device}: is a character device, not a regular "
                                          "file; writing would replace it"):
        check_target(device)


def test_a_symlink_to_a_file_is_written_through(tmp_path):
    real = tmp_path / "real" / "out.json"
    real.parent.mkdir()
    real.write_text("old\n")
    os.chmod(real, 0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_text(link, "new\n")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == "new\n" and (real.stat().st_mode & 0o777) == 0o640
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "real" / "created.json")
    write_text(dangling, "made\n")
    assert dangling.is_symlink() and (tmp_path / "real" / "created.json").read_text() == "made\n"
    assert _leftovers(tmp_path) == [] and _leftovers(real.parent) == []


def test_dash_writes_standard_output_only_when_complete(capsysbinary):
    with pytest.raises(RuntimeError), atomic_open("-") as fh:
        fh.write("half\n")
        raise RuntimeError("boom")
    assert capsysbinary.readouterr().out == b""
    write_bytes("-", b"\x00bytes\n")
    write_json(Path("-"), {"a": 1})
    assert capsysbinary.readouterr().out == b'\x00bytes\n{\n  "a": 1\n}\n'
    assert check_target("-", inputs=["-"]) == Path("-")


def test_dash_under_data_to_stdout_keeps_messages_apart(capsys):
    with data_to_stdout():
        print("a message")
        write_text("-", "the data\n")
    got = capsys.readouterr()
    assert got.out == "the data\n" and got.err == "a message\n"


@pytest.mark.parametrize("kind", ["input", "output", "symlink", "hardlink"])
def test_check_outputs_names_both_flags(tmp_path, kind):
    src = tmp_path / "in.jsonl"
    src.write_text("x\n")
    out = tmp_path / "out.json"
    if kind == "input":
        outputs = [("--json", src)]
        words = f"--json {src}: is also an input of this run (--preds {src})"
    else:
        other = {"output": out, "symlink": tmp_path / "alias", "hardlink": tmp_path / "hard"}[kind]
        if kind == "symlink":
            other.symlink_to(out)  # out does not exist yet: the same path once resolved
        elif kind == "hardlink":
            out.write_text("y\n")
            os.link(out, other)
        outputs = [("--json", out), ("--log", other)]
        words = f"--log {other}: is the same file as --json {out}"
    with pytest.raises(OutputError, match=re.escape(words)):
        check_outputs(outputs, [("--preds", src)])
    assert src.read_text() == "x\n"
    check_outputs([("-o", "-"), ("--json", out)], [("--preds", src)])
    with pytest.raises(OutputError, match="--json -: is the same file as -o -"):
        check_outputs([("-o", "-"), ("--json", "-")])


@pytest.mark.parametrize("threaded", [False, True])
def test_a_full_disk_names_the_output_it_could_not_write(tmp_path, monkeypatch, capsys,
                                                        threaded):
    """A full disk (ENOSPC: os.write and fsync name no file) is named by the target, on
    the plain and the threaded writer, and the command says which output failed; an
    error of another kind (an input's) keeps its own words."""
    import errno

    from cover.cli import main
    from cover.io import threads

    target = tmp_path / "certified.jsonl"
    target.write_text("before\n")

    def full(*_: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    if threaded:
        monkeypatch.setattr(threads, "_SYNC_BYTES", 1)
        monkeypatch.setattr(threads, "_datasync", full)
    with pytest.raises(OSError) as got:
        with atomic_open(target, "wb", threaded=threaded) as fh:
            fh.write(b"after\n")
            if not threaded:
                full()
    assert got.value.filename == str(target)
    assert target.read_text() == "before\n" and _leftovers(tmp_path) == []
    with pytest.raises(OSError) as other, atomic_open(tmp_path / "x", "w"):
        raise OSError(errno.EIO, "Input/output error")
    assert other.value.filename is None

    monkeypatch.setattr(os, "fsync", full)  # every output of a command: the disk is full
    assert main(["split", "--gt", str(_gt(tmp_path)), "--out-dir", str(tmp_path / "s")]) == 2
    assert f"{tmp_path / 's'}" in capsys.readouterr().err


def _gt(folder: Path) -> Path:
    """A ground-truth file of four queries on two videos."""
    rows = [{"qid": q, "vid": f"v{q % 2}", "duration": 30.0, "query": "q",
             "relevant_windows": [[1.0, 5.0]]} for q in range(4)]
    p = folder / "gt.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p
