"""The bench side of ``peer_worker.py``: start a worker under another interpreter, hand
it the data once, and time its contender round by round alongside the local ones.

A :class:`PeerWorker` is one child process (one peer environment). :meth:`PeerWorker.stage`
writes arrays to ``.npy`` files in the worker's temporary folder, has the worker load
them and deletes the files; :meth:`PeerWorker.cell` sets up one contender and returns a
:class:`RemoteCell`, which ``timing.interleaved`` drives like a local contender (its
``warm`` and ``time`` run in the worker, timed there). A worker that dies or answers
out of protocol raises :class:`PeerError` naming the peer, its exit code and the end of
its stderr.
"""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

WORKER = Path(__file__).with_name("peer_worker.py")


class PeerError(RuntimeError):
    """A peer worker died, could not start, or refused a request."""


class PeerWorker:
    """One worker process running ``peer_worker.py`` under ``python``."""

    def __init__(self, name: str, python: str | Path, timeout: float = 600.0) -> None:
        self.name, self.python, self.timeout = name, str(python), timeout
        self.tmp = Path(tempfile.mkdtemp(prefix=f"cover-bench-{name}-"))
        self._stderr = (self.tmp / "stderr.txt").open("w+b")
        self._ids = itertools.count()
        self.proc = subprocess.Popen(
            [self.python, str(WORKER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self._stderr, text=True, bufsize=1)
        try:
            self.info = self._read()
        except PeerError:
            self.close()
            raise
        self.libs: dict[str, str | None] = self.info.get("libs", {})

    # --- protocol ----------------------------------------------------------------------
    def _died(self, what: str) -> PeerError:
        code = self.proc.poll()
        self._stderr.flush()
        self._stderr.seek(0)
        tail = self._stderr.read().decode(errors="replace").strip().splitlines()[-8:]
        state = f"exited with code {code}" if code is not None else "is still running"
        return PeerError(f"peer worker {self.name!r} ({self.python}, pid {self.proc.pid}) "
                         f"{what}: it {state}" + ("; stderr:\n  " + "\n  ".join(tail)
                                                  if tail else "; no stderr"))

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout=10)
            raise self._died("sent no answer")
        try:
            msg = json.loads(line)
        except json.JSONDecodeError as e:
            raise self._died(f"answered out of protocol ({line[:80]!r})") from e
        if not msg.get("ok"):
            raise PeerError(f"peer worker {self.name!r}: {msg.get('error')}\n"
                            f"{msg.get('traceback', '')}".rstrip())
        return dict(msg)

    def request(self, cmd: str, **fields: Any) -> dict[str, Any]:
        """Send one request and return the answer (:class:`PeerError` when it fails)."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps({"cmd": cmd, **fields}) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            self.proc.wait(timeout=10)
            raise self._died(f"could not be sent {cmd!r}") from e
        return self._read()

    # --- data and cells ----------------------------------------------------------------
    def stage(self, arrays: dict[str, Any]) -> list[str]:
        """Load ``arrays`` into the worker under fresh names; returns the names in order."""
        names, files = [], {}
        for role, arr in arrays.items():
            name = f"{role}.{next(self._ids)}"
            path = self.tmp / f"{name}.npy"
            np.save(path, np.ascontiguousarray(arr, dtype=np.float64))
            names.append(name)
            files[name] = str(path)
        try:
            self.request("load", arrays=files)
        finally:
            for path in files.values():
                Path(path).unlink(missing_ok=True)
        return names

    def free(self, names: list[str]) -> None:
        self.request("free", names=names)

    def cell(self, lib: str, kind: str, inputs: dict[str, str],
             params: dict[str, Any]) -> RemoteCell:
        return RemoteCell(self, f"c{next(self._ids)}", lib, kind, inputs, params)

    def thresholds(self, lib: str, cases: list[dict[str, Any]]) -> list[float | str]:
        """The peer's threshold for each case (``{"scores": [...] | "arange": n,
        "alpha": a}``); a refusal is the string ``"raises: ..."``."""
        return list(self.request("thresholds", lib=lib, cases=cases)["values"])

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.request("quit")
            except PeerError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:  # unsent bytes to a worker that is gone
                    pass
        self._stderr.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> PeerWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RemoteCell:
    """One contender in a worker, driven by ``timing.interleaved`` (``warm``, ``time``)."""

    def __init__(self, worker: PeerWorker, cell: str, lib: str, kind: str,
                 inputs: dict[str, str], params: dict[str, Any]) -> None:
        self.worker, self.id = worker, cell
        self.request = {"cell": cell, "lib": lib, "kind": kind, "inputs": inputs,
                        "params": params, "out": str(worker.tmp / cell)}

    def warm(self) -> tuple[Any, float]:
        """Set the cell up and call it once: (its result, seconds of that call)."""
        ans = self.worker.request("cell", **self.request)
        res = ans["result"]
        if "threshold" in res:
            return float(res["threshold"]), float(ans["seconds"])
        out = []
        for key in ("lo", "hi"):
            out.append(np.load(res[key]))
            Path(res[key]).unlink(missing_ok=True)
        return tuple(out), float(ans["seconds"])

    def time(self, number: int) -> float:
        """Seconds per call over ``number`` calls, measured in the worker."""
        return float(self.worker.request("time", cell=self.id, number=number)["seconds"])

    def close(self) -> None:
        self.worker.request("drop", cell=self.id)
