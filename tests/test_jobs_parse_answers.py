"""``cover parse-answers`` writes its prediction files all or nothing: a run whose later
answer file cannot be parsed writes none, and leaves what was there as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cover.cli import main
from cover.io import write_jsonl


def _answers(path: Path, n: int = 3) -> Path:
    write_jsonl(path, [{"qid": i, "vid": "a", "duration": 30,
                        "response": f"from {i} to {i + 5} seconds"} for i in range(n)])
    return path


@pytest.mark.parametrize("existing", [False, True])
def test_a_file_that_fails_writes_no_prediction_file(tmp_path: Path, existing: bool,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    good = _answers(tmp_path / "good.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n[1, 2]\n")  # no line is an answer row: the file is refused
    out, summary = tmp_path / "out", tmp_path / "summary.json"
    if existing:
        out.mkdir()
        (out / "good.preds.jsonl").write_text("previous\n")
    assert main(["parse-answers", str(good), str(bad), "--out-dir", str(out),
                 "--summary", str(summary)]) == 2
    said = capsys.readouterr()
    assert f"{bad}: no line is an answer row" in said.err and "Traceback" not in said.err
    assert "wrote" not in said.out
    assert not summary.exists()
    if existing:  # the earlier file's output is not replaced
        assert [p.name for p in out.iterdir()] == ["good.preds.jsonl"]
        assert (out / "good.preds.jsonl").read_text() == "previous\n"
    else:  # not even the folder is made
        assert not out.exists()
    # The same run without the bad file writes both outputs.
    assert main(["parse-answers", str(good), "--out-dir", str(out), "--summary",
                 str(summary)]) == 0
    rows = [json.loads(x) for x in (out / "good.preds.jsonl").read_text().splitlines()]
    assert [r["pred_relevant_windows"] for r in rows] == [[[i, i + 5, 1.0]] for i in range(3)]
    assert json.loads(summary.read_text())["files"][0]["path"] == str(good)
