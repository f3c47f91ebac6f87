"""The peers' pinned install steps and where their environments live (``bench/peer_envs.py``).

The bench module is loaded from its file (``bench/`` is not a package); nothing here
installs anything.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_peer_envs", ROOT / "bench/peer_envs.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while being built
    spec.loader.exec_module(mod)
    return mod


peer_envs = _load()
PIN = re.compile(r"^[A-Za-z0-9_.-]+==[0-9][0-9A-Za-z.+]*$")


def test_every_peer_is_pinned_exactly_in_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    bench = {r.split("==")[0]: r for r in project["optional-dependencies"]["bench"]}
    assert PIN.match(bench["crepes"]) and PIN.match(bench["mapie"])
    assert set(peer_envs.SPECS) == {"puncc", "torchcp"}
    for spec in peer_envs.SPECS.values():
        for step in spec.steps:
            assert all(PIN.match(a) for a in step if not a.startswith("--")), step


def test_torchcp_installs_the_cpu_torch_first_and_alone() -> None:
    steps = peer_envs.SPECS["torchcp"].steps
    assert steps[0] == ("torch==2.13.0",)
    # every later step names the same torch, so pip never swaps it for another build
    assert all("torch==2.13.0" in s for s in steps[1:] if any("torch" in a for a in s))
    assert peer_envs.SPECS["torchcp"].hide_nvcc


def test_root_comes_from_the_flag_else_the_variable(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(peer_envs.ROOT_VARIABLE, str(tmp_path / "from-env"))
    mod = _load()
    assert mod.env_dir("puncc") == tmp_path / "from-env" / "puncc"
    mod.set_root(tmp_path / "flag")
    assert mod.env_dir("torchcp") == tmp_path / "flag" / "torchcp"
    assert mod.ready("torchcp") is None
    assert mod.missing_reason("puncc") == (
        f"no environment: run `.venv/bin/python bench/peer_envs.py puncc --root "
        f"{tmp_path / 'flag'}`")
    (tmp_path / "flag").mkdir()
    (tmp_path / "flag" / "puncc.failed").write_text("ERROR: No matching distribution\n\n$ pip")
    assert mod.missing_reason("puncc") == (
        "could not be installed (ERROR: No matching distribution; see "
        f"{tmp_path / 'flag' / 'puncc.failed'})")
