"""cover._memory: glibc's mapping threshold and heap trim, a no-op elsewhere."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cover import _memory
from cover._memory import LARGE_INPUT, TRIM_ROWS, RowTrim
from cover.stream.evaluate import DEFAULT_BATCH_ROWS


def test_the_threshold_is_set_once_on_glibc_and_trim_runs():
    # In a child: the setting is process-wide and stays for the process's life.
    code = ("from cover._memory import map_large_blocks, trim; a = map_large_blocks(); "
            "b = map_large_blocks(); trim(); print(a, b)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    glibc = platform.libc_ver()[0] == "glibc"
    assert out == [str(glibc), str(glibc)]


def test_only_a_large_input_sets_the_threshold(tmp_path):
    # A small run pays no page fault per fresh block; a path that is not there is left to
    # the reader to name.
    small = tmp_path / "gt.jsonl"
    small.write_text("{}\n")
    code = ("import sys; from cover._memory import map_large_blocks_for; "
            "print(map_large_blocks_for(sys.argv[1]), map_large_blocks_for(sys.argv[2]))")
    out = subprocess.run([sys.executable, "-c", code, str(small), str(tmp_path / "none")],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]
    big = tmp_path / "big.jsonl"  # sparse: its size without its bytes
    with big.open("wb") as fh:
        fh.truncate(LARGE_INPUT)
    out = subprocess.run([sys.executable, "-c", code, str(big), str(small)],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(platform.libc_ver()[0] == "glibc"), "False"]


@given(st.lists(st.integers(0, 3 * TRIM_ROWS), max_size=40))
def test_a_stream_trims_once_enough_rows_have_gone_by(batches):
    """No trim before :data:`TRIM_ROWS` rows are read since the last; one as soon as they
    are; so a batch of the default size always trims."""
    calls: list[None] = []
    trims, since = RowTrim(), 0
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_memory, "trim", lambda: calls.append(None))
        for rows in batches:
            n = len(calls)
            since += rows
            trims.after(rows)
            assert len(calls) == n + (since >= TRIM_ROWS)
            since = 0 if since >= TRIM_ROWS else since
    assert DEFAULT_BATCH_ROWS >= TRIM_ROWS
