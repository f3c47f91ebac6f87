"""Streaming JSON lines: the in-memory path's rows, byte-for-byte echo, every row kept."""

from __future__ import annotations

import gzip
import json
import re

import numpy as np
import pytest

import cover
from cli_files import sec_calibrator
from cover.cli import main
from cover.errors import InputError
from cover.stream import certify_jsonl


@pytest.fixture(scope="module")
def qvh(qdetr_table, qdetr_preds, qvh_gt):
    table = qdetr_table
    return table, cover.read_durations(qvh_gt)


@pytest.mark.parametrize(("score", "batch"), [("norm", 333), ("sls", 5000)])
def test_streamed_equals_in_memory_and_echoes_bytes(qvh, qdetr_preds, qvh_gt, tmp_path, score,
                                                     batch, capsys):
    table, videos = qvh
    cal = cover.Calibrator(score=score, alpha=0.1).fit(table.take(np.arange(600)))
    cal.save(tmp_path / "cal.json")
    counts, _ = certify_jsonl(cal, qdetr_preds, tmp_path / "s.jsonl", videos=videos,
                              batch_lines=batch)
    assert counts.rows == 1550 == counts.certified + counts.refused + counts.rejected
    # the 600 calibration rows are marked; those given a region are counted (an empty SLS
    # region is rejected: marked, but no row certified)
    blocks = [json.loads(x)["cover"] for x in (tmp_path / "s.jsonl").read_text().splitlines()]
    marked = [b for b in blocks if b.get("in_calibration")]
    assert len(marked) == 600
    assert counts.in_calibration == sum(b["status"] != "rejected" for b in marked)
    said = {}
    for name, extra in (("m", ["--in-memory"]), ("c", ["--batch-rows", str(batch)])):
        assert main(["certify", "--calibrator", str(tmp_path / "cal.json"), "--preds",
                     str(qdetr_preds), "--videos", str(qvh_gt), "-o",
                     str(tmp_path / f"{name}.jsonl"), *extra]) == 0
        said[name] = capsys.readouterr().out.splitlines()[0]
    streamed = (tmp_path / "s.jsonl").read_bytes().splitlines()
    in_memory = (tmp_path / "m.jsonl").read_bytes().splitlines()
    # --in-memory is the stream's one batch: the same bytes, the same summary (the mean
    # region length included) but for how the file was read
    assert streamed == in_memory == (tmp_path / "c.jsonl").read_bytes().splitlines()
    assert said["m"].replace("(read whole)", "(HOW)") == re.sub(
        r"\(streamed in \d+ batch\(es\) of up to \d+ rows\)", "(HOW)", said["c"])
    assert "; mean region length " in said["m"]
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
        '{"qid": 4, "vid": "v", "duration": 150, "notes": {"old": 1}, '
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
    assert out[4]["cover"]["status"] == "refused" and out[4]["notes"] == {"old": 1}
    assert {(p.line, p.qid) for p in problems if p.action == "rejected"} >= {(3, "1"),
                                                                             (6, "5")}
    # A row that already has a cover block (certify's own output) is refused, in bulk or
    # row by row, whichever batch it is in; nothing is written (its block was replaced).
    lines = src.read_text().splitlines()
    lines[4] = lines[4].replace('"notes"', '"cover"')
    again = _rows(tmp_path, lines)
    for fast in (True, False):
        with pytest.raises(InputError, match="already has a 'cover' field"):
            certify_jsonl(sec_calibrator(), again, tmp_path / "x.jsonl", videos=videos,
                          batch_lines=2, fast=fast)
        assert not (tmp_path / "x.jsonl").exists()


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




def test_rows_without_a_duration_say_what_to_pass_through_the_api(tmp_path):
    """certify_jsonl without videos, under on_error='raise': the rows with no duration
    are named, and the message says what to pass on the command line and in the API."""
    cal = sec_calibrator()
    src = tmp_path / "p.jsonl"
    src.write_text("".join(json.dumps({"qid": q, "vid": f"v{q}",
                                       "pred_relevant_windows": [[1.0, 5.0, 0.9]]}) + "\n"
                           for q in range(3)))
    with pytest.raises(InputError) as got:
        certify_jsonl(cal, src, tmp_path / "o.jsonl", on_error="raise")
    msg = str(got.value)
    assert f"{src}:2 (qid=1): no duration known for video 'v1'" in msg
    assert "pass --videos FILE (API: videos=)" in msg
    assert not (tmp_path / "o.jsonl").exists()
