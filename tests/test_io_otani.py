"""Otani et al. re-annotation CSVs: row counts, percentages, annotator numbering."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cover.errors import InputError
from cover.io.otani import read_otani


@pytest.mark.parametrize(("folder", "rows", "hits"), [
    ("charades_sta/otani_reannotation", 5000, 1000),
    ("activitynet_captions/otani_reannotation", 6440, 1288),
])
def test_real_files(data_dir: Path, folder: str, rows: int, hits: int) -> None:
    if not (data_dir / folder).is_dir():
        pytest.skip(f"{folder} not staged")
    ann = read_otani(data_dir / folder)
    assert len(ann) == rows and ann.n_hits == hits and not ann.problems
    assert np.bincount(ann.annotator).tolist() == [hits] * 5
    assert (ann.start_pct >= 0).all() and (ann.end_pct <= 100).all()
    assert (ann.start_pct <= ann.end_pct).all()


def test_bad_rows(tmp_path: Path) -> None:
    p = tmp_path / "test_00.csv"
    p.write_text("HITId,video_id,description,start,end\n"
                 "H1,A.mp4,a person sits.,10,20\n"
                 "H1,A.mp4,a person sits.,30,20\n"
                 "H1,A.mp4,a person sits.,10,120\n"
                 "H1,A.mp4,\"a person, sits.\",x,20\n"
                 "H2,B.mp4,a dog.,0,100\n"
                 "H1,A.mp4,a person sits.,0,5\n")
    with pytest.raises(InputError, match=r"test_00.csv:3 \(qid=H1\): start > end"):
        read_otani(tmp_path)
    ann = read_otani(p, on_error="reject")
    assert len(ann) == 3 and len(ann.problems) == 3
    assert ann.annotator.tolist() == [0, 0, 1] and ann.line.tolist() == [2, 6, 7]
    bad = tmp_path / "other.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="expected the header"):
        read_otani(bad)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no test_"):
        read_otani(tmp_path / "empty")


def test_an_id_too_long_is_a_rejected_row(tmp_path: Path) -> None:
    """A HITId or video_id longer than an id may be: its row is rejected, named by its
    start, not a column of every row as wide as it. A field past the csv module's limit
    is an error naming the line (it was the module's own `_csv.Error` traceback)."""
    long = "H" * 2000
    p = tmp_path / "test_00.csv"
    p.write_text("HITId,video_id,description,start,end\n"
                 "H1,A.mp4,a person sits.,10,20\n"
                 f"{long},A.mp4,a person sits.,10,20\n"
                 f"H2,{long},a dog.,0,100\n")
    ann = read_otani(p, on_error="reject")
    assert len(ann) == 1 and ann.hit.dtype.itemsize < 4 * 100
    assert [str(x) for x in ann.problems] == [
        f"{p}:3 (qid={'H' * 40}... (2,000 characters)): HITId is 2,000 characters long; an "
        "id holds at most 1,024",
        f"{p}:4 (qid=H2): video_id is 2,000 characters long; an id holds at most 1,024"]
    p.write_text("HITId,video_id,description,start,end\nH1,A.mp4,a person sits.,10,20\n"
                 f"{'H' * 1_000_000},A.mp4,a person sits.,10,20\n")
    with pytest.raises(InputError, match=r"test_00.csv:3: not a CSV row this reader takes "
                                         r"\(field larger than field limit"):
        read_otani(p, on_error="reject")
