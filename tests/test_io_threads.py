"""Reads ahead and writes behind on threads: the same bytes in the same order as a plain
read or write, every error of a thread raised in the caller (a failed write leaves the
target as it was), and no thread left running however the caller stops."""

from __future__ import annotations

import gzip
import io
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import example_dir
from cover.io import threads
from cover.io.lines import line_batches
from cover.io.output import atomic_open
from cover.io.threads import read_ahead
from cover.io.threads import threaded_writes as threaded


@settings(max_examples=40, deadline=None)
@given(pieces=st.lists(st.lists(st.binary(max_size=300), max_size=4), max_size=30),
       gz=st.booleans())
def test_the_bytes_written_are_the_pieces_in_order(tmp_path_factory: Any,
                                                   pieces: list[list[bytes]], gz: bool) -> None:
    """A one-piece list is written by ``write``, others by ``writelines``."""
    out = example_dir(tmp_path_factory) / ("out.bin.gz" if gz else "out.bin")
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
    monkeypatch.setattr(threads, "_SYNC_BYTES", 10)
    monkeypatch.setattr(threads, "_datasync",
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

    monkeypatch.setattr(threads, "_SYNC_BYTES", 1)
    monkeypatch.setattr(threads, "_datasync", fail)
    with pytest.raises(OSError, match="Input/output") as got, \
            atomic_open(target, "wb", threaded=True) as fh:
        fh.write(b"after\n")
        fh.write(b"more\n")
    assert got.value.filename == str(target)  # the writer's error names the output
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


@settings(max_examples=40, deadline=None)
@given(chunks=st.lists(st.binary(min_size=1, max_size=50), max_size=20),
       fail=st.booleans())
def test_read_ahead_gives_the_reads_in_order_and_raises_where_the_read_raised(
        chunks: list[bytes], fail: bool) -> None:
    todo = iter([*chunks, OSError("gone") if fail else b""])

    def read() -> bytes:
        got = next(todo)
        if isinstance(got, BaseException):
            raise got
        return got

    got: list[bytes] = []
    reads = read_ahead(read)
    if fail:
        with pytest.raises(OSError, match="gone"):
            for data in reads:
                got.append(data)
        assert got == chunks
    else:
        assert list(reads) == [*chunks, b""]
    assert not [t for t in threading.enumerate() if t.name == "cover-reader"]


def test_a_reader_that_stops_early_stops_the_thread() -> None:
    reads = read_ahead(lambda: b"x" * 10)  # an endless file
    assert next(reads) == b"x" * 10
    reads.close()
    assert not [t for t in threading.enumerate() if t.name == "cover-reader"]


def test_a_stream_abandoned_after_its_first_batch_closes_its_file(tmp_path: Path) -> None:
    """The reading thread is stopped before the file is closed: no read of a closed file."""
    src = tmp_path / "p.jsonl"
    src.write_bytes(b'{"qid": 1}\n' * 600_000)  # several reads of the cutter
    batches = line_batches(src, 10)
    assert [n for n, _ in next(batches)] == list(range(1, 11))
    batches.close()
    assert not [t for t in threading.enumerate() if t.name == "cover-reader"]
