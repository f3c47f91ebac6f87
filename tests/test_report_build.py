"""`cover report`: one self-contained HTML file, every figure embedded and decodable, the
summary in words; rendered in headless Chromium when it is installed."""

from __future__ import annotations

import base64
import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cover.report.build import build_report

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]


# The study run is shared with tests/test_jobs_study.py: one xdist worker computes it once.
pytestmark = pytest.mark.xdist_group("study_run")

@pytest.fixture(scope="module")
def report(study_run: tuple[Path, dict], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out, _ = study_run
    return build_report(out, tmp_path_factory.mktemp("report") / "report.html")


def test_report_is_self_contained_with_decodable_figures(report: Path) -> None:
    import matplotlib.image as mpimg

    html = report.read_text(encoding="utf-8")
    # Nothing fetched from elsewhere: no external scripts, styles or images.
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html)
    assert "<link" not in html
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert len(images) >= 20
    for b64 in images:
        arr = mpimg.imread(io.BytesIO(base64.b64decode(b64)), format="png")
        assert arr.shape[0] > 100 and arr.shape[1] > 100
        assert arr.std() > 0  # not a blank image
    assert 'id="summary"' in html and "In short." in html
    assert "consistent with the 90% target" in html and "What it costs" in html
    assert "cover study all --preds" in html  # the command that reproduces the numbers
    for heading in ("1. Coverage validity", "5. Cross-dataset transfer", "Gallery",
                    "All test queries"):
        assert heading in html


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def test_report_renders_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    exe = _chromium()
    if exe is None:
        pytest.skip("chromium is not installed")
    flags = [*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    shot = tmp_path / "report.png"
    # One browser start both screenshots the page and prints its DOM (once its scripts ran).
    dom = subprocess.run([exe, *flags, "--window-size=1280,2400", f"--screenshot={shot}",
                          "--virtual-time-budget=10000", "--dump-dom", report.as_uri()],
                         check=True, capture_output=True, timeout=180, text=True).stdout
    assert shot.stat().st_size > 50_000
    import matplotlib.image as mpimg

    assert mpimg.imread(shot).std() > 0
    n_img = dom.count("<img ")
    decoded = re.findall(r'data-decoded="(\d+)"', dom)
    assert n_img >= 20 and len(decoded) == n_img  # every figure decoded by the browser
    assert all(int(w) > 100 for w in decoded)
    assert 'class="missing">This figure' not in dom
    # The gallery and the query viewer were drawn by the page's script.
    assert dom.count("<svg") >= 8
    assert 'id="summary"' in dom
    assert dom.count('<tr data-pair="') > 3000  # the searchable table: every test query


#: what stands where the results folder's manifest should be -> what the error says
NOT_A_FOLDER = {
    "a file given as the folder": (None, "is a file, not a `cover study` results folder"),
    "no manifest": ("", "manifest.json: not found; is this a `cover study` results folder?"),
    "an empty object": ("{}", "not the manifest `cover study` writes (Object missing "
                              "required field `pairs`)"),
    "a list": ("[1]", "not the manifest `cover study` writes (Expected `object`, got "
                      "`array`)"),
    "a pair without its fields": (
        '{"pairs": [{"id": 1}], "protocol": {}, "studies": []}',
        "not the manifest `cover study` writes (Expected `str`, got `int` - at "
        "`$.pairs[0].id`)"),
    "no pair": ('{"pairs": [], "protocol": {}, "studies": []}',
                "not the manifest `cover study` writes (Expected `array` of length >= 1 - at "
                "`$.pairs`)"),
    "bytes that are not UTF-8": (b"\xff", "not UTF-8 text (byte 0xff at offset 0)"),
    "a folder named manifest.json": ("dir", "manifest.json: cannot be read (Is a "
                                            "directory)"),
}


@pytest.mark.parametrize("case", sorted(NOT_A_FOLDER))
def test_what_is_no_results_folder_is_named_as_such(tmp_path: Path, case: str, capsys) -> None:
    """Anything but a results folder of `cover study`: exit 2 with the path and what it
    is (a manifest of another shape ended in a KeyError traceback, bytes that are not
    UTF-8 in "'utf-8' codec can't decode", a file given as the folder in "Not a
    directory"); nothing written."""
    from cover.cli import main

    content, why = NOT_A_FOLDER[case]
    folder = tmp_path / "results"
    if content is None:
        folder.write_text("{}")
    else:
        folder.mkdir()
        manifest = folder / "manifest.json"
        if content == "dir":
            manifest.mkdir()
        elif isinstance(content, bytes):
            manifest.write_bytes(content)
        elif content:
            manifest.write_text(content)
    out = tmp_path / "report.html"
    assert main(["report", str(folder), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"cover: error: {folder}" in err and why in err, err
    assert "Traceback" not in err and not out.exists()
