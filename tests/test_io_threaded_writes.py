"""Writes on a thread (``atomic_open(..., threaded=True)``): the same bytes in the same
order as a plain write, every error of the thread raised in the caller, the target left
as it was on any failure, and memory bounded by the queue."""

from __future__ import annotations

import gzip
import io
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cover.io import threaded_writes
from cover.io.output import atomic_open
from cover.io.threaded_writes import threaded_writes as threaded


@settings(max_examples=40, deadline=None)
@given(pieces=st.lists(st.lists(st.binary(max_size=300), max_size=4), max_size=30),
       gz=st.booleans())
def test_the_bytes_written_are_the_pieces_in_order(tmp_path_factory: Any,
                                                   pieces: list[list[bytes]], gz: bool) -> None:
    """A one-piece list is written by ``write``, others by ``writelines``."""
    out = tmp_path_factory.mktemp("w") / ("out.bin.gz" if gz else "out.bin")
    with atomic_open(out, "wb", threaded=True) as fh:
        for p in pieces:
            if len(p) == 1:
                assert fh.write(p[0]) == len(p[0])
            else:
                fh.writelines(p)
    data = gzip.decompress(out.read_bytes()) if gz else out.read_bytes()
    assert data == b"".join(b"".join(p) for p in pieces)


def test_each_few_megabytes_are_synced_on_the_thread(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[str] = []
    monkeypatch.setattr(threaded_writes, "_SYNC_BYTES", 10)
    monkeypatch.setattr(threaded_writes, "_datasync",
                        lambda fd: synced.append(threading.current_thread().name))
    with atomic_open(tmp_path / "o", "wb", threaded=True) as fh:
        for _ in range(5):
            fh.write(b"x" * 6)
    assert (tmp_path / "o").read_bytes() == b"x" * 30
    assert synced == ["cover-writer"] * 2  # at 12 and 24 bytes, not on the caller's thread


class _Failing(io.BytesIO):
    """A file whose third write fails, as a full disk does."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def write(self, data: Any) -> int:
        self.calls += 1
        if self.calls == 3:
            raise OSError(28, "No space left on device")
        return super().write(data)


def test_an_error_of_the_thread_is_raised_in_the_caller_without_a_hang() -> None:
    fh = _Failing()
    with pytest.raises(OSError, match="No space left"), threaded(fh) as w:
        for _ in range(1000):  # far more than the queue holds: no write may block for good
            w.write(b"abc")
    assert fh.getvalue() == b"abcabc"


def test_a_failed_thread_leaves_the_target_as_it_was(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "certified.jsonl"
    target.write_bytes(b"before\n")

    def fail(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(threaded_writes, "_SYNC_BYTES", 1)
    monkeypatch.setattr(threaded_writes, "_datasync", fail)
    with pytest.raises(OSError, match="Input/output"), \
            atomic_open(target, "wb", threaded=True) as fh:
        fh.write(b"after\n")
        fh.write(b"more\n")
    assert target.read_bytes() == b"before\n"
    assert [p.name for p in tmp_path.iterdir()] == ["certified.jsonl"]  # no temporary file


def test_an_error_of_the_caller_stops_the_thread_and_keeps_the_target(tmp_path: Path) -> None:
    target = tmp_path / "o.csv"
    target.write_bytes(b"before\n")
    with pytest.raises(KeyError), atomic_open(target, "wb", threaded=True) as fh:
        fh.write(b"partial\n")
        raise KeyError("stop")
    assert target.read_bytes() == b"before\n"
    assert not [t for t in threading.enumerate() if t.name == "cover-writer"]


def test_threaded_writes_are_binary() -> None:
    with pytest.raises(ValueError, match="binary"), atomic_open("x", "w", threaded=True):
        pass
