"""Fetching the public data: registry checks, a local mirror, clear errors, the demo from
a fresh copy of the repository with nothing but the mirror."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import REPO
from cover.cli import main
from cover.io import fetch
from cover.io.datasets import QVH_VAL_GT, QVH_VAL_PREDICTIONS, data_dir_for, find_data_dir

pytest.importorskip("pooch")


class Mirror:
    """``http.server`` on 127.0.0.1 (ephemeral port) serving a folder; counts GETs."""

    def __init__(self, folder: Path) -> None:
        self.requests: list[str] = []
        mirror = self

        class Handler(SimpleHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                mirror.requests.append(self.path)

        self.server = ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Handler, directory=str(folder)))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def mirror(data_dir: Path) -> Iterator[Mirror]:
    m = Mirror(data_dir)
    yield m
    m.stop()


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty data cache, no sibling ../shared/data, no user cache."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("COVER_DATA_DIR", str(cache))
    monkeypatch.setenv("COVER_NO_SIBLING_DATA", "1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    return cache


def test_registry_matches_the_real_files(data_dir: Path):
    for e in fetch.REGISTRY.values():
        p = data_dir / e.path
        assert p.is_file(), e.path
        assert p.stat().st_size == e.size, e.name
        assert fetch.sha256_of(p) == e.sha256, e.name
        assert re.fullmatch(r"[0-9a-f]{40}", e.commit) and e.commit in e.raw_url
        assert e.raw_url.startswith("https://raw.githubusercontent.com/") and e.license


def test_every_file_the_demo_and_studies_read_is_registered():
    needed = [QVH_VAL_GT, *QVH_VAL_PREDICTIONS.values()]
    assert [e.path for e in fetch.by_path(needed)] == needed


def test_mirror_url_is_laid_out_like_the_data_folder(monkeypatch: pytest.MonkeyPatch):
    e = fetch.REGISTRY["qvh-val-gt"]
    monkeypatch.delenv("COVER_DATA_URL", raising=False)
    assert e.url() == e.raw_url
    monkeypatch.setenv("COVER_DATA_URL", "http://mirror.example/data/")
    assert e.url() == "http://mirror.example/data/" + e.path


def test_fetch_from_mirror_verifies_and_keeps_good_files(mirror: Mirror, isolated: Path,
                                                         monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("COVER_DATA_URL", mirror.url)
    assert main(["data", "fetch", "qvh-val-gt", "charades-test-gt"]) == 0
    for name in ("qvh-val-gt", "charades-test-gt"):
        e = fetch.REGISTRY[name]
        assert fetch.sha256_of(isolated / e.path) == e.sha256
        assert fetch.is_cached(e)
    n = len(mirror.requests)
    fetch.fetch(fetch.resolve(["qvh-val-gt"]), progress=False)  # already there: no download
    assert len(mirror.requests) == n
    assert find_data_dir(need=(QVH_VAL_GT,)) == isolated.resolve()


def test_checksum_mismatch_names_file_url_and_fix(tmp_path: Path, isolated: Path,
                                                  monkeypatch: pytest.MonkeyPatch):
    e = fetch.REGISTRY["charades-test-gt"]
    bad = tmp_path / "bad-mirror"
    (bad / e.path).parent.mkdir(parents=True)
    (bad / e.path).write_text('{"qid": 1}\n')
    m = Mirror(bad)
    try:
        monkeypatch.setenv("COVER_DATA_URL", m.url)
        with pytest.raises(fetch.FetchError) as info:
            fetch.fetch([e], progress=False)
    finally:
        m.stop()
    msg = str(info.value)
    assert e.name in msg and f"{m.url}/{e.path}" in msg and e.sha256 in msg
    assert "COVER_DATA_URL" in msg and e.source_url in msg
    assert not (isolated / e.path).exists()


def test_server_down_names_file_url_and_fix(isolated: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]):
    m = Mirror(isolated)
    m.stop()  # a port that nobody answers on any more
    monkeypatch.setenv("COVER_DATA_URL", m.url)
    assert main(["data", "fetch", "eatr"]) == 2
    err = capsys.readouterr().err
    url = f"{m.url}/{fetch.REGISTRY['eatr'].path}"
    assert "eatr" in err and url in err and "no server answered" in err
    assert "cover data fetch eatr" in err and "Error(" not in err


def test_list_and_unknown_name(isolated: Path, capsys: pytest.CaptureFixture[str]):
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in fetch.REGISTRY) and str(isolated) in out
    assert main(["data", "fetch", "nope"]) == 2
    assert "unknown data file nope; known: qvh-val-gt" in capsys.readouterr().err


def test_demo_data_is_fetched_only_when_not_found(data_dir: Path, isolated: Path,
                                                  monkeypatch: pytest.MonkeyPatch):
    if data_dir.parent.name != "shared":
        pytest.skip("the real data is not in a shared/data folder")
    need = (QVH_VAL_GT, QVH_VAL_PREDICTIONS["QD-DETR (video)"])
    assert data_dir_for(need, data_dir) == data_dir  # an explicit folder is used as is
    monkeypatch.setenv("COVER_DATA_URL", "http://127.0.0.1:9")  # nothing must be fetched
    monkeypatch.delenv("COVER_NO_SIBLING_DATA")
    monkeypatch.chdir(data_dir.parent.parent)  # ./shared/data is the real folder
    assert data_dir_for(need) == data_dir.resolve()


@pytest.mark.heavy  # a fresh copy of the repository and a demo in a subprocess
def test_fresh_copy_runs_the_demo_from_the_mirror_alone(mirror: Mirror, tmp_path: Path):
    """The README's first command's job in a copy of the repository that has no
    ../shared/data beside it, an empty cache and only the local mirror."""
    # Tracked and new (not ignored) files: the checkout as a clone of it would be.
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                           cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    copy = tmp_path / "clone" / "cover"
    for f in files:
        if (REPO / f).is_file():
            (copy / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / f, copy / f)
    first = next(ln for ln in (copy / "README.md").read_text().splitlines() if "cover demo" in ln)
    assert "fetch" in first  # the set-up installs the downloader
    cache = tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVER_")}
    env |= {"COVER_DATA_DIR": str(cache), "COVER_DATA_URL": mirror.url,
            "COVER_NO_SIBLING_DATA": "1", "XDG_CACHE_HOME": str(tmp_path / "xdg"),
            "PYTHONPATH": str(copy / "src"), "MPLBACKEND": "Agg"}
    run = subprocess.run([sys.executable, "-m", "cover", "demo", "--out", "cover-demo",
                          "--resamples", "2"], cwd=copy, env=env, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "fetching 2 public file(s)" in run.stderr
    for e in fetch.by_path([QVH_VAL_GT, QVH_VAL_PREDICTIONS["QD-DETR (video)"]]):
        assert fetch.sha256_of(cache / e.path) == e.sha256
    assert (copy / "cover-demo" / "report.html").is_file()
    assert (copy / "cover-demo" / "validity.json").is_file()
