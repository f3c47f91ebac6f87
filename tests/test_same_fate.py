"""The same row gets the same fate on every path of ``cover certify``: JSON lines, CSV
and Parquet, streamed and read whole, give each row the same status, region, reason,
calibration mark and counts (messages differ only in the file name and, for CSV, the
header line), because every path runs the one certify stage
(:mod:`cover.stream.stage`). The Python API's one-row entry point, ``RowCertifier``,
gives those rows the same region or rejects them too. And the output format follows the
output name."""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import cover  # noqa: E402
from cover.cli import main  # noqa: E402

T = 150.0
COLS = "qid=qid,vid=vid,duration=duration,start=start,end=end"
# The table of issue 16 (T = 150 s), then a plain row, a calibration row, a refusal and
# a row whose duration only --videos knows.
CASES = [
    ("wholly_after", 500.0, 600.0, T),
    ("wholly_before", -60.0, -10.0, T),
    ("partly_out", 140.0, 170.0, T),
    ("contradicts", 10.0, 20.0, 30.0),
    ("plain", 10.0, 20.0, T),
    ("c3", 30.0, 45.0, T),
    ("refusal", None, None, T),
    ("no_duration", 5.0, 25.0, None),
]
# (name, suffix of the input, extra flags, output name): every path of cover certify.
PATHS = [
    ("jsonl streamed", "jsonl", [], "o.jsonl"),
    ("jsonl whole", "jsonl", ["--in-memory"], "o.jsonl"),
    ("csv streamed", "csv", ["--columns", COLS], "o.csv"),
    ("csv whole", "csv", ["--columns", COLS], "o.jsonl"),
    ("parquet streamed", "parquet", ["--columns", COLS], "o.parquet"),
    ("parquet whole", "parquet", ["--columns", COLS, "--in-memory"], "o.jsonl"),
]


def _fit(path: Path, keep_scores: bool = False) -> Path:
    """A NORM calibrator fitted on rows c0..c59 (so c3 is a calibration row), saved."""
    rng = np.random.default_rng(0)
    n = 60
    s = rng.uniform(0, 100, n)
    e = s + rng.uniform(1, 40, n)
    ts = np.clip(s + rng.normal(0, 5, n), 0, T - 1)
    table = cover.GroundingTable.from_arrays(
        qid=[f"c{i}" for i in range(n)], duration=T, pred_start=s, pred_end=e,
        truth=(ts, np.minimum(ts + (e - s), T)))
    cover.Calibrator(score="norm", alpha=0.1, keep_scores=keep_scores).fit(table).save(path)
    return path


@pytest.fixture(scope="module")
def cal_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _fit(tmp_path_factory.mktemp("cal") / "cal.json")


@pytest.fixture(scope="module")
def cal_scores_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same calibrator, fitted with --keep-scores (per-row p-values)."""
    return _fit(tmp_path_factory.mktemp("cal") / "cal_scores.json", keep_scores=True)


def _write_inputs(d: Path, rows: list[tuple[str, float | None, float | None, float | None]]
                  ) -> None:
    with (d / "p.jsonl").open("w") as fh:
        for q, s, e, t in rows:
            rec: dict[str, object] = {"qid": q, "vid": f"v{q}"}
            if t is not None:
                rec["duration"] = t
            rec["pred_relevant_windows"] = [] if s is None else [[s, e, 0.9]]
            fh.write(json.dumps(rec) + "\n")
    with (d / "p.csv").open("w") as fh:
        fh.write("qid,vid,duration,start,end\n")
        for q, s, e, t in rows:
            cells = ["" if v is None else repr(v) for v in (t, s, e)]
            fh.write(f"{q},v{q},{','.join(cells)}\n")
    pq.write_table(pa.table({
        "qid": [r[0] for r in rows], "vid": [f"v{r[0]}" for r in rows],
        "duration": pa.array([r[3] for r in rows], pa.float64()),
        "start": pa.array([r[1] for r in rows], pa.float64()),
        "end": pa.array([r[2] for r in rows], pa.float64())}), d / "p.parquet")
    with (d / "videos.jsonl").open("w") as fh:
        for q, *_ in rows:
            fh.write(json.dumps({"vid": f"v{q}", "duration": T}) + "\n")


def _fates(out: Path) -> list[tuple[str, str, object, object, bool]]:
    """(qid, status, region, reason, in_calibration) of every output row."""
    if out.suffix == ".parquet":
        return [(r["qid"], r["cover"]["status"], r["cover"]["region"], r["cover"]["reason"],
                 bool(r["cover"]["in_calibration"])) for r in pq.read_table(out).to_pylist()]
    if out.suffix == ".csv":
        return [(r["qid"], r["cover_status"],
                 json.loads(r["cover_region"]) if r["cover_region"] else None,
                 r["cover_reason"] or None, r["cover_in_calibration"] == "true")
                for r in csv.DictReader(io.StringIO(out.read_text()))]
    got = []
    for line in out.read_text().splitlines():
        rec = json.loads(line)
        b = rec["cover"]
        got.append((rec["qid"], b["status"], b["region"], b.get("reason"),
                    b.get("in_calibration", False)))
    return got


def _p_values(out: Path) -> list[float | None]:
    """Each output row's conformal p-value (None: the row has none)."""
    if out.suffix == ".parquet":
        return [r["cover"].get("p_value") for r in pq.read_table(out).to_pylist()]
    if out.suffix == ".csv":
        return [float(r["cover_p_value"]) if r.get("cover_p_value") else None
                for r in csv.DictReader(io.StringIO(out.read_text()))]
    return [json.loads(line)["cover"].get("p_value")
            for line in out.read_text().splitlines()]


def _messages(err: str, name: str, csv_file: bool) -> list[str]:
    """Standard error without the file name; CSV lines numbered as rows (header out)."""
    def row(m: re.Match[str]) -> str:
        return f"FILE:{int(m.group(1)) - (1 if csv_file else 0)}"

    text = re.sub(re.escape(name) + r":(\d+)", row, err)
    return [ln.replace(name, "FILE") for ln in text.splitlines()
            if not ln.startswith(("wrote", "certified")) and "(rows)" not in ln
            and not re.match(r"^\S+: (moment-detr|columns) \(\d+ rows\)$", ln)]


def _certify_all(d: Path, cal_path: Path, capsys: pytest.CaptureFixture[str],
                 *flags: str) -> dict[str, tuple]:
    """Certify ``d``'s inputs on every path: each path's (fates, counts, messages,
    calibration warning, p-values)."""
    results = {}
    for name, kind, extra, out in PATHS:
        src, dst = d / f"p.{kind}", d / f"{name.replace(' ', '_')}_{out}"
        dst.unlink(missing_ok=True)
        rc = main(["certify", "--calibrator", str(cal_path), "--preds", str(src),
                   "--videos", str(d / "videos.jsonl"), *extra, *flags, "-o", str(dst)])
        cap = capsys.readouterr()
        assert rc == 0, cap.err
        counts = re.search(r"certified (\d+), refused \(whole video\) (\d+), (?:abstained "
                           r"\(whole video\) (\d+), )?rejected (\d+) of (\d+) input rows "
                           r"\(.*\); (?:mean region length (\S+) s|no region written)$", cap.out,
                           re.M)
        assert counts, cap.out
        marked = "calibrator was fitted on" in cap.err  # cover: warning: ...
        results[name] = (_fates(dst), counts.groups(),
                         _messages(cap.err, str(src), kind == "csv"), marked, _p_values(dst))
    return results


def _assert_one_row_api_agrees(cal_path: Path, cases: list[tuple], fates: list[tuple],
                               strict: bool = False) -> int:
    """The Python API's one-row entry point (:class:`cover.stream.RowCertifier`) gives
    every row the command's fate: its region, or an ``InputError`` where the command
    rejects the row. Compared on the first row of each qid whose duration the row
    itself gives or ``--videos`` gives alike (the certifier sees neither the other rows
    nor the videos file); how many rows were compared."""
    from cover.errors import InputError
    from cover.stream import RowCertifier

    cert = RowCertifier(cover.Calibrator.load(cal_path), strict=strict)
    seen: set[str] = set()
    compared = 0
    for (q, s, e, t), (q_out, status, region, reason, _) in zip(cases, fates, strict=True):
        assert q == q_out
        first = q not in seen
        seen.add(q)
        if not first or t not in (T, None):
            continue
        nan = float("nan")
        try:
            got = cert(nan if s is None else s, nan if e is None else e, T)
        except InputError as exc:
            assert status == "rejected", (q, str(exc), region)
        else:
            assert (status, region) in (("certified", got), ("refused", got)), (q, got, reason)
        compared += 1
    return compared


def _assert_same(results: dict[str, tuple]) -> None:
    first_name, first = next(iter(results.items()))
    for name, got in results.items():
        assert got[0] == first[0], (name, first_name)
        assert got[1] == first[1], (name, first_name)
        assert got[2] == first[2], (name, first_name)
        assert bool(got[3]) == bool(first[3]), (name, first_name)
        assert got[4] == first[4], (name, first_name)


@pytest.mark.parametrize("strict", [False, True])
def test_the_issue_table_gets_one_fate_on_every_path(cal_path, tmp_path, capsys, strict):
    _write_inputs(tmp_path, CASES)
    results = _certify_all(tmp_path, cal_path, capsys, *(["--strict"] if strict else []),
                           "--on-error", "reject")
    _assert_same(results)
    assert _assert_one_row_api_agrees(cal_path, CASES, results["jsonl streamed"][0],
                                      strict) == 7
    fate = {q: (status, region, reason, mark)
            for q, status, region, reason, mark in results["jsonl streamed"][0]}
    assert fate["wholly_after"][2] == ("predicted interval [500, 600] lies wholly outside the "
                                       "video [0, 150]")
    assert fate["wholly_before"][0] == "rejected"
    assert "contradicts 150" in fate["contradicts"][2]
    assert fate["refusal"][:2] == ("refused", [[0.0, T]])
    assert fate["no_duration"][0] == "certified" and fate["no_duration"][1][0][1] <= T
    assert fate["c3"][3] is True and fate["plain"][3] is False  # calibration-row mark
    assert all(r[3] for r in results.values())  # and the warning, on every path
    if strict:
        assert fate["partly_out"][2] == "predicted interval reaches outside [0, T] (strict mode)"
    else:
        assert fate["partly_out"][0] == "certified" and fate["partly_out"][1][0][1] == T
        msgs = results["parquet streamed"][2]
        assert "cover: 1 row(s) clipped in FILE: predicted interval clipped to [0, T] (1)" in msgs
        assert "  FILE:3 (qid=partly_out): predicted interval clipped to [0, T]" in msgs


@pytest.mark.parametrize("batch", ["16384", "2"])
def test_a_qids_list_gets_one_fate_on_every_path(cal_path, tmp_path, capsys, batch):
    """``--qids`` on every format and path: only the listed rows are written, with the
    rows rejected whether listed or not (a repeated qid, a window wholly outside); a
    listed qid no row has is named with the list's line; ``--on-error raise`` stops
    with both files named. (Streamed CSV and Parquet refused --qids.)"""
    rows = [*CASES, ("plain", 11.0, 21.0, T), ("c3", 31.0, 46.0, T)]  # two repeats
    _write_inputs(tmp_path, rows)
    listed = tmp_path / "q.txt"
    listed.write_text("plain\nghost\ncontradicts\nno_duration\n")
    results = _csv_lines_as_rows(_certify_all(
        tmp_path, cal_path, capsys, "--qids", str(listed), "--batch-rows", batch,
        "--on-error", "reject"))
    _assert_same(results)
    # the listed rows, then the unlisted ones that repeat a qid (rejected), in file order
    assert [(q, status) for q, status, *_ in results["csv streamed"][0]] == [
        ("contradicts", "rejected"), ("plain", "certified"), ("no_duration", "certified"),
        ("plain", "rejected"), ("c3", "rejected")]
    assert results["csv streamed"][1][:5] == ("2", "0", None, "3", "5")
    for name, kind, extra, out in PATHS:
        assert main(["certify", "--calibrator", str(cal_path), "--preds",
                     str(tmp_path / f"p.{kind}"), "--videos", str(tmp_path / "videos.jsonl"),
                     *extra, "--qids", str(listed), "-o", str(tmp_path / f"r_{out}")]) == 2
        err = capsys.readouterr().err
        assert f"4 bad row(s) in {tmp_path / f'p.{kind}'} and {listed}:" in err, name
        assert f"{listed}:2 (qid=ghost): qid not found in {tmp_path / f'p.{kind}'}" in err


@pytest.mark.parametrize("batch", ["16384", "1"])
def test_a_listed_qid_whose_row_is_rejected_is_found_on_every_path(cal_path, tmp_path,
                                                                    capsys, batch):
    """A listed qid whose row is rejected (its vid is no id; its start no number, which
    the reader sets aside) was found: the row is written rejected for its own reason,
    and only a qid no row has is named "not found", on every path and batch size."""
    _write_inputs(tmp_path, [("plain", 10.0, 20.0, T), ("badvid", 10.0, 20.0, T)])
    for name in ("p.jsonl", "p.csv"):  # the vid " vbadvid": space-padded, no id
        (tmp_path / name).write_text((tmp_path / name).read_text().replace("vbadvid",
                                                                           " vbadvid"))
    pq.write_table(pq.read_table(tmp_path / "p.parquet").set_column(
        1, "vid", pa.array(["vplain", " vbadvid"])), tmp_path / "p.parquet")
    with (tmp_path / "p.jsonl").open("a") as fh:
        fh.write('{"qid": "badrow", "vid": "vb", "duration": 150, '
                 '"pred_relevant_windows": [[1, "x", 0.9]]}\n')
    with (tmp_path / "p.csv").open("a") as fh:
        fh.write("badrow,vb,150.0,1.0,x\n")
    listed = tmp_path / "q.txt"
    listed.write_text("plain\nbadvid\nbadrow\nghost\n")
    for name, kind, extra, out in PATHS:
        src = tmp_path / f"p.{kind}"
        assert main(["certify", "--calibrator", str(cal_path), "--preds", str(src), *extra,
                     "--qids", str(listed), "--batch-rows", batch, "--on-error", "reject",
                     "-o", str(tmp_path / f"r_{out}")]) == 0
        err = capsys.readouterr().err
        missing = re.findall(r"qid=(\w+)\): qid not found", err)
        # (the Parquet file has no row "badrow": a float column holds no "x")
        assert missing == (["badrow", "ghost"] if kind == "parquet" else ["ghost"]), name
        fates = {q: (status, reason) for q, status, _, reason, _ in _fates(
            tmp_path / f"r_{out}")}
        assert fates["plain"][0] == "certified", name
        assert fates["badvid"] == ("rejected", 'vid " vbadvid" has leading or trailing '
                                   "spaces"), name
        assert kind == "parquet" or fates["badrow"][0] == "rejected", name


def test_certify_output_given_as_input_is_refused_on_every_path(cal_path, tmp_path, capsys):
    """certify's own output certified again: JSON lines replaced its cover block, CSV
    wrote its cover columns twice, Parquet read whole certified it, Parquet streamed
    refused it. Every path now refuses it before any work, naming the field."""
    _write_inputs(tmp_path, CASES)
    first = {}
    for name, kind, extra, out in PATHS:
        if name.endswith("streamed"):  # certify's own output, in each format
            dst = tmp_path / f"first_{out}"
            assert main(["certify", "--calibrator", str(cal_path), "--preds",
                         str(tmp_path / f"p.{kind}"), "--videos", str(tmp_path / "videos.jsonl"),
                         *extra, "--on-error", "reject", "-o", str(dst)]) == 0
            first[kind] = dst
    capsys.readouterr()
    for name, kind, extra, out in PATHS:
        again = tmp_path / f"again_{name.replace(' ', '_')}_{out}"
        assert main(["certify", "--calibrator", str(cal_path), "--preds", str(first[kind]),
                     "--videos", str(tmp_path / "videos.jsonl"), *extra,
                     "-o", str(again)]) == 2, name
        field = "cover_status" if kind == "csv" else "cover"
        assert capsys.readouterr().err == (
            f"cover: error: {first[kind]}: the input already has a {field!r} field (is it the "
            "output of cover certify?); certify the original predictions\n"), name
        assert not again.exists()


def test_on_error_raise_stops_every_path_and_writes_nothing(cal_path, tmp_path, capsys):
    _write_inputs(tmp_path, CASES[:1] + CASES[4:5])
    for name, kind, extra, out in PATHS:
        dst = tmp_path / f"x_{out}"
        rc = main(["certify", "--calibrator", str(cal_path), "--preds",
                   str(tmp_path / f"p.{kind}"), "--videos", str(tmp_path / "videos.jsonl"),
                   *extra, "--on-error", "raise", "-o", str(dst)])
        err = capsys.readouterr().err
        assert rc == 2 and not dst.exists(), name
        assert "(qid=wholly_after): predicted interval [500, 600] lies wholly outside" in err


@pytest.mark.parametrize(("column", "json_value", "why"), [
    (pa.array([True]), True, "duration must be a finite number > 0"),
    (pa.array(["150"]), "150", "duration must be a finite number > 0"),
])
def test_parquet_durations_that_are_no_numbers_are_rejected_as_in_json(
        cal_path, tmp_path, capsys, column, json_value, why):
    (tmp_path / "p.jsonl").write_text(json.dumps(
        {"qid": "a", "vid": "va", "duration": json_value,
         "pred_relevant_windows": [[1, 2, 0.9]]}) + "\n")
    pq.write_table(pa.table({"qid": ["a"], "vid": ["va"], "duration": column,
                             "start": [1.0], "end": [2.0]}), tmp_path / "p.parquet")
    for src, extra, out in [("p.jsonl", [], "o.jsonl"),
                            ("p.parquet", ["--columns", COLS], "o.parquet"),
                            ("p.parquet", ["--columns", COLS, "--in-memory"], "m.jsonl")]:
        assert main(["certify", "--calibrator", str(cal_path), "--preds", str(tmp_path / src),
                     *extra, "--on-error", "reject", "-o", str(tmp_path / out)]) == 0
        assert _fates(tmp_path / out) == [("a", "rejected", None, why, False)], src
    capsys.readouterr()


@pytest.mark.parametrize(("qids", "json_qid", "why"), [
    (pa.array([2579.0]), 2579.0, 'qid 2579.0 is written as a float; write it as 2579 (an '
     'integer) or "2579" (a string)'),
    (pa.array([True]), True, "qid must be an integer or a string, got true"),
    (pa.array([" 12"]), " 12", 'qid " 12" has leading or trailing spaces'),
    (pa.array(["q" * 2000]), "q" * 2000, "qid is 2,000 characters long; an id holds at "
     "most 1,024"),
])
def test_qids_that_are_no_ids_are_rejected_on_every_format(cal_path, tmp_path, capsys,
                                                           qids, json_qid, why):
    (tmp_path / "p.jsonl").write_text(json.dumps(
        {"qid": json_qid, "vid": "va", "duration": T,
         "pred_relevant_windows": [[1, 2, 0.9]]}) + "\n")
    pq.write_table(pa.table({"qid": qids, "vid": ["va"], "duration": [T], "start": [1.0],
                             "end": [2.0]}), tmp_path / "p.parquet")
    paths = [("p.jsonl", [], "o.jsonl"), ("p.parquet", ["--columns", COLS], "o.parquet"),
             ("p.parquet", ["--columns", COLS, "--in-memory"], "m.jsonl")]
    if isinstance(json_qid, str):  # CSV holds text only: the padded qid as written
        (tmp_path / "p.csv").write_text(f"qid,vid,duration,start,end\n{json_qid},va,150,1,2\n")
        paths += [("p.csv", ["--columns", COLS], "o.csv"),
                  ("p.csv", ["--columns", COLS], "w.jsonl")]
    for src, extra, out in paths:
        assert main(["certify", "--calibrator", str(cal_path), "--preds", str(tmp_path / src),
                     *extra, "--on-error", "reject", "-o", str(tmp_path / out)]) == 0
        [(_, status, region, reason, _)] = _fates(tmp_path / out)
        assert (status, region, reason) == ("rejected", None, why), src
    capsys.readouterr()


def test_the_output_format_follows_the_output_name(cal_path, tmp_path, capsys):
    _write_inputs(tmp_path, CASES[4:6])
    base = ["certify", "--calibrator", str(cal_path), "--videos",
            str(tmp_path / "videos.jsonl")]
    # A Parquet input certified into a .jsonl name: JSON lines, not Parquet bytes.
    assert main([*base, "--preds", str(tmp_path / "p.parquet"), "--columns", COLS,
                 "-o", str(tmp_path / "o.jsonl")]) == 0
    assert "calibrator was fitted on" in capsys.readouterr().err
    assert [json.loads(x)["qid"] for x in (tmp_path / "o.jsonl").read_text().splitlines()] \
        == ["plain", "c3"]
    # A name the input cannot be written as: an error naming -o, before any work.
    for src, extra, out, want in [
            ("p.jsonl", [], "o.parquet", "parquet"), ("p.csv", ["--columns", COLS],
                                                       "o.parquet", "parquet"),
            ("p.parquet", ["--columns", COLS], "o.csv", "csv"),
            ("p.jsonl", [], "o.csv", "csv"),
            ("p.parquet", ["--columns", COLS, "--in-memory"], "m.parquet", "parquet")]:
        dst = tmp_path / out
        dst.unlink(missing_ok=True)
        assert main([*base, "--preds", str(tmp_path / src), *extra, "-o", str(dst)]) == 2
        err = capsys.readouterr().err
        assert f"-o {dst}: the name asks for {want} output" in err
        assert "name the output .jsonl" in err and not dst.exists()


@pytest.mark.parametrize("kind", ["jsonl", "csv", "parquet"])
def test_an_output_named_gz_is_gzip_and_reads_back(cal_path, tmp_path, capsys, kind):
    """``-o certified.<kind>.gz`` writes the bytes of ``certified.<kind>`` gzip-compressed
    (the name said gzip; the bytes were plain), and ``cover evaluate`` reads it back as it
    reads the plain file (a Parquet name under .gz was read as JSON lines)."""
    _write_inputs(tmp_path, CASES[4:6])
    gt = tmp_path / "gt.jsonl"
    gt.write_text("".join(json.dumps({"qid": q, "vid": f"v{q}", "duration": T,
                                      "relevant_windows": [[s, e]]}) + "\n"
                          for q, s, e, _ in CASES[4:6]))
    extra = [] if kind == "jsonl" else ["--columns", COLS]
    got = {}
    for name in (f"o.{kind}", f"o.{kind}.gz"):
        assert main(["certify", "--calibrator", str(cal_path), "--preds",
                     str(tmp_path / f"p.{kind}"), *extra, "-o", str(tmp_path / name)]) == 0
        assert main(["evaluate", "--regions", str(tmp_path / name), "--gt", str(gt),
                     "--json", str(tmp_path / f"{name}.json")]) == 0
        capsys.readouterr()
        got[name] = json.loads((tmp_path / f"{name}.json").read_text())
    plain, zipped = (tmp_path / f"o.{kind}").read_bytes(), (tmp_path / f"o.{kind}.gz").read_bytes()
    assert zipped[:2] == b"\x1f\x8b" and gzip.decompress(zipped) == plain
    assert got[f"o.{kind}"] == got[f"o.{kind}.gz"]
    assert got[f"o.{kind}"]["marginal"]["n"] == 2


ROW = st.tuples(st.floats(-80, 260, allow_nan=False), st.floats(0, 120, allow_nan=False),
                st.sampled_from([T, 100.0, None]))


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(ROW, st.integers(0, 3)), min_size=1, max_size=6),
       st.integers(1, 3))
def test_random_rows_get_one_fate_on_every_path(cal_path, tmp_path, capsys, rows, batch):
    """Random rows, their qids repeating (a repeat of a row rejected for its window is
    a repeat too), streamed in batches of a few rows: one fate on every path."""
    cases = [(f"r{k}", s, s + w, t) for (s, w, t), k in rows]
    _write_inputs(tmp_path, cases)
    got = _certify_all(tmp_path, cal_path, capsys, "--on-error", "reject", "--batch-rows",
                       str(batch))
    _assert_same(_csv_lines_as_rows(got))
    _assert_one_row_api_agrees(cal_path, cases, got["jsonl streamed"][0])


def _csv_lines_as_rows(got: dict[str, tuple]) -> dict[str, tuple]:
    """``got`` with the line numbers in the CSV paths' reasons and messages made rows (a
    CSV's first row is on line 2), as the other formats number them."""
    for name in ("csv streamed", "csv whole"):
        fates, counts, messages, *rest = got[name]
        got[name] = ([(q, st_, reg, _row_lines(why), cal) for q, st_, reg, why, cal in fates],
                     counts, [_row_lines(m) for m in messages], *rest)
    return got


def _row_lines(why: str | None) -> str | None:
    """A CSV reason's line numbers as rows (its header is line 1)."""
    return None if why is None else re.sub(r"line (\d+)", lambda m: f"line {int(m[1]) - 1}",
                                           why)


@pytest.mark.parametrize("max_p", [None, 0.3])
def test_p_values_and_max_p_are_the_same_on_every_path(cal_scores_path, tmp_path, capsys,
                                                       max_p):
    # A calibrator fitted with --keep-scores: every format writes each row's p-value
    # (Parquet: cover.p_value, CSV: cover_p_value after the other cover columns), and
    # --max-p streams every format, abstaining on the same rows with the same reason.
    wide = [("wide", 1.0, 149.0, T)]
    _write_inputs(tmp_path, CASES + wide)
    flags = ["--on-error", "reject", *(["--max-p", str(max_p)] if max_p else [])]
    results = _certify_all(tmp_path, cal_scores_path, capsys, *flags)
    _assert_same(results)
    fates, counts, _, _, p_values = results["parquet streamed"]
    p_of = dict(zip([f[0] for f in fates], p_values, strict=True))
    assert p_of["wholly_after"] is None and p_of["refusal"] == 1.0
    assert p_of["wide"] > 0.3 >= p_of["plain"] > 0
    header = (tmp_path / "csv_streamed_o.csv").read_text().splitlines()[0]
    assert header.endswith(",cover_in_calibration,cover_reason,cover_p_value")
    status = {q: (st_, reason) for q, st_, _, reason, _ in fates}
    if max_p is None:
        assert status["wide"] == ("certified", None) and counts[2] is None
    else:
        assert status["wide"] == ("abstained", "abstained: p-value 0.9672 is above --max-p "
                                  "0.3 (the region is the whole video at alpha 0.3)")
        assert counts[2] == "1"  # the summary counts it, on every path


def test_max_p_without_kept_scores_is_an_error_on_every_path(cal_path, tmp_path, capsys):
    _write_inputs(tmp_path, CASES[4:5])
    for name, kind, extra, out in PATHS:
        dst = tmp_path / f"x_{out}"
        assert main(["certify", "--calibrator", str(cal_path), "--preds",
                     str(tmp_path / f"p.{kind}"), *extra, "--max-p", "0.5",
                     "-o", str(dst)]) == 2, name
        assert (f"--max-p needs per-row p-values, and {cal_path} kept no calibration scores"
                in capsys.readouterr().err) and not dst.exists(), name


def test_a_row_without_a_vid_gets_one_fate_on_every_format(cal_path, tmp_path, capsys):
    # A null (or absent) vid is a missing field on every format that can hold one:
    # JSON lines (read as Moment-DETR or through --columns) and Parquet, streamed or
    # whole. (Read through --columns, JSON lines once took it as the video "None".)
    # A CSV cell cannot tell a missing vid from an empty one: "vid is an empty string",
    # as JSON lines say of "vid": "".
    rows = [("a", None, T), ("b", "vb", T), ("c", None, None)]
    with (tmp_path / "p.jsonl").open("w") as fh:
        for q, v, t in rows:
            fh.write(json.dumps({"qid": q, **({"vid": v} if v else {}),
                                 **({"duration": t} if t else {}),
                                 "pred_relevant_windows": [[1.0, 20.0, 0.9]]}) + "\n")
    pq.write_table(pa.table({"qid": [r[0] for r in rows], "vid": [r[1] for r in rows],
                             "duration": pa.array([r[2] for r in rows], pa.float64()),
                             "windows": [[[1.0, 20.0, 0.9]]] * 3}), tmp_path / "p.parquet")
    cols = "qid=qid,vid=vid,duration=duration,windows=pred_relevant_windows"
    results = {}
    for src, extra, out in [("p.jsonl", [], "o.jsonl"), ("p.jsonl", ["--in-memory"], "m.jsonl"),
                            ("p.jsonl", ["--columns", cols], "c.jsonl"),
                            ("p.parquet", ["--columns", cols.replace("pred_relevant_", "")],
                             "o.parquet"),
                            ("p.parquet", ["--columns", cols.replace("pred_relevant_", ""),
                                           "--in-memory"], "p.jsonl")]:
        assert main(["certify", "--calibrator", str(cal_path), "--preds", str(tmp_path / src),
                     *extra, "--on-error", "reject", "-o", str(tmp_path / f"x{out}")]) == 0
        err = capsys.readouterr().err
        results[out] = (_fates(tmp_path / f"x{out}"),
                        _messages(err, str(tmp_path / src), csv_file=False))
    first = results["o.jsonl"]
    assert all(got == first for got in results.values()), results
    assert [f[1:4] for f in first[0]] == [
        ("rejected", None, "missing field(s): vid"), ("certified", [[0.0, 36.48266195198572]],
                                                      None),
        ("rejected", None, "missing field(s): vid")]


def test_a_row_without_a_qid_names_no_qid_on_every_format(cal_path, tmp_path, capsys):
    # A null qid is a missing field, and its message names the line only, on every
    # format: Parquet once said "(qid=nan)" (integers) and the mapped readers
    # "(qid=None)", where JSON lines name no qid.
    rows = [(2, "vb"), (None, "va")]  # a first row without a qid is no known format
    with (tmp_path / "p.jsonl").open("w") as fh:
        for q, v in rows:
            fh.write(json.dumps({**({"qid": q} if q is not None else {}), "vid": v,
                                 "duration": T, "pred_relevant_windows": [[1.0, 20.0, 0.9]]})
                     + "\n")
    for name, qids in (("int.parquet", pa.array([r[0] for r in rows], pa.int64())),
                       ("text.parquet", pa.array(["2", None], pa.string()))):
        pq.write_table(pa.table({"qid": qids, "vid": [r[1] for r in rows],
                                 "duration": [T, T], "windows": [[[1.0, 20.0, 0.9]]] * 2}),
                       tmp_path / name)
    cols = "qid=qid,vid=vid,duration=duration,windows=pred_relevant_windows"
    results = {}
    for src, extra in [("p.jsonl", []), ("p.jsonl", ["--columns", cols]),
                       ("int.parquet", ["--columns", cols.replace("pred_relevant_", "")]),
                       ("text.parquet", ["--columns", cols.replace("pred_relevant_", "")]),
                       ("int.parquet", ["--columns", cols.replace("pred_relevant_", ""),
                                        "--in-memory"])]:
        kind = ".jsonl" if "--in-memory" in extra else Path(src).suffix
        out = tmp_path / f"x{len(results)}{kind}"
        assert main(["certify", "--calibrator", str(cal_path), "--preds", str(tmp_path / src),
                     *extra, "--on-error", "reject", "-o", str(out)]) == 0
        results[(src, *extra)] = _messages(capsys.readouterr().err, str(tmp_path / src),
                                           csv_file=False)
    first = next(iter(results.values()))
    assert all(got == first for got in results.values()), results
    assert "  FILE:2: missing field(s): qid" in first


def _without_vid_on_every_path(d: Path, cal_path: Path, capsys: pytest.CaptureFixture[str],
                               videos: Path, said: str | None = None) -> tuple:
    """The rows of ``d`` read by a mapping naming no vid, certified with ``videos`` on
    every path: the one result every path gives (the fates, the messages); ``said``: a
    line each run's standard error holds."""
    cols = COLS.replace("vid=vid,", "")
    results = {}
    for name, kind, extra, out in PATHS:
        extra = [cols if x == COLS else x for x in extra]
        if kind == "jsonl":
            extra = [*extra, "--columns", "qid=qid,duration=duration,"
                     "windows=pred_relevant_windows"]
        dst = d / f"{name.replace(' ', '_')}_{out}"
        assert main(["certify", "--calibrator", str(cal_path), "--preds",
                     str(d / f"p.{kind}"), "--videos", str(videos), *extra,
                     "--on-error", "reject", "-o", str(dst)]) == 0, name
        err = capsys.readouterr().err
        assert said is None or f"p.{kind}: {said}" in err, name
        results[name] = ([f[:4] for f in _fates(dst)],
                         _messages(err, str(d / f"p.{kind}"), kind == "csv"))
    first = results["jsonl streamed"]
    assert all(got == first for got in results.values()), results
    return first


def test_a_mapping_that_names_no_vid_gets_one_fate_on_every_format(cal_path, tmp_path,
                                                                     capsys):
    # No vid column mapped: each row's vid is its qid on every format, streamed or whole,
    # so --videos durations are looked up by it alike.
    _write_inputs(tmp_path, [("plain", 10.0, 20.0, T), ("no_duration", 5.0, 25.0, None)])
    (tmp_path / "videos.jsonl").write_text(json.dumps({"vid": "plain", "duration": T}) + "\n")
    first = _without_vid_on_every_path(tmp_path, cal_path, capsys,
                                       tmp_path / "videos.jsonl")
    assert first[0][0][:2] == ("plain", "certified")
    assert first[0][1][1:] == ("rejected", None, "no duration known for video 'no_duration' "
                               f"(not in the row, not in {tmp_path / 'videos.jsonl'})")


def test_rows_naming_no_vid_find_their_duration_by_qid_in_a_ground_truth_on_every_format(
        cal_path, tmp_path, capsys):
    """--videos a ground truth and a mapping naming no vid (DisTime's QVHighlights list):
    each row's duration is its query's there, by qid, on every format and path; a row
    whose qid the ground truth lacks still has none. It was rejected on every path (its
    vid, its qid, is no video of the ground truth)."""
    _write_inputs(tmp_path, [("plain", 10.0, 20.0, None), ("c3", 100.0, 118.0, None),
                             ("no_duration", 5.0, 25.0, None)])
    gt = tmp_path / "gt.jsonl"
    gt.write_text("".join(json.dumps({"qid": q, "query": "a person", "vid": v, "duration": t,
                                      "relevant_windows": [[0, 10]]}) + "\n"
                          for q, v, t in [("plain", "video_a", T), ("c3", "video_b", 120.0)]))
    first = _without_vid_on_every_path(
        tmp_path, cal_path, capsys, gt,
        said="the rows name no vid; each row's duration is its query's in "
             f"{gt} (moment-detr-gt, by qid)")
    fates = {f[0]: f for f in first[0]}
    assert fates["plain"][1] == fates["c3"][1] == "certified"
    assert fates["c3"][2][-1][1] == 120.0  # the ground truth's T of its query, not 150 s
    assert fates["no_duration"][1:] == ("rejected", None, "no duration known for query "
                                        f"'no_duration' (not in the row, not in {gt})")


@pytest.mark.parametrize("path", PATHS, ids=[p[0] for p in PATHS])
def test_a_repeated_qid_names_its_first_line_on_every_path(cal_path, tmp_path, capsys, path):
    # One row a batch: the repeat is found across batches wherever the path checks it.
    _, kind, extra, out = path
    _write_inputs(tmp_path, [("q1", 10.0, 20.0, T), ("q2", 10.0, 20.0, T),
                             ("q1", 30.0, 40.0, T)])
    dst = tmp_path / out
    assert main(["certify", "--calibrator", str(cal_path), "--preds",
                 str(tmp_path / f"p.{kind}"), *extra, "--batch-rows", "1",
                 "--on-error", "reject", "-o", str(dst)]) == 0
    capsys.readouterr()
    first = 2 if kind == "csv" else 1  # a CSV file's header is its line 1
    assert [f[1:4] for f in _fates(dst)][2] == (
        "rejected", None, f"duplicate qid (first seen on line {first})")


def _jsonl_fates(cal_path: Path, src: Path, extra: list[str], out: Path,
                 capsys: pytest.CaptureFixture[str]) -> tuple[list[object], list[str]]:
    """Each output row's qid and cover block, and the problem lines printed."""
    assert main(["certify", "--calibrator", str(cal_path), "--preds", str(src),
                 "--on-error", "reject", *extra, "-o", str(out)]) == 0
    err = capsys.readouterr().err
    rows = [json.loads(ln) for ln in out.read_text().splitlines()]
    return ([(r.get("qid"), r["cover"]) for r in rows],
            [ln for ln in err.splitlines()
             if str(src) in ln and not re.search(r": moment-detr \(\d+ rows\)$", ln)])


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["plain", "bad_std", "outside"]), min_size=1, max_size=7),
       st.integers(1, 4))
def test_a_repeated_qid_gets_one_fate_whatever_the_batch_size(cal_path, tmp_path, capsys,
                                                              kinds, batch):
    """A qid on several lines, some rejected for their numbers: a row rejected for its
    numbers still holds its qid, and every repeat names the qid's first line, streamed
    in any batch size as read whole (the duplicate rule comes before the number rules)."""
    row = {"qid": "q1", "vid": "v", "duration": T, "pred_relevant_windows": [[10, 20, 0.9]]}
    variant = {"plain": {}, "bad_std": {"start_std": 1.0, "end_std": -1.0},
               "outside": {"pred_relevant_windows": [[500, 600, 0.9]]}}
    lines = [json.dumps({**row, **variant[k]}) for k in kinds]
    lines += [json.dumps({**row, "qid": f"p{i}"}) for i in range(3)]
    src = tmp_path / f"p{batch}.jsonl"
    src.write_text("\n".join(lines) + "\n")
    streamed = _jsonl_fates(cal_path, src, ["--batch-rows", str(batch)], tmp_path / "s.jsonl",
                            capsys)
    whole = _jsonl_fates(cal_path, src, ["--in-memory"], tmp_path / "w.jsonl", capsys)
    assert streamed == whole
    reasons = [c.get("reason") for q, c in whole[0] if q == "q1"]
    assert reasons[1:] == ["duplicate qid (first seen on line 1)"] * (len(kinds) - 1)


@pytest.mark.parametrize("wrap", ["gzip", "bom"])
def test_a_json_array_is_read_whole_however_its_bytes_are_wrapped(cal_path, tmp_path, capsys,
                                                                  wrap):
    """A gzipped or byte-order-marked JSON array is an array (read whole), as a plain one
    is: its first bytes are read through the readers' opener."""
    import gzip

    rows = [{"qid": f"p{i}", "vid": "v", "duration": T, "pred_relevant_windows": [[10, 20, 0.9]]}
            for i in range(3)]
    data = json.dumps(rows).encode()
    src = tmp_path / ("p.json.gz" if wrap == "gzip" else "p.json")
    src.write_bytes(gzip.compress(data) if wrap == "gzip" else b"\xef\xbb\xbf" + data)
    got, printed = _jsonl_fates(cal_path, src, [], tmp_path / "o.jsonl", capsys)
    assert [c["status"] for _, c in got] == ["certified"] * 3 and printed == []


@pytest.mark.parametrize("batch", ["1", "2", "100"])
def test_an_id_that_is_no_id_is_named_first_on_every_table_path(cal_path, tmp_path, capsys,
                                                                 batch):
    """A space-padded qid on a row whose window is also bad: the id rule comes first,
    streamed in any batch size as read whole, with or without a null elsewhere in the
    column (the reader judges text ids itself, not only when a null makes it look)."""
    for qids in ([" 4", "1", " 4"], [" 4", "1", None]):
        src = tmp_path / "p.parquet"
        pq.write_table(pa.table({
            "qid": qids, "vid": ["v"] * 3, "duration": [T] * 3,
            "start": [float("nan"), 10.0, 10.0], "end": [20.0, 20.0, 20.0]}), src)
        fates = {}
        for name, extra, out in (("streamed", ["--batch-rows", batch], "o.parquet"),
                                 ("whole", ["--in-memory"], "o.jsonl")):
            dst = tmp_path / out
            dst.unlink(missing_ok=True)
            assert main(["certify", "--calibrator", str(cal_path), "--preds", str(src),
                         "--columns", COLS, "--on-error", "reject", *extra, "-o",
                         str(dst)]) == 0
            capsys.readouterr()
            fates[name] = [(f[1], f[3]) for f in _fates(dst)]
        assert fates["streamed"] == fates["whole"]
        assert fates["whole"][0] == ("rejected", 'qid " 4" has leading or trailing spaces')


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(ROW, st.integers(0, 3)), min_size=1, max_size=7),
       st.integers(1, 3))
def test_on_error_raise_names_the_same_rows_on_every_path(cal_path, tmp_path, capsys, rows,
                                                          batch):
    """Under --on-error raise a stream reads every batch before it stops: the count of
    bad rows and the first ones named (in line order) are the whole read's, on every
    format and whatever the batch size; nothing is written. A stream used to stop at
    its first bad batch, naming only that batch's rows."""
    cases = [(f"r{k}", s, s + w, t) for (s, w, t), k in rows]
    _write_inputs(tmp_path, cases)
    said = {}
    for name, kind, extra, out in PATHS:
        src, dst = tmp_path / f"p.{kind}", tmp_path / f"raise_{out}"
        dst.unlink(missing_ok=True)
        rc = main(["certify", "--calibrator", str(cal_path), "--preds", str(src),
                   "--videos", str(tmp_path / "videos.jsonl"), *extra, "--on-error", "raise",
                   "--batch-rows", str(batch), "-o", str(dst)])
        err = capsys.readouterr().err
        assert dst.exists() == (rc == 0), name
        said[name] = (rc, [_row_lines(m) if kind == "csv" else m
                           for m in _messages(err, str(src), kind == "csv")])
    first = said["jsonl whole"]
    assert all(got == first for got in said.values()), said


def test_rows_without_a_duration_say_to_pass_videos_on_every_path(cal_path, tmp_path,
                                                                 capsys):
    """Without --videos, rows with no duration stop every path under --on-error raise
    with the same rows named and what to pass (the hint was the whole read's alone)."""
    _write_inputs(tmp_path, [("a", 10.0, 20.0, None), ("b", 10.0, 20.0, T),
                             ("c", 5.0, 9.0, None)])
    said = {}
    for name, kind, extra, out in PATHS:
        src, dst = tmp_path / f"p.{kind}", tmp_path / f"nd_{out}"
        rc = main(["certify", "--calibrator", str(cal_path), "--preds", str(src), *extra,
                   "-o", str(dst)])
        err = capsys.readouterr().err
        assert rc == 2 and not dst.exists(), name
        said[name] = [_row_lines(m) if kind == "csv" else m
                      for m in _messages(err, str(src), kind == "csv")]
    first = said["jsonl streamed"]
    assert any(m.startswith("Rows without a duration: pass --videos FILE") for m in first)
    assert "  FILE:3 (qid=c): no duration known for video 'vc' (not in the row, not in " \
           "--videos (not given))" in first
    assert all(got == first for got in said.values()), said


def test_csv_rows_after_a_blank_line_keep_their_line_on_every_path(cal_path, tmp_path, capsys):
    """A clean CSV read whole numbered its rows as if it had no blank line (a row on line
    5 was named line 4), where the stream counted the lines: now both read the lines."""
    _write_inputs(tmp_path, CASES)
    text = (tmp_path / "p.csv").read_text().splitlines()
    (tmp_path / "p.csv").write_text("\n".join([text[0], "", *text[1:], ""]) + "\n")
    got = _certify_all(tmp_path, cal_path, capsys, "--on-error", "reject")
    _assert_same({k: v for k, v in got.items() if k.startswith("csv")})
    # the first data row is on line 3 (FILE:2 once the header's line is taken off)
    assert any("FILE:2" in m and "wholly_after" in m for m in got["csv whole"][2]), got


def test_a_truncated_gzip_input_is_named_on_every_path(cal_path, tmp_path, capsys):
    """A gzip file cut short is an error naming it (not a traceback), streamed or read
    whole, certified or calibrated."""
    _write_inputs(tmp_path, CASES)
    gt = tmp_path / "gt.jsonl"
    gt.write_text("".join(json.dumps({"qid": q, "vid": f"v{q}", "duration": T,
                                      "relevant_windows": [[1.0, 9.0]]}) + "\n"
                          for q, *_ in CASES))
    for kind in ("jsonl", "csv"):
        data = gzip.compress((tmp_path / f"p.{kind}").read_bytes() * 50)
        (tmp_path / f"cut.{kind}").write_bytes(data[: len(data) // 2])
    runs = [["certify", "--calibrator", str(cal_path), "--preds", str(tmp_path / "cut.jsonl")],
            ["certify", "--calibrator", str(cal_path), "--preds", str(tmp_path / "cut.csv"),
             "--columns", COLS],
            ["calibrate", "--preds", str(tmp_path / "cut.jsonl"), "--gt", str(gt)],
            ["calibrate", "--preds", str(tmp_path / "cut.csv"), "--columns", COLS, "--gt",
             str(gt)]]
    for args in runs:
        for extra in ([], ["--in-memory"]):
            rc = main([*args, *extra, "-o", str(tmp_path / ("o.json" if args[0] == "calibrate"
                                                            else "o.jsonl"))])
            err = capsys.readouterr().err
            assert rc != 0 and "damaged or truncated gzip file" in err, (args, extra, err)
            assert args[args.index("--preds") + 1] in err and "Traceback" not in err, err


def test_a_csv_with_a_header_and_no_row_is_certified_alike_on_every_path(cal_path, tmp_path,
                                                                         capsys):
    """Read whole, a CSV holding only its header was a pyarrow parse error (a header with
    no newline after it); now both CSV paths certify its no rows and say no region was
    written (the mean of no length was printed as nan)."""
    src = tmp_path / "p.csv"
    src.write_text("qid,vid,duration,start,end\n\n")
    said = []
    for out in ("o.csv", "o.jsonl"):
        assert main(["certify", "--calibrator", str(cal_path), "--preds", str(src),
                     "--columns", COLS, "-o", str(tmp_path / out)]) == 0
        said.append(capsys.readouterr().out.splitlines()[0])
    assert all(s.startswith("certified 0, refused (whole video) 0, rejected 0 of 0 input rows")
               and s.endswith("; no region written") for s in said), said


def test_the_calibration_row_warning_counts_only_rows_given_a_region(
        qdetr_preds, qvh_gt, qdetr_columns, tmp_path, capsys):
    """SLS certifying the rows it was fitted on leaves some regions empty (rejected): the
    warning counts the marked rows among those given a region, never more than them
    (it said "1550 of the 1527 rows certified"), alike on every path."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    cal = tmp_path / "cal.json"
    assert main(["calibrate", "--preds", str(qdetr_preds), "--gt", str(qvh_gt), "--score",
                 "sls", "--alpha", "0.1", "-o", str(cal)]) == 0
    capsys.readouterr()
    parquet = tmp_path / "p.parquet"
    pq.write_table(pa.table(qdetr_columns), parquet)
    cols = ("qid=qid,vid=vid,duration=duration,windows=pred_relevant_windows,"
            "saliency=pred_saliency_scores")
    said = set()
    for src, extra, out in [(qdetr_preds, [], "o.jsonl"),
                            (qdetr_preds, ["--in-memory"], "w.jsonl"),
                            (parquet, ["--columns", cols], "o.parquet"),
                            (parquet, ["--columns", cols, "--in-memory"], "p.jsonl")]:
        assert main(["certify", "--calibrator", str(cal), "--preds", str(src), *extra,
                     "--videos", str(qvh_gt), "-o", str(tmp_path / out)]) == 0
        cap = capsys.readouterr()
        n = re.search(r"certified (\d+), refused \(whole video\) (\d+), rejected (\d+) ",
                      cap.out)
        assert n is not None, cap.out
        given, rejected = int(n[1]) + int(n[2]), int(n[3])
        assert rejected > 0  # the case: empty SLS regions among the calibration rows
        assert f"warning: {given} of the {given} rows certified are rows the calibrator " \
            "was fitted on" in cap.err, cap.err
        said.add(cap.err.split("warning: ")[1].split(" rows certified")[0])
    assert len(said) == 1


#: Every path of certify on p.jsonl / p.parquet / p.csv with COLS, and its output name.
PATHS_ALL = [("p.jsonl", [], "o.jsonl"), ("p.jsonl", ["--in-memory"], "w.jsonl"),
             ("p.parquet", ["--columns", COLS], "o.parquet"),
             ("p.parquet", ["--columns", COLS, "--in-memory"], "m.jsonl"),
             ("p.csv", ["--columns", COLS], "o.csv"),
             ("p.csv", ["--columns", COLS, "--in-memory"], "c.jsonl")]


def test_one_id_of_a_million_characters_is_rejected_alike_and_costs_no_more(
        cal_path, tmp_path, capsys):
    """Ids are fixed-width text columns: one qid of a million characters made every row
    of its batch a million wide (61 GB for a batch of 16,384 rows; a MemoryError
    traceback, or the process killed for memory). It is now rejected, named by its start,
    on every path, and the other rows are certified as before."""
    n, long_qid = 300, "q" * 1_000_000
    qids = [f"c{i}" for i in range(n)]
    qids[5] = long_qid
    rows = [{"qid": q, "vid": "va", "duration": T, "pred_relevant_windows": [[1, 2, 0.9]]}
            for q in qids]
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pq.write_table(pa.table({"qid": qids, "vid": ["va"] * n, "duration": [T] * n,
                             "start": [1.0] * n, "end": [2.0] * n}), tmp_path / "p.parquet")
    (tmp_path / "p.csv").write_text("qid,vid,duration,start,end\n" + "".join(
        f"{q},va,150,1,2\n" for q in qids))
    shown = f"{'q' * 40}... (1,000,000 characters)"
    why = "qid is 1,000,000 characters long; an id holds at most 1,024"
    for src, extra, out in PATHS_ALL:
        assert main(["certify", "--calibrator", str(cal_path), "--preds", str(tmp_path / src),
                     *extra, "--batch-rows", "64", "--on-error", "reject",
                     "-o", str(tmp_path / out)]) == 0, src
        cap = capsys.readouterr()
        assert f"certified {n - 1}, refused (whole video) 0, rejected 1 of {n}" in cap.out
        assert f":{7 if src == 'p.csv' else 6} (qid={shown}): {why}" in cap.err, (src, cap.err)
        old = csv.field_size_limit(2_000_000)  # the CSV echo holds the long qid as given
        try:
            fates = _fates(tmp_path / out)
        finally:
            csv.field_size_limit(old)
        assert [f[1] for f in fates].count("rejected") == 1, src


def test_a_parquet_of_dictionary_columns_certifies_as_its_plain_copy(cal_path, tmp_path,
                                                                     capsys):
    """pandas writes a categorical column to Parquet as an Arrow dictionary: streamed
    certify stopped with a TypeError traceback in its repeat check (read whole, it
    worked). Both paths now give every row the fate of the plain copy: a repeated qid,
    an id too long to be one, and the rest."""
    n = 40
    qids = [f"c{i}" for i in range(n)]
    qids[7], qids[9] = qids[3], "q" * 2000
    cols = {"vid": ["va"] * n, "duration": [T] * n, "start": [1.0] * n, "end": [2.0] * n}
    pq.write_table(pa.table({"qid": qids, **cols}), tmp_path / "plain.parquet")
    pq.write_table(pa.table({"qid": pa.array(qids).dictionary_encode(),
                             "vid": pa.array(cols["vid"]).dictionary_encode(),
                             **{k: v for k, v in cols.items() if k != "vid"}}),
                   tmp_path / "dict.parquet")
    assert pa.types.is_dictionary(pq.read_schema(tmp_path / "dict.parquet").field("qid").type)
    got = {}
    for name in ("plain", "dict"):
        for extra, out in (([], "o.parquet"), (["--in-memory"], "m.jsonl")):
            dst = tmp_path / f"{name}_{out}"
            assert main(["certify", "--calibrator", str(cal_path), "--preds",
                         str(tmp_path / f"{name}.parquet"), "--columns", COLS, *extra,
                         "--on-error", "reject", "-o", str(dst)]) == 0
            got[name, out] = (_fates(dst),
                              capsys.readouterr().err.replace(f"{name}.parquet", "P"))
    for out in ("o.parquet", "m.jsonl"):
        assert got["dict", out] == got["plain", out]
    fates = got["plain", "o.parquet"][0]
    assert [f[1] for f in fates].count("rejected") == 2
