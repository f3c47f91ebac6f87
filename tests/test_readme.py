"""The README's Python quickstart runs as written (against the real data)."""

from __future__ import annotations

import re

from conftest import REPO


def test_readme_python_example_runs(data_dir, tmp_path, monkeypatch, capsys):
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no python example"
    code = blocks[0].replace("../shared/data/", f"{data_dir}/")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    threshold, coverage, length = map(float, capsys.readouterr().out.split())
    assert 0.85 < coverage < 0.96 and 0 < length <= 150 and threshold > 0
    assert (tmp_path / "calibrator.json").is_file()


def test_readme_opens_with_the_two_setup_commands():
    lines = [ln for ln in (REPO / "README.md").read_text().splitlines() if ln.strip()]
    assert lines[1] == "```bash"
    assert "cover demo" in lines[2] and "pytest" in lines[3] and lines[4] == "```"
    ci = (REPO / ".ci" / "run").read_text()
    assert "-m pytest" in ci and "README.md" in ci
