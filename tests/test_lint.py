"""The code base stays lint-clean and type-checks (ruff, mypy are test dependencies)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import REPO


def _tool(name: str) -> str:
    exe = shutil.which(name, path=str(REPO / ".venv" / "bin")) or shutil.which(name)
    if exe is None:
        pytest.skip(f"{name} not installed")
    return exe


def test_ruff_is_clean():
    out = subprocess.run([_tool("ruff"), "check", "src", "tests", "bench"], cwd=REPO,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_mypy_is_clean():
    out = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True,
                         text=True)
    if "No module named mypy" in out.stderr:
        pytest.skip("mypy not installed")
    assert out.returncode == 0, out.stdout + out.stderr


def test_importing_cover_stays_light():
    """``import cover`` must not pull in scipy.stats or matplotlib (seconds at start-up)."""
    code = ("import sys, cover; heavy = [m for m in ('scipy.stats', 'matplotlib') "
            "if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""
