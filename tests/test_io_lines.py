"""`cover.io.lines`: lines numbered and cut as iterating the file would, a few MB read
at a time, for the streams' batches, the bulk reads' chunks and a body in memory."""

from __future__ import annotations

import io
import itertools
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import example_dir
from cover.errors import InputError
from cover.io import lines as io_lines
from cover.io.lines import line_batches, nonblank_lines


@given(st.lists(st.sampled_from([b'{"a": 1}', b"", b"  ", b"\r", b"x\r", b"y\r\r", b"[1]",
                                 b"\t{}", b"z" * 9]), max_size=30),
       st.booleans(), st.integers(1, 5), st.integers(1, 40), st.booleans())
def test_line_batches_number_lines_as_iterating_the_file_does(tmp_path_factory, lines, ended,
                                                               batch, block, header):
    """Every non-blank line once, numbered as the file is, ``batch`` lines a batch (the
    last fewer); with ``header`` the first batch holds one more (a CSV header), so every
    batch holds ``batch`` lines after it."""

    path = example_dir(tmp_path_factory) / "f.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"\n" if ended else b""))
    want = [(n, ln.rstrip(b"\r\n")) for n, ln in enumerate(path.open("rb"), start=1)
            if ln.rstrip(b"\r\n").strip()]
    old = io_lines.READ_BYTES
    io_lines.READ_BYTES = block  # lines cut across reads
    try:
        if want and want[0][0] == 1 and want[0][1].lstrip()[:1] == b"[":
            with pytest.raises(InputError, match="JSON array"):
                list(line_batches(path, batch, header=header))
            return
        got = list(line_batches(path, batch, header=header))
    finally:
        io_lines.READ_BYTES = old
    assert [x for b in got for x in b] == want
    cuts = [0, *range(batch + header, len(want), batch), len(want)] if want else [0]
    assert [len(b) for b in got] == [b - a for a, b in itertools.pairwise(cuts) if b > a]


def test_a_line_spanning_many_reads_is_read_whole(tmp_path, monkeypatch):
    """A line far longer than one read (here 7-byte reads, a 3,000-byte line) comes out
    whole and numbered, with the lines around it: its reads are joined once, when its
    newline arrives (linear time; bench/long_line.py measures it at 64 and 256 MB)."""

    monkeypatch.setattr(io_lines, "READ_BYTES", 7)
    long = json.dumps({"qid": 7, "pred_saliency_scores": [0.125] * 375}).encode()
    assert len(long) > 2_000
    p = tmp_path / "long.jsonl"
    p.write_bytes(b'{"qid": 1}\n\n' + long + b'\r\n{"qid": 2}')
    got = [pair for batch in line_batches(p, 2) for pair in batch]
    assert got == [(1, b'{"qid": 1}'), (3, long), (4, b'{"qid": 2}')]


def test_reads_of_a_long_line_are_kept_not_rejoined(monkeypatch):
    """The pending part of an unended line is never copied per read: the chunks wait
    in a list (a quadratic re-concatenation made a 2 GB line cost 20 minutes)."""


    monkeypatch.setattr(io_lines, "READ_BYTES", 10)
    line = b"x" * 1000
    blocks = list(io_lines.numbered_blocks(io.BytesIO(line + b"\nab\n")))
    assert [ln for _, lines in blocks for ln in lines] == [(1, line), (2, b"ab")]
    assert len(blocks) <= 2  # one block for the long line, however many reads it took


def test_a_bom_is_skipped_when_streaming(tmp_path):
    p = tmp_path / "bom.jsonl"
    p.write_bytes(b'\xef\xbb\xbf{"qid": 1}\n{"qid": 2}\n')
    assert [pair for b in line_batches(p, 10) for pair in b] == [(1, b'{"qid": 1}'),
                                                                  (2, b'{"qid": 2}')]


def test_a_line_longer_than_the_limit_is_refused_with_its_number(tmp_path, monkeypatch):
    """A streamed read holds one line whole: past MAX_LINE_BYTES it stops, naming the
    file and the line, instead of growing without bound."""

    monkeypatch.setattr(io_lines, "READ_BYTES", 64)
    monkeypatch.setattr(io_lines, "MAX_LINE_BYTES", 1000)
    path = tmp_path / "long.jsonl"
    path.write_bytes(b'{"qid": 1}\n{"qid": 2}\n{"qid": 3, "pad": "' + b"x" * 5000 + b'"}\n')
    with pytest.raises(InputError) as exc:
        list(io_lines.line_batches(path, 10))
    assert str(exc.value).startswith(f"{path}: line 3 is longer than 1000 bytes")
    path.write_bytes(b'{"qid": 1}\n{"qid": 3, "pad": "' + b"x" * 500 + b'"}\n')
    assert [n for b in io_lines.line_batches(path, 10) for n, _ in b] == [1, 2]


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.sampled_from(["a", "{", " ", "\n", "\r"]), max_size=40),
       block=st.integers(1, 7), size=st.integers(1, 5))
def test_line_chunks_number_lines_as_the_whole_file_reader(tmp_path_factory, text, block,
                                                          size, monkeypatch):
    """Read a few bytes at a time, the non-blank lines and their numbers are those of
    the whole file split at newlines (a trailing carriage return dropped), in chunks of
    at most ``size``."""

    path = example_dir(tmp_path_factory) / "f.jsonl"
    path.write_bytes(text.encode())

    monkeypatch.setattr(io_lines, "READ_BYTES", block)
    chunks = list(io_lines.line_chunks(path, size))
    assert all(0 < len(c) <= size for c in chunks)
    want = [(n, line.rstrip(b"\r")) for n, line in enumerate(text.encode().split(b"\n"), 1)
            if line.strip()]
    assert [x for c in chunks for x in c] == want


def test_a_body_in_memory_is_cut_as_a_file_is(tmp_path):
    body = b'\xef\xbb\xbf{"qid": 1}\r\n\n  \n{"qid": 2}\r\n{"qid": 3}'
    path = tmp_path / "b.jsonl"
    path.write_bytes(body[3:])  # the service's body carries no byte-order mark
    assert list(nonblank_lines(body[3:])) == [p for b in line_batches(path, 2) for p in b] == [
        (1, b'{"qid": 1}'), (4, b'{"qid": 2}'), (5, b'{"qid": 3}')]


def test_whole_file_chunks_take_a_line_past_the_streamed_limit(tmp_path, monkeypatch):
    """The whole-file bulk reads hand any file they do not pass to the per-row reader,
    which holds the file whole anyway: the streams' line cap is not theirs."""
    monkeypatch.setattr(io_lines, "READ_BYTES", 64)
    monkeypatch.setattr(io_lines, "MAX_LINE_BYTES", 100)
    path = tmp_path / "long.jsonl"
    line = b'{"qid": 3, "pad": "' + b"x" * 500 + b'"}'
    path.write_bytes(b'{"qid": 1}\n' + line + b"\n")
    assert [p for c in io_lines.line_chunks(path, 10) for p in c] == [(1, b'{"qid": 1}'),
                                                                        (2, line)]
    with pytest.raises(InputError, match="line 2 is longer than 100 bytes"):
        list(line_batches(path, 10))


@given(st.lists(st.sampled_from([b'{"qid": 1, "vid": "a", ', b'{"qid": 2 ', b"[1]", b"nul",
                                 b'{"qid": 3, "vid": "b"}', b"", b"  "]), min_size=1,
                max_size=8),
       st.booleans(), st.integers(1, 9))
def test_a_damaged_line_reads_alike_whole_or_in_batches(tmp_path_factory, lines, crlf,
                                                        block):
    """The whole-file reader and a streamed read cut the same lines (a CRLF's carriage
    return dropped), so a damaged line gets the same number and the same message,
    column included, on both."""
    from cover.io.jsonl import parse_json_lines, read_json_rows

    data = (b"\r\n" if crlf else b"\n").join(lines) + b"\n"
    path = example_dir(tmp_path_factory) / "p.jsonl"
    path.write_bytes(data)
    if not data.strip() or data.lstrip()[:1] == b"[":
        return  # an empty file is an error; a JSON array is read whole, never streamed
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(io_lines, "READ_BYTES", block)
        whole = read_json_rows(path)
        batches = [parse_json_lines(str(path), b) for b in line_batches(path, 2)]
    assert [p for b in batches for p in b.problems] == whole.problems
    assert {k: v for b in batches for k, v in b.rejected.items()} == whole.rejected
    assert [n for b in batches for n in b.lines.tolist()] == whole.lines.tolist()
