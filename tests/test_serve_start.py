"""``cover serve`` refuses to start, with the flag named, where it could not serve: a
--state file that is no state file, a --host that does not resolve or is not this
machine's, a --port taken. No server is started here: the checks come before uvicorn."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from cli_files import synthetic
from cover.cli import main


@pytest.fixture
def calibrator(tmp_path: Path) -> Path:
    preds, gt = synthetic(tmp_path, n=40, saliency=False)
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--on-error", "reject",
                 "-o", str(cal)]) == 0
    return cal


def _serve(cal: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> str:
    capsys.readouterr()
    assert main(["serve", "--calibrator", f"a={cal}", *flags]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_a_state_file_that_is_no_database_is_named_and_left_alone(calibrator: Path,
                                                                  capsys) -> None:
    """It ended in sqlite3's "DatabaseError: file is not a database" traceback."""
    state = calibrator.with_name("notes.json")
    state.write_text('{"not": "a database"}\n' * 200)
    before = state.read_bytes()
    err = _serve(calibrator, capsys, "--state", str(state), "--port", "0")
    assert (f"cover: error: --state {state}: not a state file of cover serve (file is not a "
            "database); give a new file name, or the file an earlier run wrote") in err
    assert state.read_bytes() == before


def test_a_port_taken_names_host_and_port(calibrator: Path, capsys) -> None:
    """uvicorn logged "[Errno 98] error while attempting to bind" and the run exited 3."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        err = _serve(calibrator, capsys, "--host", "127.0.0.1", "--port", str(port))
    assert (f"cover: error: --host 127.0.0.1 --port {port}: cannot listen there (Address "
            "already in use)") in err


def test_a_host_that_is_no_host_name_is_named(calibrator: Path, capsys) -> None:
    """An empty label fails before any lookup (no name server is asked): it surfaced as
    "encoding with 'idna' codec failed"."""
    err = _serve(calibrator, capsys, "--host", "a..b", "--port", "0")
    assert "cover: error: --host a..b: not a host name or address" in err
