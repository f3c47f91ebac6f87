"""Create the virtual environments of the peers that cannot share COVER's.

    .venv/bin/python bench/peer_envs.py                 # puncc and torchcp
    .venv/bin/python bench/peer_envs.py puncc --recreate
    .venv/bin/python bench/peer_envs.py --root /work/main/bench/.envs   # another checkout's

Each peer gets ``<root>/<peer>/``, the root being ``--root``, else the environment
variable ``COVER_BENCH_ENVS``, else ``bench/.envs`` beside this file (git-ignored);
``bench/run.py`` takes the same flag and variable. The environment is installed with
pip, one ``pip install`` per step of ``[tool.cover.bench-envs]`` in ``pyproject.toml``
(the one place the peers' versions are pinned, with crepes and MAPIE in the ``bench``
extra), then checked by starting ``peer_worker.py`` in it and computing one threshold.
Success leaves ``<root>/<peer>/ready.json`` (interpreter and versions), which
``bench/run.py`` looks for; a failed step leaves ``<root>/<peer>.failed`` with the pip
command and the end of its output, and the bench row quotes its first line.

* **puncc** requires ``numpy < 2`` (COVER's environment has numpy 2).
* **torchcp** needs torch. The pinned ``torch`` goes in first, on its own step: the
  CPU build where the machine has its wheel at hand (any other torch spec makes pip
  fetch the CUDA build, several GB). Its dependency torchsort is a source package that
  builds against the torch already installed (``--no-build-isolation``; an isolated
  build would fetch torch again) and builds a CUDA extension whenever an ``nvcc``
  answers on the PATH, which fails on a machine without a GPU, so folders holding
  ``nvcc`` are left off the PATH of the install: torchsort then builds its CPU extension.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

HERE = "bench/peer_envs.py"
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
ROOT_VARIABLE = "COVER_BENCH_ENVS"
ROOT = Path(os.environ.get(ROOT_VARIABLE) or Path(__file__).resolve().with_name(".envs"))


@dataclass(frozen=True)
class Spec:
    steps: tuple[tuple[str, ...], ...]  # the arguments of one ``pip install`` each, in order
    lib: str  # the library name the worker reports (its distribution name)
    hide_nvcc: bool = False


def _specs(pyproject: Path = PYPROJECT) -> dict[str, Spec]:
    """The peers and their pinned install steps, read from ``[tool.cover.bench-envs]``."""
    table = tomllib.loads(pyproject.read_text())["tool"]["cover"]["bench-envs"]
    return {name: Spec(tuple(tuple(step) for step in steps), name,
                       hide_nvcc=name == "torchcp")
            for name, steps in table.items()}


SPECS = _specs()


def set_root(root: Path | None) -> None:
    """Use ``root`` for the environments (``--root``); None keeps the default."""
    global ROOT
    if root is not None:
        ROOT = root.resolve()


def env_dir(name: str) -> Path:
    return ROOT / name


def setup_command(name: str) -> str:
    default = Path(__file__).resolve().with_name(".envs")
    where = "" if ROOT == default else f" --root {ROOT}"
    return f"`.venv/bin/python {HERE} {name}{where}`"


def ready(name: str) -> dict[str, object] | None:
    """What ``ready.json`` recorded for a working environment, else None."""
    path = env_dir(name) / "ready.json"
    if not path.is_file():
        return None
    info: dict[str, object] = json.loads(path.read_text())
    return info if Path(str(info.get("python", ""))).is_file() else None


def failure(name: str) -> str | None:
    """The first line of the reason the last install failed, if it did."""
    path = ROOT / f"{name}.failed"
    return path.read_text().splitlines()[0] if path.is_file() else None


def missing_reason(name: str) -> str:
    """What a bench row says when the environment is not there."""
    why = failure(name)
    if why:
        return f"could not be installed ({why}; see {ROOT / f'{name}.failed'})"
    return f"no environment: run {setup_command(name)}"


def _path_without_nvcc() -> str:
    keep = [p for p in os.environ.get("PATH", "").split(os.pathsep)
            if p and not (Path(p) / "nvcc").exists()]
    return os.pathsep.join(keep)


def _fail(name: str, what: str, cmd: list[str], output: str) -> int:
    from cover.io.output import write_text

    tail = "\n".join(output.strip().splitlines()[-40:])
    write_text(ROOT / f"{name}.failed", f"{what}\n\n$ {' '.join(cmd)}\n{tail}\n")
    print(f"{name}: {what} (details in {ROOT / f'{name}.failed'})", file=sys.stderr)
    return 1


def create(name: str, base_python: str, recreate: bool = False) -> int:
    """Create (or reuse) the environment, install the peer, check it with the worker."""
    from peer_client import PeerError, PeerWorker

    from cover.io.output import write_json

    spec, where = SPECS[name], env_dir(name)
    if recreate and where.exists():
        shutil.rmtree(where)
    (ROOT / f"{name}.failed").unlink(missing_ok=True)
    (where / "ready.json").unlink(missing_ok=True)
    python = where / "bin" / "python"
    if not python.is_file():
        cmd = [base_python, "-m", "venv", str(where)]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode:
            return _fail(name, "venv creation failed", cmd, run.stdout + run.stderr)
    env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
    if spec.hide_nvcc:
        env["PATH"] = os.pathsep.join([str(python.parent), _path_without_nvcc()])
    for step in spec.steps:
        cmd = [str(python), "-m", "pip", "install", *step]
        print(f"{name}: {' '.join(cmd[2:])} into {where}", file=sys.stderr, flush=True)
        run = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if run.returncode:
            errors = [ln.strip() for ln in (run.stdout + run.stderr).splitlines()
                      if ln.strip().startswith("ERROR:")]
            return _fail(name, errors[-1] if errors else f"pip exited with {run.returncode}",
                         cmd, run.stdout + run.stderr)
    try:
        with PeerWorker(name, python) as w:
            q = w.thresholds(spec.lib, [{"arange": 99, "alpha": 0.1}])[0]
            libs = w.libs
    except PeerError as e:
        return _fail(name, "installed, but the worker cannot run it", [str(python)], str(e))
    info = {"python": str(python), "peer": spec.lib, "versions": libs,
            "check": f"threshold at n = 99, alpha = 0.1 on scores 1..99: {q}"}
    write_json(where / "ready.json", info)
    print(f"{name}: ready ({spec.lib} {libs.get(spec.lib)}, numpy {libs.get('numpy')}; "
          f"{info['check']})", file=sys.stderr)
    return 0


def add_root_flag(ap: argparse.ArgumentParser) -> None:
    """``--root``, shared with ``bench/run.py``."""
    ap.add_argument("--root", type=Path, default=None,
                    help=f"folder of the peer environments (default: ${ROOT_VARIABLE}, else "
                         f"bench/.envs beside {HERE}; now {ROOT})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("peers", nargs="*", metavar="PEER",
                    help=f"which environments: {', '.join(SPECS)} (default: all)")
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter the environments are made from (default: this one)")
    ap.add_argument("--recreate", action="store_true", help="delete and rebuild them")
    add_root_flag(ap)
    args = ap.parse_args(argv)
    set_root(args.root)
    unknown = sorted(set(args.peers) - set(SPECS))
    if unknown:
        ap.error(f"unknown peer {', '.join(unknown)} (known: {', '.join(SPECS)})")
    ROOT.mkdir(parents=True, exist_ok=True)
    codes = [create(name, args.python, args.recreate) for name in args.peers or SPECS]
    return max(codes, default=0)


if __name__ == "__main__":
    raise SystemExit(main())
