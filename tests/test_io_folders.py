"""Results folders all or nothing: built beside the target, renamed into place at the end;
a failed run leaves the previous folder (or none) and no temporary folder behind."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cli_files import synthetic, write_jsonl
from cover.cli import main
from cover.errors import OutputError
from cover.io.output import results_folder


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def _siblings(folder: Path) -> list[str]:
    """Temporary folders of a results folder left beside it (there must be none)."""
    return sorted(p.name for p in folder.parent.iterdir() if p.name.startswith("."))


def test_a_new_folder_appears_only_when_complete(tmp_path: Path):
    out = tmp_path / "deep" / "r"
    with results_folder(out) as work:
        (work / "validity.json").write_text("{}")
        (work / "sub").mkdir()
        (work / "sub" / "a.txt").write_text("a")
        assert not out.exists() and work.parent == out.parent
    assert _tree(out) == {"validity.json": b"{}", "sub/a.txt": b"a"}
    assert _siblings(out) == []


def test_the_summary_is_shown_once_the_folder_is_in_place(tmp_path: Path, capsys):
    out = tmp_path / "r"
    with results_folder(out) as work:
        (work / "a.txt").write_text("a")
        print("summary")
        assert capsys.readouterr().out == ""  # held while the folder is built
    assert capsys.readouterr().out == "summary\n" and _tree(out) == {"a.txt": b"a"}
    with pytest.raises(RuntimeError), results_folder(tmp_path / "failed"):
        print("half a summary")
        raise RuntimeError("boom")
    assert capsys.readouterr().out == "" and not (tmp_path / "failed").exists()


class _ClosedPipe:
    """Standard output whose reader is gone (``| head`` that has read its lines)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_reader_gone_early_does_not_cost_the_folder(tmp_path: Path, monkeypatch):
    # `cover validity ... | head -1`: the folder is in place before the summary is shown,
    # so the closed pipe ends the run (exit 141) after the work is saved.
    monkeypatch.setattr("sys.stdout", _ClosedPipe())
    out = tmp_path / "r"
    with pytest.raises(BrokenPipeError), results_folder(out) as work:
        (work / "validity.json").write_text("{}")
        print("a summary longer than the reader wanted")
    assert _tree(out) == {"validity.json": b"{}"} and _siblings(out) == []


def test_a_previous_results_folder_is_replaced_whole(tmp_path: Path):
    out = tmp_path / "r"
    out.mkdir()
    (out / "report.html").write_text("old")
    (out / "sls.png").write_text("stale")
    with results_folder(out) as work:
        (work / "report.html").write_text("new")
    assert _tree(out) == {"report.html": b"new"}  # no stale figure of the last run
    assert _siblings(out) == []


@pytest.mark.parametrize("exc", [RuntimeError("boom"), KeyboardInterrupt()])
def test_an_exception_keeps_the_previous_folder(tmp_path: Path, exc: BaseException):
    out = tmp_path / "r"
    out.mkdir()
    (out / "manifest.json").write_text("old")
    before = _tree(out)
    with pytest.raises(type(exc)), results_folder(out) as work:
        (work / "manifest.json").write_text("half")
        raise exc
    assert _tree(out) == before and _siblings(out) == []
    with pytest.raises(RuntimeError), results_folder(tmp_path / "new") as work:
        raise RuntimeError
    assert not (tmp_path / "new").exists() and _siblings(out) == []


def test_folders_that_are_not_results_are_refused(tmp_path: Path, monkeypatch):
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "thesis.tex").write_text("x")
    with pytest.raises(OutputError, match=r"notes: exists and is not a COVER results folder "
                                          r"\(it holds thesis.tex\); the results replace"):
        with results_folder(mine):
            pass
    (tmp_path / "r").mkdir()
    inside = tmp_path / "r" / "preds.jsonl"
    with pytest.raises(OutputError, match=r"holds .*preds.jsonl, an input of this run"):
        with results_folder(tmp_path / "r", inputs=[inside]):
            pass
    monkeypatch.chdir(mine)
    with pytest.raises(OutputError, match="is the current folder or one of its parents"):
        with results_folder("."):
            pass
    assert _tree(mine) == {"thesis.tex": b"x"}


def test_validity_with_every_row_rejected_leaves_no_folder(tmp_path: Path, capsys):
    preds, gt = synthetic(tmp_path, n=60)
    rows = [json.loads(x) | {"vid": "other"} for x in preds.read_text().splitlines()]
    write_jsonl(preds, list(rows))
    out = tmp_path / "v"
    assert main(["validity", "--preds", str(preds), "--gt", str(gt), "--out", str(out),
                 "--on-error", "reject", "--families", "norm", "--resamples", "2"]) == 2
    err = capsys.readouterr().err
    assert "too few rows to study: 0 rows from 0 videos" in err
    assert "Traceback" not in err and "NaN" not in err
    assert not out.exists() and _siblings(out) == []


def test_validity_with_no_family_to_study_leaves_no_folder(tmp_path: Path, capsys):
    # The folder used to be created (empty) before the run found nothing to study.
    preds, gt = synthetic(tmp_path, n=60, saliency=False)
    out = tmp_path / "v"
    assert main(["validity", "--preds", str(preds), "--gt", str(gt), "--out", str(out),
                 "--families", "sls", "--alphas", "0.2", "--resamples", "2"]) == 2
    assert "no grounder could be studied" in capsys.readouterr().err
    assert not out.exists() and _siblings(out) == []


def test_an_interrupted_study_keeps_the_previous_folder(tmp_path: Path, monkeypatch, capsys):
    import cover.jobs.study as study

    preds, gt = synthetic(tmp_path, n=90)
    out = tmp_path / "s"
    args = ["study", "margins", "--preds", str(preds), "--gt", str(gt), "--out", str(out),
            "--resamples", "2", "--no-report"]
    assert main(args) == 0
    before = _tree(out)
    assert "manifest.json" in before
    capsys.readouterr()

    def boom(*a: object, **k: object) -> None:
        raise KeyboardInterrupt  # after the pair's files are written, before the manifest

    monkeypatch.setattr(study, "comparisons", boom)
    args[args.index("--resamples") + 1] = "3"  # the new run's pair files differ
    assert main(args) != 0
    assert "interrupted" in capsys.readouterr().err
    assert _tree(out) == before and _siblings(out) == []


@given(st.text(max_size=20))
def test_slug_is_lower_case_letters_and_digits_joined_by_dashes(text: str) -> None:
    from cover.io.folders import slug

    got = slug(text)
    assert got == "x" or (re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", got)
                          and got.replace("-", "") == re.sub(r"[^a-z0-9]", "", text.lower()))
    assert slug("Charades-STA") == "charades-sta" and slug("held-out annotator 2") == \
        "held-out-annotator-2" and slug(" ¿? ", "grounder") == "grounder"
