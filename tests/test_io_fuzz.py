"""Fuzzing every reader: random bytes, random JSON in every field, random truncation.

A reader returns a table plus problems or raises :class:`InputError`, never any other
exception, and every non-blank input line ends kept or rejected (for certify: certified,
refused or rejected, one output line per input row).
"""

from __future__ import annotations

import gzip
import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_files import synthetic
from cover.cli import main
from cover.errors import InputError
from cover.io.jsonl import read_json_rows
from cover.io.qids import read_qid_lines
from cover.io.qvhighlights import read_durations, read_ground_truth, read_predictions
from cover.io.regions_jsonl import read_regions

FUZZ = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10**30), max_value=10**30)
    | st.sampled_from([10**400, 2579.0, -0.0, 1e308]) | st.floats()
    | st.text(max_size=6) | st.sampled_from(["12.5", " 3", "", "inf", "NaN"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=12)

PRED = {"qid": 7, "vid": "v_0.0_150.0", "query": "a person", "duration": 150,
        "pred_relevant_windows": [[10.0, 30.0, 0.9], [40, 50, 0.2]],
        "pred_saliency_scores": [0.1, -0.3, 0.5], "start_std": 1.0, "end_std": 2.0}
GT = {"qid": 7, "vid": "v_0.0_150.0", "query": "a person", "duration": 150,
      "relevant_windows": [[12, 28], [60, 62]]}
REGION = {"qid": 7, "vid": "v_0.0_150.0", "pred_relevant_windows": [[10.0, 30.0, 0.9]],
          "cover": {"status": "certified", "region": [[5.0, 35.0]], "refused": False,
                    "duration": 150, "score": "norm", "rule": "split", "alpha": 0.1,
                    "k": 9, "n_calibration": 9, "threshold": 0.25}}


#: Every file the fuzz writes, in one folder removed when the test process ends (a folder
#: a file was left in /tmp by every example).
_SCRATCH = tempfile.TemporaryDirectory(prefix="cover-fuzz-")


def _file(data: bytes, name: str = "f.jsonl") -> Path:
    path = Path(tempfile.mkdtemp(dir=_SCRATCH.name)) / name
    path.write_bytes(data)
    return path


def _nonblank(data: bytes) -> int:
    return sum(1 for ln in data.split(b"\n") if ln.strip())


@st.composite
def mutated_rows(draw: st.DrawFn, template: dict[str, Any]) -> list[dict[str, Any]]:
    """Copies of ``template`` with random JSON in random fields (nested ``cover`` too)."""
    rows = []
    for i in range(draw(st.integers(1, 6))):
        row = json.loads(json.dumps(template)) | {"qid": i}
        for key in draw(st.lists(st.sampled_from(sorted(row)), max_size=3)):
            if key == "cover" and isinstance(row["cover"], dict) and row["cover"] \
                    and draw(st.booleans()):
                for sub in draw(st.lists(st.sampled_from(sorted(row["cover"])), max_size=4)):
                    row["cover"][sub] = draw(json_values)
            else:
                row[key] = draw(json_values)
        if draw(st.booleans()):
            row.pop(draw(st.sampled_from(sorted(row))))
        rows.append(row)
    return rows


def _lines(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)  # NaN/Infinity as Python writes


READERS: dict[str, tuple[Callable[[Path], Any], dict[str, Any]]] = {
    "predictions": (lambda p: read_predictions(p, on_error="reject"), PRED),
    "ground truth": (lambda p: read_ground_truth(p, on_error="reject"), GT),
    "regions": (lambda p: read_regions(p, on_error="reject"), REGION),
}


def _accounted(kind: str, got: Any, data: bytes) -> None:
    """Every non-blank line kept or rejected, and every rejection has a reason."""
    rejected = [p for p in got.problems if p.action == "rejected"]
    if kind == "regions":
        assert len(got.table) + got.rejected_at_certify + len(rejected) == _nonblank(data)
    else:
        assert len(got.table) + len(got.rejected) == _nonblank(data)
        assert set(got.rejected) == {p.key for p in rejected}  # one record per row
    assert all(p.problem and "np.str_" not in str(p) for p in got.problems)


def _read(kind: str, data: bytes, name: str = "f.jsonl") -> Any:
    """The reader's result (None after an :class:`InputError`), checked for accounting."""
    reader, _ = READERS[kind]
    try:
        got = reader(_file(data, name))
    except InputError as exc:
        assert str(exc) and "Traceback" not in str(exc)
        return None
    text = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
    if text.lstrip()[:1] != b"[":  # a JSON array numbers entries, not lines
        _accounted(kind, got, text.removeprefix(b"\xef\xbb\xbf"))
    return got


@pytest.mark.parametrize("kind", list(READERS))
@FUZZ
@given(data=st.data())
def test_random_json_in_every_field(kind, data):
    rows = data.draw(mutated_rows(READERS[kind][1]))
    _read(kind, _lines(rows))


SPECIAL = [None, True, False, "12.5", "", " 3", 10**400, -(10**400), math.nan, math.inf,
           -math.inf, 2579.0, -1, 0, [], {}, [[1]], [[1, 2, 3, 4]], [None], {"a": [math.nan]}]


def _paths(template: dict[str, Any]) -> list[tuple[str, ...]]:
    out = [(k,) for k in template]
    out += [("cover", k) for k in template.get("cover", {})]
    return out


@pytest.mark.parametrize("kind", list(READERS))
def test_special_values_in_every_field(kind):
    """Every field (nested ones too) holding each awkward JSON value in turn, with a good
    row before it: the file is accounted for and the good row kept (a calibrator field
    that differs between rows is a whole-file error for regions)."""
    template = READERS[kind][1]
    for path in _paths(template):
        for value in SPECIAL:
            bad = json.loads(json.dumps(template)) | {"qid": 2}
            target = bad
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = value
            good = json.loads(json.dumps(template)) | {"qid": 1}
            got = _read(kind, _lines([good, bad]))
            assert got is not None or path[0] == "cover", (path, value)
            assert got is None or "1" in got.table.qid.tolist(), (path, value)


@pytest.mark.parametrize("kind", list(READERS))
@FUZZ
@given(data=st.data())
def test_random_truncation(kind, data):
    rows = data.draw(mutated_rows(READERS[kind][1]))
    raw = _lines(rows)
    cut = data.draw(st.integers(0, len(raw)))
    packed = data.draw(st.booleans())
    _read(kind, gzip.compress(raw[:cut]) if packed else raw[:cut])
    if packed:
        whole = gzip.compress(raw)
        _read(kind, whole[: data.draw(st.integers(0, len(whole)))])


@pytest.mark.parametrize("kind", list(READERS))
@FUZZ
@given(blob=st.binary(max_size=400) | st.binary(max_size=200).map(lambda b: b"\x1f\x8b" + b),
       noise=st.lists(st.binary(min_size=1, max_size=30), max_size=4))
def test_random_bytes(kind, blob, noise):
    _read(kind, blob)
    _read(kind, _lines([READERS[kind][1]]) + b"\n".join(noise))


@FUZZ
@given(blob=st.binary(max_size=300))
def test_other_readers_on_random_bytes(blob):
    for reader in (read_json_rows, read_qid_lines, read_durations):
        try:
            reader(_file(blob))
        except InputError:
            pass


@FUZZ
@given(rows=mutated_rows({"vid": "v1", "duration": 150}))
def test_durations_on_random_fields(rows):
    try:
        vids, durs = read_durations(_file(_lines(rows)))
    except InputError:
        return
    assert len(vids) == len(durs) and all(math.isfinite(d) and d > 0 for d in durs)


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("cal")
    preds, gt = synthetic(folder)
    cal = folder / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "--score", "sls",
                 "-o", str(cal)]) == 0
    return cal, gt


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=mutated_rows(PRED | {"vid": "v0_0.0_150.0"}), cut=st.integers(0, 10**6),
       noise=st.lists(st.binary(min_size=1, max_size=20), max_size=2))
def test_certify_accounts_for_every_row(calibrated, rows, cut, noise, capsys):
    cal, gt = calibrated
    raw = _lines(rows)
    raw = raw[: cut % (len(raw) + 1)] + b"\n".join(noise)
    preds = _file(raw, "p.jsonl")
    out = preds.with_name("out.jsonl")
    code = main(["certify", "--calibrator", str(cal), "--preds", str(preds), "--videos",
                 str(gt), "-o", str(out), "--on-error", "reject"])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if code != 0:  # an error about the whole file (empty, unrecognised): named, no output
        assert code == 2 and "cover: error:" in err and not out.exists()
        return
    text = out.read_text()
    got = [json.loads(x, parse_constant=lambda c: pytest.fail(c)) for x in text.splitlines()]
    status = [r["cover"]["status"] for r in got]
    assert len(got) == _nonblank(raw)  # rows in == certified + refused + rejected
    assert set(status) <= {"certified", "refused", "rejected"}
