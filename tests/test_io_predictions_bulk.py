"""The whole-file prediction read in batches: on a clean file it is the per-row read,
column for column, whatever the batch size; on anything else it defers to the per-row
read, so every message and rejection is that read's."""

from __future__ import annotations

import gzip
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bulk_rows import encode, rows, same_tables
from cover.errors import InputError
from cover.io import qvhighlights
from cover.io.datasets import QVH_VAL_PREDICTIONS
from cover.io.jsonl import read_json_rows
from cover.io.predictions_bulk import bulk_predictions, concat_tables
from cover.io.qvhighlights import Loaded, predictions_from_rows, read_predictions

BLANKS = st.sampled_from([b"", b"  ", b"\t"])


def per_row(path: Path) -> Loaded:
    return predictions_from_rows(read_json_rows(path), clip=2.0, on_error="reject")


def same_loaded(a: Loaded, b: Loaded) -> None:
    same_tables(a.table, b.table)
    assert a.problems == b.problems and a.rejected == b.rejected
    assert a.relevance == b.relevance


@contextmanager
def written(lines: list[bytes], blank_at: list[int], *, gz: bool = False,
            bom: bool = False, crlf: bool = False) -> Iterator[Path]:
    """A file of ``lines`` (blank lines put in at ``blank_at``), removed afterwards."""
    for i in sorted(blank_at, reverse=True):
        lines.insert(min(i, len(lines)), b"")
    end = b"\r\n" if crlf else b"\n"
    data = (b"\xef\xbb\xbf" if bom else b"") + end.join(lines) + end
    with tempfile.TemporaryDirectory(prefix="cover-bulk-") as folder:
        path = Path(folder) / "p.jsonl"
        path.write_bytes(gzip.compress(data) if gz else data)
        yield path


@settings(max_examples=60, deadline=None)
@given(st.lists(rows(clean=True), min_size=1, max_size=12).map(
           lambda rs: [{**r, "qid": i} for i, r in enumerate(rs)]),
       st.sampled_from([1, 2, 3, 5, 64]), st.lists(st.integers(0, 12), max_size=3),
       st.booleans(), st.booleans(), st.booleans())
def test_a_clean_file_read_in_batches_is_the_per_row_read(recs, size, blank_at, gz, bom,
                                                           crlf):
    with written([encode(r) for r in recs], blank_at, gz=gz, bom=bom, crlf=crlf) as path:
        got = bulk_predictions(path, clip=2.0, batch_lines=size)
        assert got is not None
        same_loaded(got, per_row(path))
        # Without the records: the same table, its parsed rows left out.
        lean = bulk_predictions(path, clip=2.0, batch_lines=size, keep_records=False)
        assert lean is not None and lean.table.records is None
        same_tables(lean.table, got.table, skip=("records",))
    assert got.table.records.tolist() == recs


@settings(max_examples=80, deadline=None)
@given(st.lists(rows(clean=False), min_size=1, max_size=10),
       st.lists(st.sampled_from([b"not json", b"[1, 2]", b'{"qid": NaN}', b"x\r"]),
                max_size=1),
       st.sampled_from([1, 3, 64]), st.lists(st.integers(0, 10), max_size=2))
def test_a_dirty_file_is_left_to_the_per_row_read(recs, extra, size, blank_at):
    with written([encode(r) for r in recs] + extra, blank_at) as path:
        ref = per_row(path)
        got = bulk_predictions(path, clip=2.0, batch_lines=size)
        if got is not None:  # only a file the per-row read takes whole
            assert ref.problems == [] and ref.rejected == {}
            same_loaded(got, ref)
        same_loaded(read_predictions(path, on_error="reject"), ref)


def test_a_qid_repeated_in_a_later_batch_is_the_per_row_reads_rejection(tmp_path):
    recs = [{"qid": i % 5, "vid": "v", "pred_relevant_windows": [[0, 1, 0.5]]}
            for i in range(6)]
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\n".join(map(encode, recs)))
    assert bulk_predictions(path, batch_lines=5) is None
    assert bulk_predictions(path, batch_lines=6) is None
    got = read_predictions(path, on_error="reject")
    assert [(p.line, p.qid) for p in got.problems] == [(6, "0")]
    with pytest.raises(InputError) as exc:
        read_predictions(path)
    with pytest.raises(InputError) as ref:
        predictions_from_rows(read_json_rows(path))
    assert str(exc.value) == str(ref.value)


@pytest.mark.parametrize("data", [
    b"", b"\n \n", b'[{"qid": 1, "vid": "v", "pred_relevant_windows": []}]',
    b'[\n{"qid": 1, "vid": "v", "pred_relevant_windows": [[0, 1, 1]]},\n'
    b'{"qid": 2, "vid": "v", "pred_relevant_windows": []}\n]\n',
    b'\x1f\x8b\x08not gzip at all',
])
def test_files_that_are_not_plain_lines_are_the_per_row_reads(tmp_path, data):
    path = tmp_path / "p.jsonl"
    path.write_bytes(data)
    assert bulk_predictions(path) is None
    try:
        ref: Loaded | str = per_row(path)
    except InputError as exc:
        ref = str(exc)
    if isinstance(ref, str):
        with pytest.raises(InputError) as exc:
            read_predictions(path, on_error="reject")
        assert str(exc.value) == ref
    else:
        same_loaded(read_predictions(path, on_error="reject"), ref)


def test_a_missing_file_is_the_per_row_reads_message(tmp_path):
    assert bulk_predictions(tmp_path / "none.jsonl") is None
    with pytest.raises(InputError, match=r"none\.jsonl: no such file"):
        read_predictions(tmp_path / "none.jsonl")


def test_a_clean_file_is_never_parsed_row_by_row(tmp_path, monkeypatch):
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"".join(encode({"qid": i, "vid": "v", "duration": 10,
                                      "pred_relevant_windows": [[0, 1 + i % 3, 0.5]],
                                      "pred_saliency_scores": [0.5] * (i % 4)}) + b"\n"
                              for i in range(50)))
    ref = read_predictions(path)

    def refuse(path: object) -> None:
        raise AssertionError("read row by row")
    monkeypatch.setattr(qvhighlights, "read_json_rows", refuse)
    same_loaded(read_predictions(path), ref)
    assert len(ref.table) == 50


def test_concat_fills_the_stds_a_part_lacks_and_keeps_none_when_none_has_them(tmp_path):
    path = tmp_path / "p.jsonl"
    recs = [{"qid": i, "vid": "v", "pred_relevant_windows": [[0, 1, 0.5]]} for i in range(4)]
    recs[3]["start_std"] = 0.5
    path.write_bytes(b"\n".join(map(encode, recs)))
    got = bulk_predictions(path, batch_lines=2)
    assert got is not None
    np.testing.assert_array_equal(got.table.start_std, [np.nan, np.nan, np.nan, 0.5])
    none = bulk_predictions(path, batch_lines=3)  # the std is in the second batch only
    assert none is not None and none.table.start_std is not None
    path.write_bytes(b"\n".join(map(encode, recs[:3])))
    got = bulk_predictions(path, batch_lines=1)
    assert got is not None and got.table.start_std is None and got.table.end_std is None


def test_concat_refuses_tables_of_other_files(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\n".join(encode({"qid": i, "vid": "v", "pred_relevant_windows": []})
                                   for i in range(2)))
    a = bulk_predictions(path)
    b = bulk_predictions(path, clip=1.0)
    assert a is not None and b is not None
    with pytest.raises(ValueError, match="one file"):
        concat_tables([a.table, b.table])


def test_a_join_of_nothing_is_an_error():
    from cover.io.predictions_bulk import TableJoin

    with pytest.raises(ValueError, match="no table"):
        TableJoin().table()


@pytest.mark.parametrize("name", sorted(QVH_VAL_PREDICTIONS))
def test_real_prediction_files_are_read_in_batches_as_row_by_row(data_dir: Path,
                                                                 name: str) -> None:
    """Golden: every real QVHighlights val prediction file of the mirror is clean, so the
    whole read takes the batched path (at a small batch, so several batches join), and
    gives the per-row read's table, records included."""
    path = data_dir / QVH_VAL_PREDICTIONS[name]
    got = bulk_predictions(path, clip=2.0, batch_lines=500)
    assert got is not None, f"{name}: a real file fell back to the per-row read"
    same_loaded(got, per_row(path))
    lean = bulk_predictions(path, clip=2.0, batch_lines=500, keep_records=False)
    assert lean is not None and lean.table.records is None
    same_tables(lean.table, got.table, skip=("records",))
