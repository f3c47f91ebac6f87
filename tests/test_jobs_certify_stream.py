"""``--relevance-from`` through calibrate, certify and evaluate: the calibrator's recorded
source is applied on every certify path, and a flag that contradicts it is an error
naming the flag and the file, before anything is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cover.cli import main

N = 80


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Moment-DETR predictions with three scored windows and a noise saliency a row, their
    ground truth, and the two halves of the qids."""
    d = tmp_path_factory.mktemp("rel")
    rng = np.random.default_rng(5)
    preds, gt = [], []
    for q in range(N):
        t = float(rng.choice([30.0, 60.0, 90.0]))
        s = float(rng.uniform(0, t - 12))
        e = s + float(rng.uniform(4, 10))
        ps, pe = max(s + rng.normal(0, 2), 0.0), min(e + rng.normal(0, 2), t)
        o = float(rng.uniform(0, t - 6))
        windows = [[round(ps, 2), round(max(pe, ps + 1), 2), 0.9],
                   [round(max(ps - 8, 0), 2), round(ps, 2), 0.5],
                   [round(o, 2), round(o + 5, 2), round(float(rng.uniform(0.1, 0.4)), 3)]]
        sal = [round(float(x), 3) for x in rng.normal(size=int(np.ceil(t / 2)))]
        preds.append({"qid": q, "vid": f"v{q // 2}", "duration": t,
                      "pred_relevant_windows": windows, "pred_saliency_scores": sal})
        gt.append({"qid": q, "vid": f"v{q // 2}", "duration": t, "query": "q",
                   "relevant_windows": [[round(s, 2), round(e, 2)]]})
    out = {"preds": d / "preds.jsonl", "gt": d / "gt.jsonl", "cal_q": d / "cal.txt",
           "test_q": d / "test.txt"}
    out["preds"].write_text("".join(json.dumps(r) + "\n" for r in preds))
    out["gt"].write_text("".join(json.dumps(r) + "\n" for r in gt))
    out["cal_q"].write_text("".join(f"{q}\n" for q in range(0, N, 2)))
    out["test_q"].write_text("".join(f"{q}\n" for q in range(1, N, 2)))
    for name, extra in (("cal_prop", ["--relevance-from", "proposals"]), ("cal_sal", [])):
        out[name] = d / f"{name}.json"
        assert main(["calibrate", "--preds", str(out["preds"]), "--gt", str(out["gt"]),
                     "--qids", str(out["cal_q"]), "--score", "sls", "--alpha", "0.3",
                     "-o", str(out[name]), *extra]) == 0
    out["cal_norm"] = d / "cal_norm.json"
    assert main(["calibrate", "--preds", str(out["preds"]), "--gt", str(out["gt"]),
                 "--qids", str(out["cal_q"]), "-o", str(out["cal_norm"])]) == 0
    return out


def _error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one error line ``cover`` prints for ``args`` (exit status 2)."""
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("cover: error: ")
    return err.removeprefix("cover: error: ")


def _blocks(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x)["cover"] for x in path.read_text().splitlines()]


def test_calibrate_records_the_source_streamed_as_read_whole(
        files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whole = tmp_path / "whole.json"
    assert main(["calibrate", "--preds", str(files["preds"]), "--gt", str(files["gt"]),
                 "--qids", str(files["cal_q"]), "--score", "sls", "--alpha", "0.3",
                 "--relevance-from", "proposals", "--in-memory", "-o", str(whole)]) == 0
    assert capsys.readouterr().out.startswith(
        "SLS relevance from the proposals (recorded in the calibrator: cover certify builds "
        "it the same way)\n")
    streamed = json.loads(files["cal_prop"].read_text())
    assert streamed["relevance"] == "proposals"
    assert streamed["thresholds"] == json.loads(whole.read_text())["thresholds"]
    saliency = json.loads(files["cal_sal"].read_text())
    assert "relevance" not in saliency and saliency["thresholds"] != streamed["thresholds"]


def test_certify_applies_the_recorded_source_on_every_path(files: dict[str, Path],
                                                          tmp_path: Path) -> None:
    from cover.calibrate import Calibrator
    from cover.io.labelled import read_labelled

    runs = {}
    for name, extra in (("streamed", []), ("whole", ["--in-memory"]),
                        ("flag", ["--relevance-from", "proposals"])):
        runs[name] = tmp_path / f"{name}.jsonl"
        assert main(["certify", "--calibrator", str(files["cal_prop"]), "--preds",
                     str(files["preds"]), "--qids", str(files["test_q"]), "-o",
                     str(runs[name]), *extra]) == 0
    streamed = _blocks(runs["streamed"])
    assert streamed == _blocks(runs["whole"]) == _blocks(runs["flag"])
    assert {b.get("relevance") for b in streamed} == {"proposals"}
    # the regions of the study's fit: the labelled table read with the flag, fitted as is
    cal_t = read_labelled(files["preds"], files["gt"], qids=files["cal_q"],
                          relevance_from="proposals")
    test_t = read_labelled(files["preds"], files["gt"], qids=files["test_q"],
                           relevance_from="proposals")
    assert cal_t.relevance == "proposals"
    study = Calibrator(score="sls", alpha=0.3).fit(cal_t.table)
    assert [b["region"] for b in streamed] == study.certify(test_t.table).intervals.to_lists()
    saliency = _blocks(_certify(files, "cal_sal", tmp_path))
    assert "relevance" not in saliency[0] and saliency != streamed


def _certify(files: dict[str, Path], cal: str, tmp_path: Path, *extra: str) -> Path:
    out = tmp_path / f"{cal}.jsonl"
    assert main(["certify", "--calibrator", str(files[cal]), "--preds", str(files["preds"]),
                 "--qids", str(files["test_q"]), "-o", str(out), *extra]) == 0
    return out


@pytest.mark.parametrize("in_memory", [False, True])
def test_a_flag_that_contradicts_the_calibrator_stops_certify(
        files: dict[str, Path], tmp_path: Path, in_memory: bool,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.jsonl"
    cal = files["cal_sal"]
    err = _error(["certify", "--calibrator", str(cal), "--preds", str(files["preds"]),
                  "-o", str(out), "--relevance-from", "proposals",
                  *(["--in-memory"] if in_memory else [])], capsys)
    assert err == (
        f"--relevance-from proposals contradicts {cal}: its SLS thresholds were fitted on "
        "the relevance from saliency; drop --relevance-from to apply the calibrator as "
        "fitted, or fit one with cover calibrate --relevance-from proposals")
    assert not out.exists()


def test_the_flag_on_an_interval_calibrator_is_an_error(
        files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cal = files["cal_norm"]
    err = _error(["certify", "--calibrator", str(cal), "--preds", str(files["preds"]),
                  "-o", str(tmp_path / "r.jsonl"), "--relevance-from", "proposals"], capsys)
    assert err == (
        f"--relevance-from proposals: {cal} is a NORM calibrator, which reads no relevance "
        "signal (the flag applies to SLS); drop --relevance-from")


def test_evaluate_checks_the_flag_against_the_regions_calibrator(
        files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prop = _certify(files, "cal_prop", tmp_path)
    sal = _certify(files, "cal_sal", tmp_path)
    js = tmp_path / "m.json"
    assert main(["evaluate", "--regions", str(prop), "--gt", str(files["gt"]),
                 "--relevance-from", "proposals", "--json", str(js)]) == 0
    assert json.loads(js.read_text())["counts"]["rows"] == N // 2
    err = _error(["evaluate", "--regions", str(sal), "--gt", str(files["gt"]),
                  "--relevance-from", "proposals", "--json", str(tmp_path / "n.json")], capsys)
    assert err.startswith(
        f"--relevance-from proposals contradicts the calibrator recorded in {sal}: its SLS "
        "thresholds were fitted on the relevance from saliency")
    assert not (tmp_path / "n.json").exists()


def test_parquet_streamed_certifies_the_regions_of_json_lines(files: dict[str, Path],
                                                             tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [json.loads(x) for x in files["preds"].read_text().splitlines()]
    src = tmp_path / "preds.parquet"
    pq.write_table(pa.table({k: [r[k] for r in rows]
                             for k in ("qid", "vid", "duration", "pred_relevant_windows")}),
                   src)
    out, ref = tmp_path / "out.parquet", tmp_path / "ref.jsonl"
    assert main(["certify", "--calibrator", str(files["cal_prop"]), "--preds", str(src),
                 "--columns", "qid=qid,vid=vid,duration=duration,windows=pred_relevant_windows",
                 "--batch-rows", "7", "-o", str(out)]) == 0
    assert main(["certify", "--calibrator", str(files["cal_prop"]), "--preds",
                 str(files["preds"]), "-o", str(ref)]) == 0
    got = [b["region"] for b in pq.read_table(out).column("cover").to_pylist()]
    assert got == [b["region"] for b in _blocks(ref)]
    meta = json.loads(pq.read_schema(out).metadata[b"cover.calibrator"])
    assert meta["relevance"] == "proposals"


def test_csv_cannot_carry_proposals(files: dict[str, Path], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    rows = [json.loads(x) for x in files["preds"].read_text().splitlines()]
    src = tmp_path / "preds.csv"
    src.write_text("qid,vid,duration,start,end\n" + "".join(
        f"{r['qid']},{r['vid']},{r['duration']},{r['pred_relevant_windows'][0][0]},"
        f"{r['pred_relevant_windows'][0][1]}\n" for r in rows))
    cols = "qid=qid,vid=vid,duration=duration,start=start,end=end"
    why = ("relevance from proposals needs each row's scored windows, which a CSV row "
           "cannot hold (one start= and end=); convert the file to Parquet or JSON lines "
           "with a windows= list column")
    for out in ("out.csv", "out.jsonl"):  # streamed, and read whole
        err = _error(["certify", "--calibrator", str(files["cal_prop"]), "--preds", str(src),
                      "--columns", cols, "-o", str(tmp_path / out)], capsys)
        assert err == f"{src}: {why} ({files['cal_prop']} was fitted on it)"
        assert not (tmp_path / out).exists()
    err = _error(["calibrate", "--preds", str(src), "--gt", str(files["gt"]), "--columns",
                  cols, "--score", "sls", "--relevance-from", "proposals", "-o",
                  str(tmp_path / "c.json")], capsys)
    assert err == f"{src}: {why} (--relevance-from proposals)"


def test_a_qids_list_never_builds_every_seen_id_as_text(files: dict[str, Path],
                                                        tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """The listed qids no row has are found by marking the list a batch at a time (the
    certify stage's ``listed``), never from every id seen as sorted text (~60 bytes a
    row at the end of a stream), with a list or without."""
    from cover.io.seen import SeenIds

    calls: list[int] = []
    array = SeenIds.array

    def counted(self: SeenIds) -> Any:
        calls.append(1)
        return array(self)

    monkeypatch.setattr(SeenIds, "array", counted)
    base = ["certify", "--calibrator", str(files["cal_norm"]), "--preds", str(files["preds"]),
            "--batch-rows", "16"]
    assert main([*base, "-o", str(tmp_path / "all.jsonl")]) == 0
    listed = tmp_path / "q.txt"
    listed.write_text("1\n3\n999\n")
    capsys.readouterr()
    assert main([*base, "--qids", str(listed), "--on-error", "reject",
                 "-o", str(tmp_path / "some.jsonl")]) == 0
    assert calls == []
    err = capsys.readouterr().err
    assert f"{listed}:3 (qid=999): qid not found in {files['preds']}" in err
    assert "qid=1)" not in err and "qid=3)" not in err
