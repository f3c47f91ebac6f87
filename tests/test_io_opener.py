"""Opening an input (cover.io.opener): a byte-order mark is skipped, gzip is read
through, a pipe or a folder is named and refused, a file that is not a complete Parquet
file says so with its name (never pyarrow's "magic bytes")."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from cli_files import synthetic
from cover.cli import main
from cover.errors import InputError
from cover.io.opener import BOM, check_input, open_input, parquet_file

ROW = b'{"qid": 1, "vid": "v", "pred_relevant_windows": [[1, 2, 0.5]]}\n'


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("bom", [False, True])
def test_the_text_is_the_same_with_a_bom_or_gzip(tmp_path: Path, gz: bool, bom: bool) -> None:
    data = (BOM if bom else b"") + ROW * 3
    p = tmp_path / "x.jsonl"
    p.write_bytes(gzip.compress(data) if gz else data)
    with open_input(p) as fh:
        assert fh.read() == ROW * 3
    with open_input(p) as fh:  # line by line too: the first line has no BOM
        assert next(iter(fh)) == ROW


def test_a_pipe_is_refused_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--preds <(...)`` is a pipe: refused up front (stat only: never opened, so the
    test cannot block), naming the file and saying what to do, not "no such file"."""
    fifo = tmp_path / "piped.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match=r"piped.jsonl: a pipe, not a regular file;.*save "
                                         r"it to a file first"):
        check_input(fifo)
    _, gt = synthetic(tmp_path, n=12)
    assert main(["calibrate", "--preds", str(fifo), "--gt", str(gt), "-o",
                 str(tmp_path / "cal.json")]) == 2
    err = capsys.readouterr().err
    assert f"{fifo}: a pipe, not a regular file" in err and "no such file" not in err
    assert "Traceback" not in err and not (tmp_path / "cal.json").exists()


def test_missing_and_folder_are_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope.jsonl: no such file"):
        open_input(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match=r": is a folder; give a file"):
        open_input(tmp_path)


@pytest.mark.parametrize("content", [b"", b"PAR1\x00\x00", b'{"qid": 1}\n'],
                         ids=["empty", "truncated", "json"])
def test_not_parquet_names_the_file(tmp_path: Path, content: bytes) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    p = tmp_path / "preds.parquet"
    if content == b"PAR1\x00\x00":  # a real file cut in half
        pq.write_table(pa.table({"qid": list(range(100))}), p)
        content = p.read_bytes()[: p.stat().st_size // 2]
    p.write_bytes(content)
    with pytest.raises(InputError) as got:
        parquet_file(p)
    msg = str(got.value)
    assert msg.startswith(f"{p}: not a (complete) Parquet file")
    assert "magic bytes" not in msg
