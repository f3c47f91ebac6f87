"""Streaming JSON lines: the in-memory path's rows, byte-for-byte echo, every row kept."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import cover
from cli_files import sec_calibrator
from cover.cli import main
from cover.errors import InputError
from cover.io.lines import line_batches
from cover.stream import certify_jsonl


@pytest.fixture(scope="module")
def qvh(qdetr_preds, qvh_gt):
    table, _ = cover.load_labelled(qdetr_preds, qvh_gt)
    return table, cover.read_durations(qvh_gt)


@pytest.mark.parametrize(("score", "batch"), [("norm", 333), ("sls", 5000)])
def test_streamed_equals_in_memory_and_echoes_bytes(qvh, qdetr_preds, qvh_gt, tmp_path, score,
                                                     batch):
    table, videos = qvh
    cal = cover.Calibrator(score=score, alpha=0.1).fit(table.take(np.arange(600)))
    cal.save(tmp_path / "cal.json")
    counts, _ = certify_jsonl(cal, qdetr_preds, tmp_path / "s.jsonl", videos=videos,
                              batch_lines=batch)
    assert counts.rows == 1550 == counts.certified + counts.refused + counts.rejected
    assert counts.in_calibration == 600
    assert main(["certify", "--calibrator", str(tmp_path / "cal.json"), "--preds",
                 str(qdetr_preds), "--videos", str(qvh_gt), "-o", str(tmp_path / "m.jsonl"),
                 "--in-memory"]) == 0
    streamed = (tmp_path / "s.jsonl").read_bytes().splitlines()
    in_memory = (tmp_path / "m.jsonl").read_bytes().splitlines()
    assert [json.loads(x) for x in streamed] == [json.loads(x) for x in in_memory]
    src = qdetr_preds.read_bytes().splitlines()
    assert all(out.startswith(line.rstrip()[:-1]) for line, out in zip(src, streamed,
                                                                       strict=True))


def _rows(tmp_path, lines: list[str]):
    src = tmp_path / "p.jsonl"
    src.write_text("\n".join(lines) + "\n")
    return src




GOOD = '{"qid": %d, "vid": "v", "duration": 150, "pred_relevant_windows": [[40, 60, 0.9]]}'


def test_every_line_comes_back_with_its_fate(tmp_path):
    src = _rows(tmp_path, [
        GOOD % 1,
        "{not json",
        GOOD % 1,  # a duplicate, in a later batch
        '{"qid": 3, "vid": "v", "extra": NaN, "pred_relevant_windows": [[40, 60, 0.9]]}',
        '{"qid": 4, "vid": "v", "duration": 150, "cover": {"old": 1}, '
        '"pred_relevant_windows": []}',
        '{"qid": 5, "vid": "w", "pred_relevant_windows": [[1, 2, 0.5]]}',
    ])
    videos = (np.array(["v"]), np.array([150.0]))
    counts, problems = certify_jsonl(sec_calibrator(), src, tmp_path / "o.jsonl", videos=videos,
                                     batch_lines=2)
    out = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [r["cover"]["status"] for r in out] == ["certified", "rejected", "rejected",
                                                   "certified", "refused", "rejected"]
    assert counts.rows == 6 and (counts.certified, counts.refused, counts.rejected) == (2, 1, 3)
    reasons = [r["cover"].get("reason", "") for r in out]
    assert "malformed JSON" in reasons[1] or "not JSON" in reasons[1]
    assert "duplicate qid" in reasons[2] and "no duration known" in reasons[5]
    assert out[3]["extra"] is None and out[3]["cover"]["non_finite_fields"] == ["extra"]
    assert out[4]["cover"]["status"] == "refused" and "old" not in out[4]["cover"]
    assert {(p.line, p.qid) for p in problems if p.action == "rejected"} >= {(3, "1"),
                                                                             (6, "5")}


def test_compact_writes_ids_and_block_only(tmp_path):
    src = _rows(tmp_path, [GOOD % 7])
    certify_jsonl(sec_calibrator(), src, tmp_path / "o.jsonl", compact=True)
    row = json.loads((tmp_path / "o.jsonl").read_text())
    assert set(row) == {"qid", "vid", "cover"} and row["cover"]["region"] == [[17.75, 82.25]]


def test_gzip_input_and_on_error_raise_keeps_previous_output(tmp_path):
    src = tmp_path / "p.jsonl.gz"
    src.write_bytes(gzip.compress(("\n".join([GOOD % 1, "{bad"]) + "\n").encode()))
    dst = tmp_path / "o.jsonl"
    dst.write_text("previous\n")
    with pytest.raises(InputError, match="bad row"):
        certify_jsonl(sec_calibrator(), src, dst, on_error="raise")
    assert dst.read_text() == "previous\n"
    counts, _ = certify_jsonl(sec_calibrator(), src, dst)
    assert (counts.certified, counts.rejected) == (1, 1)


def test_a_json_array_is_not_streamed(tmp_path):
    src = tmp_path / "a.json"
    src.write_text("[" + GOOD % 1 + "]")
    with pytest.raises(InputError, match="JSON array"):
        certify_jsonl(sec_calibrator(), src, tmp_path / "o.jsonl")


@given(st.lists(st.sampled_from([b'{"a": 1}', b"", b"  ", b"\r", b"x\r", b"y\r\r", b"[1]",
                                 b"\t{}", b"z" * 9]), max_size=30),
       st.booleans(), st.integers(1, 5), st.integers(1, 40))
def test_line_batches_number_lines_as_iterating_the_file_does(tmp_path_factory, lines, ended,
                                                               batch, block):
    from cover.io import lines as sj

    path = tmp_path_factory.mktemp("lines") / "f.jsonl"
    path.write_bytes(b"\n".join(lines) + (b"\n" if ended else b""))
    want = [(n, ln.rstrip(b"\r\n")) for n, ln in enumerate(path.open("rb"), start=1)
            if ln.rstrip(b"\r\n").strip()]
    old = sj.READ_BYTES
    sj.READ_BYTES = block  # lines cut across reads
    try:
        if want and want[0][0] == 1 and want[0][1].lstrip()[:1] == b"[":
            with pytest.raises(InputError, match="JSON array"):
                list(line_batches(path, batch))
            return
        got = list(line_batches(path, batch))
    finally:
        sj.READ_BYTES = old
    assert [x for b in got for x in b] == want
    assert [len(b) for b in got[:-1]] == [batch] * (len(got) - 1) and all(got)


def test_a_line_spanning_many_reads_is_read_whole(tmp_path, monkeypatch):
    """A line far longer than one read (here 7-byte reads, a 3,000-byte line) comes out
    whole and numbered, with the lines around it: its reads are joined once, when its
    newline arrives (linear time; bench/long_line.py measures it at 64 and 256 MB)."""
    import cover.io.lines as io_lines

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
    import io

    import cover.io.lines as io_lines

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
    import cover.io.lines as sj
    from cover.errors import InputError

    monkeypatch.setattr(sj, "READ_BYTES", 64)
    monkeypatch.setattr(sj, "MAX_LINE_BYTES", 1000)
    path = tmp_path / "long.jsonl"
    path.write_bytes(b'{"qid": 1}\n{"qid": 2}\n{"qid": 3, "pad": "' + b"x" * 5000 + b'"}\n')
    with pytest.raises(InputError) as exc:
        list(sj.line_batches(path, 10))
    assert str(exc.value).startswith(f"{path}: line 3 is longer than 1000 bytes")
    path.write_bytes(b'{"qid": 1}\n{"qid": 3, "pad": "' + b"x" * 500 + b'"}\n')
    assert [n for b in sj.line_batches(path, 10) for n, _ in b] == [1, 2]
