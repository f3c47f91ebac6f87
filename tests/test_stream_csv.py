"""Streaming CSV certification: each line echoed byte for byte with the cover columns,
the same regions as the whole-file path, any batch size."""

from __future__ import annotations

import csv
import gzip
import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pyarrow")

import cover
from cover.cli import main
from cover.data.rules import duplicate_reason
from cover.errors import InputError
from cover.io.seen import SeenIds, repeated_rows
from cover.stream.csv import COVER_COLUMNS, batch_repeats, certify_csv

COLS = "qid=qid,vid=vid,duration=duration,start=start,end=end"


@pytest.fixture(scope="module")
def qvh(qdetr_table, qdetr_preds, qvh_gt, tmp_path_factory):
    """QD-DETR's real top-1 windows as CSV (durations joined in; some written as ints,
    a refusal with empty start/end), the labelled table and a fitted calibrator."""
    table = qdetr_table
    d = tmp_path_factory.mktemp("csv")
    lines = ["qid,vid,duration,start,end,note"]
    for i, (q, v, t, s, e) in enumerate(zip(table.qid, table.vid, table.duration,
                                           table.pred_start, table.pred_end, strict=True)):
        if i == 5:
            s_txt, e_txt = "", ""
        else:
            s_txt, e_txt = (f"{s:g}", f"{e:.1f}") if i % 2 else (repr(float(s)), repr(float(e)))
        lines.append(f'{q},{v},{t:g},{s_txt},{e_txt},"a, b ""{i}"""')
    src = d / "preds.csv"
    src.write_text("\n".join(lines) + "\n")
    cal = cover.Calibrator(score="norm", alpha=0.1).fit(table)
    cal_path = d / "cal.json"
    cal.save(cal_path)
    return src, table, cal, cal_path


def _rows(path):
    return list(csv.DictReader(io.StringIO(path.read_text())))


#: Rows kept for the batches of one row: a batch costs a fixed few milliseconds, so that
#: case runs on the file's first rows (the refusal and both ways of writing numbers among
#: them); the larger batches read the whole file.
ONE_ROW_BATCHES = 200


@pytest.mark.parametrize("batch_rows", [1, 97, 100_000])
def test_csv_stream_echoes_lines_and_equals_the_whole_file_path(qvh, tmp_path, batch_rows):
    src, table, cal, cal_path = qvh
    n = len(table)
    if batch_rows == 1:
        some = tmp_path / "some.csv"
        some.write_bytes(b"".join(src.read_bytes().splitlines(keepends=True)[
            :ONE_ROW_BATCHES + 1]))
        src, n = some, ONE_ROW_BATCHES
    dst = tmp_path / "out.csv"
    counts = certify_csv(cal, src, dst, columns=COLS, batch_rows=batch_rows)
    assert counts.rows == n == counts.certified + counts.refused + counts.rejected
    assert counts.refused == 1 and counts.rejected == 0
    src_lines = src.read_bytes().splitlines()
    out_lines = dst.read_bytes().splitlines()
    assert out_lines[0] == src_lines[0] + b"," + ",".join(COVER_COLUMNS).encode()
    assert all(o.startswith(i + b",") for i, o in zip(src_lines, out_lines, strict=True))
    # The whole-file path on the same CSV (written as JSON lines) gives the same regions.
    assert main(["certify", "--calibrator", str(cal_path), "--preds", str(src), "--columns",
                 COLS, "-o", str(tmp_path / "mem.jsonl")]) == 0
    mem = [json.loads(x)["cover"] for x in (tmp_path / "mem.jsonl").read_text().splitlines()]
    got = _rows(dst)
    assert [json.loads(r["cover_region"]) for r in got] == [m["region"] for m in mem]
    assert [r["cover_status"] for r in got] == [m["status"] for m in mem]
    assert [r["note"] for r in got][:2] == ['a, b "0"', 'a, b "1"']  # quoting kept


def test_cli_streams_csv_to_csv_and_compact_keeps_qid_and_vid(qvh, tmp_path, capsys):
    src, table, _, cal_path = qvh
    dst = tmp_path / "c.csv"
    assert main(["certify", "--calibrator", str(cal_path), "--preds", str(src), "--columns",
                 COLS, "-o", str(dst), "--compact", "--batch-rows", "100"]) == 0
    assert "streamed in" in capsys.readouterr().out
    got = _rows(dst)
    assert list(got[0]) == ["qid", "vid", *COVER_COLUMNS]
    assert [r["qid"] for r in got] == table.qid.tolist()


def test_repeated_qid_across_batches_and_unknown_duration_are_rejected(qvh, tmp_path):
    src, _, cal, _ = qvh
    lines = src.read_text().splitlines()
    bad = tmp_path / "bad.csv.gz"
    extra = [lines[4], lines[1].replace(lines[1].split(",")[2], "", 1).replace(
        lines[1].split(",")[0], "zz", 1)]
    bad.write_bytes(gzip.compress(("\n".join(lines[:40] + [""] + extra) + "\n").encode()))
    counts = certify_csv(cal, bad, tmp_path / "o.csv", columns=COLS, batch_rows=8)
    out = _rows(tmp_path / "o.csv")
    assert counts.rows == 41 and counts.rejected == 2
    assert out[-2]["cover_status"] == "rejected" and "duplicate qid" in out[-2]["cover_reason"]
    assert "no duration" in out[-1]["cover_reason"]
    # Line 41 is blank: the repeats are lines 42 and 43 of the file, named as such.
    with pytest.raises(InputError, match=r"(?s)bad.csv.gz:42 \(qid=\d+\): duplicate.*:43 "):
        certify_csv(cal, bad, tmp_path / "o2.csv", columns=COLS, batch_rows=8,
                    on_error="raise")
    assert not (tmp_path / "o2.csv").exists()


def test_bad_csv_names_the_line(qvh, tmp_path):
    src, _, cal, _ = qvh
    lines = src.read_text().splitlines()
    broken = tmp_path / "broken.csv"
    broken.write_text("\n".join([*lines[:10], lines[10].replace(",", ",x", 1).replace(
        lines[10].split(",")[2], "many", 1), *lines[11:20]]) + "\n")
    qid = lines[10].split(",")[0]
    with pytest.raises(InputError, match=rf"broken.csv:11 \(qid={qid}\): column 'duration' "
                                         r'must hold a number, got "many"'):
        certify_csv(cal, broken, tmp_path / "o.csv", columns=COLS, batch_rows=100,
                    on_error="raise")
    spanning = tmp_path / "span.csv"
    spanning.write_text("\n".join([*lines[:3], lines[3][:-3] + '\n"', *lines[4:6]]) + "\n")
    with pytest.raises(InputError, match=r"spans lines|cannot read"):
        certify_csv(cal, spanning, tmp_path / "o.csv", columns=COLS)
    with pytest.raises(InputError, match="no column 'begin'"):
        certify_csv(cal, src, tmp_path / "o.csv", columns=COLS.replace("start=start",
                                                                        "start=begin"))
    assert np.all([not p.exists() for p in tmp_path.glob("o*.csv")])


def test_batches_are_read_lazily(qvh, monkeypatch):
    """Bounded memory: the reader pulls a batch of lines only when it is certified."""
    from cover.io import csv_lines
    from cover.io.generic import parse_columns

    src = qvh[0]
    pulled = []
    real = csv_lines.line_batches

    def counting(path, n, **kw):
        for b in real(path, n, **kw):
            pulled.append(len(b))
            yield b

    monkeypatch.setattr(csv_lines, "line_batches", counting)
    it = iter(csv_lines.csv_batches(src, parse_columns(COLS), 50))
    next(it)
    assert len(pulled) == 1  # the header's batch, whose other lines are the first batch
    batches = 1 + sum(1 for _ in it)
    assert len(pulled) == batches  # every later batch was pulled once, on demand


@pytest.mark.parametrize("batch_rows", [1, 10, 50, 97])
def test_every_batch_holds_batch_rows_data_lines(qvh, qvh_gt, tmp_path, capsys, batch_rows):
    """The header is no data row: each batch holds ``batch_rows`` data lines (the last
    fewer), none is empty, and certify and calibrate say how many there were."""
    from cover.io.csv_lines import csv_batches
    from cover.io.generic import parse_columns

    src = tmp_path / "p.csv"
    src.write_text("\n".join(qvh[0].read_text().splitlines()[:101]) + "\n")  # 100 rows
    qids = tmp_path / "qids.txt"
    qids.write_text("\n".join(map(str, qvh[1].qid[:100])) + "\n")
    sizes = [ln.size for _, _, ln, _ in csv_batches(src, parse_columns(COLS), batch_rows)]
    want = -(-100 // batch_rows)
    assert sizes == [batch_rows] * (want - 1) + [100 - batch_rows * (want - 1)]
    assert main(["certify", "--calibrator", str(qvh[3]), "--preds", str(src), "--columns",
                 COLS, "--batch-rows", str(batch_rows), "-o", str(tmp_path / "r.csv")]) == 0
    assert f"streamed in {want} batch(es) of up to {batch_rows} rows" in capsys.readouterr().out
    assert main(["calibrate", "--preds", str(src), "--columns", COLS, "--gt", str(qvh_gt),
                 "--qids", str(qids), "--batch-rows", str(batch_rows),
                 "-o", str(tmp_path / "c.json")]) == 0
    assert f"{src}: streamed in {want} batch(es) of up to {batch_rows} rows" in \
        capsys.readouterr().err


def _field(i: int, value: bytes):
    """An edit of a line: its field ``i`` (before the quoted note) set to ``value``."""
    def edit(line: bytes) -> bytes:
        fields = line.split(b",")
        fields[i] = value(fields[i])
        return b",".join(fields)
    return edit


#: Lines pyarrow cannot read on their own, each with the reason a person is shown.
UNREADABLE = {
    "too few fields": (lambda ln: b",".join(ln.split(b",")[:3]),
                       "cannot read as CSV: 3 field(s), the header has 6"),
    "text in a number": (_field(3, lambda v: b"abc"),
                         "column 'start' must hold a number, got \"abc\""),
    "latin-1 byte": (_field(1, lambda v: v + b"\xe9"),
                     "column 'vid' is not UTF-8 text (byte 0xe9); save the file as UTF-8"),
}


@pytest.mark.parametrize("case", list(UNREADABLE))
@pytest.mark.parametrize("batch_rows", [7, 100_000])
def test_a_line_pyarrow_cannot_read_is_rejected_not_the_run(qvh, tmp_path, case, batch_rows):
    """Under --on-error reject the line is set aside with file, line, qid and why, every
    other line certified as before; under raise the same words stop the run, with the
    output untouched and no Python repr."""
    src, _, cal, _ = qvh
    edit, why = UNREADABLE[case]
    lines = src.read_bytes().splitlines()[:30]
    qid = lines[12].split(b",")[0].decode()
    lines[12] = edit(lines[12])
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    before = bad.read_bytes()
    dst = tmp_path / "o.csv"
    counts = certify_csv(cal, bad, dst, columns=COLS, batch_rows=batch_rows)
    assert counts.rows == 29 and counts.rejected == 1
    out = dst.read_bytes().splitlines()
    # A line of too few fields is echoed, then padded to the header's (see below).
    pad = b"," * (6 - len(lines[12].split(b","))) if case == "too few fields" else b""
    assert out[12].startswith(lines[12] + pad + b',"rejected",')
    assert next(csv.reader([out[12].decode("latin-1")]))[-1] == why
    good = tmp_path / "good.csv"
    good.write_bytes(b"\n".join([*src.read_bytes().splitlines()[:12],
                                 *src.read_bytes().splitlines()[13:30]]) + b"\n")
    certify_csv(cal, good, tmp_path / "g.csv", columns=COLS, batch_rows=batch_rows)
    assert [ln for i, ln in enumerate(out) if i != 12] == \
        (tmp_path / "g.csv").read_bytes().splitlines()
    with pytest.raises(InputError) as got:
        certify_csv(cal, bad, tmp_path / "r.csv", columns=COLS, batch_rows=batch_rows,
                    on_error="raise")
    assert f"bad.csv:13 (qid={qid}): {why}" in str(got.value)
    assert "ArrowInvalid" not in str(got.value) and "b'" not in str(got.value)
    assert not (tmp_path / "r.csv").exists() and bad.read_bytes() == before


@pytest.mark.parametrize("compact", [False, True])
def test_a_line_of_another_shape_is_echoed_as_the_headers_fields(qvh, tmp_path, compact):
    """A line of fewer fields than the header is echoed byte for byte, then given empty
    fields up to the header's count; a line of more fields, or with an unclosed quote,
    is echoed as its first fields, re-quoted, up to the header's count. A CSV reader
    finds every rejection under cover_status and cover_reason, not under the input's own
    columns, and every row of the output has the header's fields."""
    src, _, cal, _ = qvh
    lines = src.read_bytes().splitlines()[:9]
    lines[3] = b",".join(lines[3].split(b",")[:2])  # qid, vid: 2 of the header's 6
    lines[5] = lines[5] + b",extra,more"  # 8 of 6
    lines[7] = b",".join(lines[7].split(b",")[:3]) + b',"unclosed'  # 4 of 6, a quote open
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    dst = tmp_path / "o.csv"
    counts = certify_csv(cal, bad, dst, columns=COLS, batch_rows=3, compact=compact)
    assert counts.rejected == 3
    out = dst.read_bytes().splitlines()
    if not compact:
        assert out[3].startswith(lines[3] + b",,,,,\"rejected\",")
        six = next(csv.reader([lines[5].decode()]))[:6]  # the 6th is quoted, commas inside
        buf = io.StringIO()
        csv.writer(buf, lineterminator="").writerow(six)
        assert out[5].startswith(buf.getvalue().encode() + b',"rejected",')
        assert out[7].startswith(b",".join(lines[7].split(b",")[:3]) + b',unclosed,,,"rejected",')
        assert [out[i][:len(lines[i]) + 1] for i in (1, 2, 4, 6, 8)] == [
            lines[i] + b"," for i in (1, 2, 4, 6, 8)]  # the others byte for byte
    rows = list(csv.DictReader(io.StringIO(dst.read_text())))
    assert [rows[i]["cover_status"] for i in (2, 4, 6)] == ["rejected"] * 3
    assert [rows[i]["cover_reason"] for i in (2, 4, 6)] == [
        "cannot read as CSV: 2 field(s), the header has 6",
        "cannot read as CSV: 8 field(s), the header has 6",
        "cannot read as CSV: 4 field(s), the header has 6"]
    assert all(None not in r and len(r) == len(rows[0]) for r in rows)
    pa_csv = pytest.importorskip("pyarrow.csv")
    assert pa_csv.read_csv(dst).num_rows == 8  # a strict reader reads it whole


def test_the_whole_file_reader_rejects_the_same_lines(qvh, tmp_path):
    """``--in-memory`` (the whole-file reader) and the streamed reader set aside the same
    lines with the same reasons."""
    from cover.io.generic import read_table

    src = qvh[0]
    lines = src.read_bytes().splitlines()[:30]
    expect = []
    for i, (edit, why) in zip((5, 9, 20), UNREADABLE.values(), strict=True):
        expect.append((i + 1, lines[i].split(b",")[0].decode(), why))
        lines[i] = edit(lines[i])
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\n".join(lines[:8]) + b"\n\n" + b"\n".join(lines[8:]) + b"\n")
    expect = [(ln if ln < 9 else ln + 1, q, w) for ln, q, w in expect]  # the blank line
    got = read_table(bad, COLS, role="predictions", on_error="reject")
    assert [(p.line, p.qid, p.problem) for p in got.problems
            if p.action == "rejected"] == expect
    assert len(got.table) == 29 - 3
    assert got.table.line.tolist()[:8] == [2, 3, 4, 5, 7, 8, 10, 12]
    with pytest.raises(InputError, match=r"(?s)3 bad row\(s\) in .*bad.csv:6 \(qid=\d+\): "
                                         r"cannot read as CSV: 3 field"):
        read_table(bad, COLS, role="predictions")


def test_large_integer_qids_stay_exact_in_csv(qvh, tmp_path):
    """An id column is text as written: 2**64 is not turned into a float."""
    from cover.io.generic import read_table

    big = str(2**64 + 1)
    p = tmp_path / "big.csv"
    p.write_text(f"qid,vid,duration,start,end\n{big},v,30,1,5\n007,v,30,2,6\n")
    got = read_table(p, COLS, role="predictions")
    assert got.table.qid.tolist() == [big, "007"]


@pytest.mark.parametrize("batch_rows", [1, 2, 100])
def test_a_repeat_whose_cell_is_unreadable_says_so_on_both_paths(qvh, tmp_path, batch_rows):
    """A qid repeated on a later line whose cell cannot be read: the reader's own finding
    comes first, streamed in any batch size as read whole (the repeat rule comes after
    it, as the whole-file reader applies it)."""
    from cover.stream.csv import certify_csv

    src, _, cal, _ = qvh
    lines = src.read_bytes().splitlines()[:6]
    lines.append(_field(3, lambda v: b"abc")(lines[2]))  # line 3's qid again, start "abc"
    lines.append(lines[3])  # line 4's row again, readable: a plain repeat
    bad = tmp_path / "rep.csv"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "o.csv"
    certify_csv(cal, bad, out, columns=COLS, batch_rows=batch_rows, on_error="reject")
    streamed = [(r["cover_status"], r["cover_reason"]) for r in _rows(out)]
    assert main(["certify", "--calibrator", str(qvh[3]), "--preds", str(bad), "--columns",
                 COLS, "--on-error", "reject", "-o", str(tmp_path / "w.jsonl")]) == 0
    whole = [(json.loads(ln)["cover"]["status"], json.loads(ln)["cover"].get("reason") or "")
             for ln in (tmp_path / "w.jsonl").read_text().splitlines()]
    assert streamed == whole
    assert whole[-2:] == [("rejected", "column 'start' must hold a number, got \"abc\""),
                          ("rejected", "duplicate qid (first seen on line 4)")]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["1", "2", "10", "a", "", "naïve", "x" * 12]), max_size=40),
       st.integers(1, 9))
def test_batch_repeats_in_one_pass_are_the_whole_column_rule(qids, batch):
    """Batch by batch, the rows repeating an earlier row's qid and the line each names are
    those of the whole column at once (:func:`cover.io.seen.repeated_rows`)."""
    import pyarrow as pa
    lines = np.arange(2, len(qids) + 2, dtype=np.int64)  # line 1 is the header
    rows, first = repeated_rows(np.array(qids, dtype=str))
    want = {int(r): duplicate_reason(int(lines[f])) for r, f in zip(rows, first, strict=True)}
    seen, got = SeenIds(), {}
    for a in range(0, len(qids), batch):
        part = pa.chunked_array([pa.array(qids[a:a + batch], pa.string())])
        got |= {a + i: why for i, why in
                batch_repeats(seen, part, lines[a:a + batch]).items()}
    assert got == want


@given(st.lists(st.lists(st.text(alphabet='ab ,"\\x\t', max_size=6), min_size=0, max_size=7),
                min_size=1, max_size=6),
       st.sampled_from([",", "\t"]))
def test_every_echoed_line_has_the_headers_fields(rows, sep):
    """Whatever a line pyarrow could not read holds (too few or too many fields, stray or
    unclosed quotes), header_wide echoes it as a line of exactly the header's fields,
    followed by the cover cells where they belong; a line that already reads so stays
    byte for byte."""
    from cover.stream.csv import header_wide

    width = 4
    lines = [sep.join(r).encode() for r in rows]
    batch = list(enumerate(lines, start=2))
    out = header_wide(batch, {i: "unread" for i in range(len(lines))}, width, sep.encode())
    for raw, got in zip(lines, out, strict=True):
        text = got.decode()
        assert "\n" not in text and "\r" not in text
        cells = next(csv.reader([text + sep + "cover"], delimiter=sep))
        assert len(cells) == width + 1 and cells[-1] == "cover", (raw, got)
        before = next(csv.reader([raw.decode() + sep + "cover"], delimiter=sep))
        if len(before) == width + 1 and before[-1] == "cover":
            assert got == raw
