"""The code base stays lint-clean and type-checks (ruff, mypy are test dependencies)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO


def _tool(name: str) -> str:
    # The interpreter's own bin first: the tool installed beside it by the test extra.
    exe = (shutil.which(name, path=str(Path(sys.executable).parent))
           or shutil.which(name, path=str(REPO / ".venv" / "bin")) or shutil.which(name))
    if exe is None:
        pytest.skip(f"{name} not installed")
    return exe


def test_ruff_is_clean():
    out = subprocess.run([_tool("ruff"), "check", "src", "tests", "bench"], cwd=REPO,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.heavy  # a minute from a fresh clone (no mypy cache): start it first
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


def test_calibrate_with_its_coverage_band_skips_scipy_stats():
    """A split fit plus the Beta band the CLI prints (``coverage_reference``) loads
    scipy.special, never scipy.stats."""
    code = ("import sys, numpy as np, cover; from cover.metrics import coverage_reference; "
            "t = cover.GroundingTable.from_arrays(qid=np.arange(50), duration=60.0, "
            "pred_start=np.full(50, 10.0), pred_end=np.full(50, 20.0), "
            "truth=(np.full(50, 11.0), np.linspace(15, 25, 50))); "
            "c = cover.Calibrator(score='norm', alpha=0.1).fit(t); "
            "coverage_reference(c.n_, c.k_); print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_import_fit_and_a_small_file_calibrate_without_band_load_no_scipy(tmp_path,
                                                                            qdetr_preds,
                                                                            qvh_gt):
    """``import cover``, a fit and certify in memory, and ``cover calibrate --no-band`` on
    the real QVHighlights file never import scipy (nor does anything else they run)."""
    out_path = tmp_path / "cal.json"
    code = ("import sys, numpy as np, cover; "
            "t = cover.GroundingTable.from_arrays(qid=np.arange(50), duration=60.0, "
            "pred_start=np.full(50, 10.0), pred_end=np.full(50, 20.0), "
            "truth=(np.full(50, 11.0), np.linspace(15, 25, 50))); "
            "cover.Calibrator(score='norm', alpha=0.1).fit(t).certify(t); "
            "from cover.cli import main; "
            f"main(['calibrate', '--preds', {str(qdetr_preds)!r}, '--gt', {str(qvh_gt)!r}, "
            f"'--score', 'norm', '--no-band', '-o', {str(out_path)!r}]); "
            "print([m for m in sys.modules if m.split('.')[0] == 'scipy'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
    assert "expected coverage k/(n+1) = 0.90" in out.stdout and out_path.exists()
