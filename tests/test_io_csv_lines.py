"""One CSV reader (cover.io.csv_lines): the whole-file read is the batches joined, so a
row gets the same line number and the same reason whether the file is read whole or a
batch at a time (cover.io.batches.column_batches), blank lines and unreadable cells
included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cover.io.batches import column_batches
from cover.io.csv_lines import csv_columns

MAPPING = {"qid": "qid", "vid": "vid", "start": "s", "end": "e"}
CELLS = st.sampled_from(["1.5", "10", "", "abc", "-3", "1e2"])
#: A data line (qid from its place, two number cells) or a blank line.
LINE = st.one_of(st.tuples(CELLS, CELLS), st.sampled_from(["", "   "]))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(LINE, min_size=1, max_size=12), st.integers(1, 4))
def test_whole_and_batched_reads_number_and_judge_rows_alike(tmp_path: Path, body, batch):
    text = ["qid,vid,s,e"]
    want_lines = []
    for i, line in enumerate(body):
        if isinstance(line, tuple):
            text.append(f"q{i},v,{line[0]},{line[1]}")
            want_lines.append(len(text))  # its line in the file, the header being 1
        else:
            text.append(line)
    path = tmp_path / "p.csv"
    path.write_text("\n".join(text) + "\n")
    whole, _, why = csv_columns(path, MAPPING, str(path))
    parts = list(column_batches(path, MAPPING, batch))
    assert whole.line.tolist() == want_lines
    got_lines = np.concatenate([c.line for c, _, _ in parts]) if parts else np.zeros(0)
    assert got_lines.tolist() == want_lines
    assert np.concatenate([c.qid for c, _, _ in parts]).tolist() == whole.qid.tolist() \
        if parts else whole.qid.size == 0
    # the rows pyarrow cannot read, by line, with the same reason
    by_line = {int(whole.line[i]): w for i, w in why.items()}
    batched = {int(c.line[i]): w for c, _, bad in parts for i, w in bad.items()}
    assert batched == by_line
    assert set(by_line) == {ln for ln, cells in zip(want_lines, [b for b in body
                                                                  if isinstance(b, tuple)],
                                                     strict=True) if "abc" in cells}


def test_a_field_past_the_csv_limit_is_a_row_problem_or_a_header_error(tmp_path: Path):
    """A line pyarrow refuses is told apart with Python's csv module, which stops at a
    field of 131,072 characters: such a line is a rejected row with that reason, read
    whole or in batches (it was the module's own `_csv.Error` traceback), and such a
    header an error naming line 1."""
    import pytest

    from cover.errors import InputError

    long = "d" * 200_000
    path = tmp_path / "p.csv"
    path.write_text("qid,vid,s,e\nq1,v,1,2\n" + f"q2,v,1,2,{long}\n" + "q3,v,3,4\n")
    whole, _, why = csv_columns(path, MAPPING, str(path))
    want = {3: "cannot read as CSV: a field longer than the 131,072 characters a CSV field "
               "may hold here"}
    assert {int(whole.line[i]): w for i, w in why.items()} == want
    parts = list(column_batches(path, MAPPING, 1))
    assert {int(c.line[i]): w for c, _, bad in parts for i, w in bad.items()} == want
    path.write_text(f"qid,vid,s,e,{long}\nq1,v,1,2,x\n")
    with pytest.raises(InputError, match=r"p.csv:1: a header field is longer than the "
                                         r"131,072 characters"):
        csv_columns(path, MAPPING, str(path))
