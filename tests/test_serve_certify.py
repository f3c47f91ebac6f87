"""``POST /v1/certify`` on the real server: the cover blocks ``cover certify`` writes, byte
for byte; bad rows get a 4xx naming the row and the problem, never a 500, never lost."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from cli_files import synthetic
from cover.cli import main
from serve_server import HTTP, thread_server


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("serve")
    preds, gt = synthetic(d, n=60)
    cal = d / "cal.json"
    assert main(["calibrate", "--preds", str(preds), "--gt", str(gt), "-o", str(cal),
                 "--score", "sec"]) == 0
    # New rows: without duration in the row, read from --videos like the CLI.
    new, _ = synthetic(d, n=30, seed=5, name="new.jsonl")
    return {"preds": preds, "gt": gt, "cal": cal, "new": new, "dir": d}


@pytest.fixture(scope="module")
def base(files: dict[str, Path]) -> object:
    from cover.serve import ServeOptions, build

    app = build(ServeOptions(calibrators=(("main", str(files["cal"])),),
                             videos=str(files["gt"])))
    with thread_server(app) as url:
        yield url


def _cli(files: dict[str, Path], src: Path, *extra: str) -> bytes:
    out = files["dir"] / f"cli-{src.stem}{'-'.join(extra)}.jsonl"
    assert main(["certify", "--calibrator", str(files["cal"]), "--preds", str(src),
                 "--videos", str(files["gt"]), "-o", str(out), *extra]) == 0
    return out.read_bytes()


def test_jsonl_body_gets_the_bytes_cover_certify_writes(files, base):
    body = files["new"].read_bytes()
    r = HTTP.post(f"{base}/v1/certify", params={"format": "jsonl"}, content=body)
    assert r.status_code == 200, r.text
    assert r.content == _cli(files, files["new"])
    assert r.headers["x-cover-rows"] == "30"


def test_json_results_are_the_compact_lines(files, base):
    rows = [json.loads(line) for line in files["new"].read_text().splitlines()]
    r = HTTP.post(f"{base}/v1/certify", json=rows)
    assert r.status_code == 200, r.text
    want = _cli(files, files["new"], "--compact").decode().splitlines()
    doc = r.json()
    assert [json.dumps(x) for x in doc["results"]] == want
    # Byte for byte inside the response too: the results are the CLI's lines verbatim.
    assert r.content.endswith(("[" + ", ".join(want) + "]}").encode())
    assert doc["rows"] == 30 == doc["certified"] + doc["refused"] + doc["rejected"]
    one = HTTP.post(f"{base}/v1/certify", json=rows[3])  # a single row object
    assert one.json()["results"] == [doc["results"][3]]


def test_a_bad_row_is_a_422_naming_row_and_field_and_nothing_is_dropped(files, base):
    rows = [json.loads(line) for line in files["new"].read_text().splitlines()][:4]
    rows[2]["pred_relevant_windows"] = [[5.0, "late", 0.9]]
    r = HTTP.post(f"{base}/v1/certify", json=rows)
    assert r.status_code == 422
    err = r.json()
    assert err["error"].startswith(f"row 2 (qid={rows[2]['qid']}):")
    assert "pred_relevant_windows" in err["error"], err
    assert err["problems"][0]["row"] == 2
    rj = HTTP.post(f"{base}/v1/certify", params={"on_error": "reject"}, json=rows)
    assert rj.status_code == 200
    res = rj.json()["results"]
    assert len(res) == 4 and res[2]["cover"]["status"] == "rejected"
    assert "pred_relevant_windows" in res[2]["cover"]["reason"]
    assert [x["qid"] for x in res] == [x["qid"] for x in rows]


@pytest.mark.parametrize(("body", "status", "words"), [
    (b"", 400, "empty"), (b"[1, 2", 400, "not valid JSON"),
    (b'{"rows": 3}', 400, "rows: expected a list"),
])
def test_malformed_requests_are_4xx_json(base, body, status, words):
    r = HTTP.post(f"{base}/v1/certify", content=body)
    assert r.status_code == status and words in r.json()["error"]


def test_unknown_calibrator_and_option(base):
    r = HTTP.post(f"{base}/v1/certify", params={"calibrator": "nope"}, json={"qid": 1})
    assert r.status_code == 404 and "main" in r.json()["error"]
    r = HTTP.post(f"{base}/v1/certify", params={"on_error": "skip"}, json={"qid": 1})
    assert r.status_code == 400 and "on_error" in r.json()["error"]


def test_a_line_that_is_not_json_comes_back_rejected(files, base):
    lines = files["new"].read_bytes().splitlines()[:3]
    body = b"\n".join([lines[0], b"{not json", lines[2]]) + b"\n"
    r = HTTP.post(f"{base}/v1/certify", params={"on_error": "reject"}, content=body)
    res = r.json()["results"]
    assert r.status_code == 200 and len(res) == 3
    assert res[1]["cover"]["status"] == "rejected"


def test_the_first_bad_row_named_is_the_first_sent(files, base):
    """Under on_error=raise the 422 names the first bad row of the request, whichever
    rule found it (a duration the --videos file contradicts is found after a reversed
    window), and lists the problems in row order, as the command line does."""
    rows = [json.loads(line) for line in files["new"].read_text().splitlines()][:4]
    rows[0]["duration"] = 1.0  # contradicts --videos: the certify stage's rule
    rows[2]["pred_relevant_windows"] = [[9.0, 5.0, 0.9]]  # the reader's rule
    r = HTTP.post(f"{base}/v1/certify", json=rows)
    assert r.status_code == 422
    err = r.json()
    assert err["error"].startswith(f"row 0 (qid={rows[0]['qid']}):"), err
    assert [p["row"] for p in err["problems"]] == [0, 2]


def test_a_duration_in_the_wrong_unit_is_a_422_and_the_service_lives_on(tmp_path: Path):
    """SLS on proposals: a row of T = 1e9 s would need a signal of 5e8 clips (it had the
    service process killed for memory, for every client): a 422 naming the row, then
    the next request is answered as before; under on_error=reject that row alone is
    rejected, with the reason."""
    from cover.calibrate import Calibrator
    from cover.data.join import attach_truth
    from cover.data.table import GroundingTable
    from cover.io.formats import Options, read
    from cover.serve import ServeOptions, build

    rows = [{"qid": i, "vid": f"v{i % 5}", "duration": 60.0,
             "pred_relevant_windows": [[i % 20, i % 20 + 10, 0.9], [0, 60, 0.1]]}
            for i in range(40)]
    src = tmp_path / "p.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows))
    preds = read(src, "predictions", options=Options(relevance_from="proposals")).loaded.table
    gt = GroundingTable.from_arrays(qid=[r["qid"] for r in rows], vid=[r["vid"] for r in rows],
                                    duration=60.0, truth=([5.0] * 40, [15.0] * 40))
    cal = Calibrator(score="sls", alpha=0.2, relevance="proposals")
    cal.fit(attach_truth(preds, gt)[0])
    path = tmp_path / "cal.json"
    cal.save(path)
    opts = ServeOptions(calibrators=(("main", str(path)),), state=str(tmp_path / "s.db"))
    with thread_server(build(opts)) as url:
        bad = HTTP.post(f"{url}/v1/certify", json=[rows[0] | {"qid": 99, "duration": 1e9}])
        assert bad.status_code == 422, bad.text
        assert "(qid=99): a relevance signal from proposals over its duration of 1e+09 s " \
               "would need more than 4,194,304 clips" in bad.json()["error"]
        good = HTTP.post(f"{url}/v1/certify", json=rows[:3])
        assert good.status_code == 200, good.text
        # with on_error=reject that row alone is rejected, with the reason: the row's
        # fate, as cover certify gives it, and the rows beside it are certified
        both = HTTP.post(f"{url}/v1/certify", params={"on_error": "reject"},
                         json=[rows[0] | {"qid": 99, "duration": 1e9}, rows[1]])
        assert both.status_code == 200, both.text
        first, second = (r["cover"] for r in both.json()["results"])
        assert first["status"] == "rejected" and "would need more than 4,194,304 clips" \
            in first["reason"]
        assert second["status"] == "certified"


def test_certify_output_sent_again_is_refused_as_the_command_refuses_it(files, base,
                                                                        capsys):
    """Rows certify wrote, sent to the service: a 422 with the command's words, where the
    service certified them again (the command refuses the file). A row among others is
    enough, in bulk or row by row (a bad row elsewhere sends the batch to the per-row
    reader)."""
    out = files["dir"] / "certified-once.jsonl"
    assert main(["certify", "--calibrator", str(files["cal"]), "--preds", str(files["new"]),
                 "--videos", str(files["gt"]), "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["certify", "--calibrator", str(files["cal"]), "--preds", str(out),
                 "--videos", str(files["gt"]), "-o", str(files["dir"] / "twice.jsonl")]) == 2
    said = capsys.readouterr().err.strip().removeprefix(f"cover: error: {out}: ")
    plain = files["new"].read_text().splitlines()
    for body in (out.read_text().splitlines()[0],
                 "\n".join([plain[0], out.read_text().splitlines()[1], "not json"])):
        r = HTTP.post(f"{base}/v1/certify", content=body.encode())
        assert r.status_code == 422, r.text
        assert r.json()["error"].endswith(said), r.text
