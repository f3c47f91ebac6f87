"""Create the virtual environments of the peers that cannot share COVER's.

    .venv/bin/python bench/peer_envs.py                 # puncc and torchcp
    .venv/bin/python bench/peer_envs.py puncc --recreate

Each peer gets ``bench/.envs/<peer>/`` (git-ignored), installed from PyPI with pip,
then checked by starting ``peer_worker.py`` in it and computing one threshold. Success
leaves ``bench/.envs/<peer>/ready.json`` (interpreter and versions), which
``bench/run.py`` looks for; a failed install leaves ``bench/.envs/<peer>.failed`` with
the pip command and the end of its output, and the bench row quotes its first line.

* **puncc** pins ``numpy < 2`` (COVER's environment has numpy 2).
* **torchcp** needs torch; PyPI serves only the CUDA build (about 3 GB with its nvidia
  libraries; it runs on the CPU when no GPU is present). Its dependency torchsort is a
  source package that builds a CUDA extension whenever an ``nvcc`` answers on the PATH,
  which fails on a machine without a GPU, so folders holding ``nvcc`` are left off the
  PATH of the install: torchsort then builds its CPU extension only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().with_name(".envs")
HERE = "bench/peer_envs.py"


@dataclass(frozen=True)
class Spec:
    packages: tuple[str, ...]
    lib: str  # the library name the worker reports (its distribution name)
    hide_nvcc: bool = False


SPECS = {
    "puncc": Spec(("numpy<2", "puncc"), "puncc"),
    "torchcp": Spec(("torchcp",), "torchcp", hide_nvcc=True),
}


def env_dir(name: str) -> Path:
    return ROOT / name


def setup_command(name: str) -> str:
    return f"`.venv/bin/python {HERE} {name}`"


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
        return f"could not be installed ({why}; see bench/.envs/{name}.failed)"
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
    cmd = [str(python), "-m", "pip", "install", *spec.packages]
    print(f"{name}: {' '.join(cmd[2:])} into {where} (torch downloads take minutes)",
          file=sys.stderr, flush=True)
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("peers", nargs="*", metavar="PEER",
                    help=f"which environments: {', '.join(SPECS)} (default: all)")
    ap.add_argument("--python", default=sys.executable,
                    help="interpreter the environments are made from (default: this one)")
    ap.add_argument("--recreate", action="store_true", help="delete and rebuild them")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.peers) - set(SPECS))
    if unknown:
        ap.error(f"unknown peer {', '.join(unknown)} (known: {', '.join(SPECS)})")
    ROOT.mkdir(parents=True, exist_ok=True)
    codes = [create(name, args.python, args.recreate) for name in args.peers or SPECS]
    return max(codes, default=0)


if __name__ == "__main__":
    raise SystemExit(main())
