"""A benchmark contender living in another Python environment, driven over stdin/stdout.

Some peers cannot share COVER's environment (puncc pins numpy < 2). The main bench
process (``peer_client.py``) starts this script with the peer environment's own
interpreter and talks to it in JSON lines; this file imports only the standard
library, numpy and the peer, never COVER. The data arrives once as ``.npy`` files; the
parent then asks for a warm-up call of one cell and, round by round, for timed calls,
so contenders in different environments are still interleaved round by round
(``timing.py``). Every time is measured here with ``time.perf_counter`` around the
peer's own work, not around the pipe.

Requests and answers (one JSON object per line; every answer has ``ok``)::

    (on start)                                         <- {"ok": true, "python": ..., "libs": {...}}
    {"cmd": "load", "arrays": {"name": "/tmp/x.npy"}}  <- {"ok": true}
    {"cmd": "cell", "cell": "c1", "lib": "puncc", "kind": "threshold",
     "inputs": {"residuals": "name"}, "params": {"alpha": 0.1}, "out": "/tmp/c1"}
                                     <- {"ok": true, "seconds": 0.01, "result": {...}}
    {"cmd": "time", "cell": "c1", "number": 5}         <- {"ok": true, "seconds": 0.009}
    {"cmd": "thresholds", "lib": "puncc", "cases": [{"arange": 9, "alpha": 0.1}]}
                                                       <- {"ok": true, "values": [9.0]}
    {"cmd": "drop", "cell": "c1"} / {"cmd": "free", "names": [...]} / {"cmd": "quit"}

A failing request answers ``{"ok": false, "error": "Type: message"}`` and the worker
keeps serving; a threshold the peer refuses to compute is the string ``"raises: ..."``.
"""

from __future__ import annotations

import json
import math
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable
from importlib import metadata
from typing import Any

import numpy as np

F = Any  # a float64 array (numpy typing stubs differ between the environments)
LIBS = ("numpy", "puncc", "torchcp", "torch")


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


# --- thresholds: the k-th smallest residual as each library computes it ---------------

def numpy_threshold(residuals: F, alpha: float) -> float:
    """The 5-line script: rank ``ceil((n + 1)(1 - alpha))`` in floats, ``np.partition``."""
    k = math.ceil((residuals.size + 1) * (1 - alpha))
    if k > residuals.size:
        return math.inf
    return float(np.partition(residuals, k - 1)[k - 1])


def puncc_threshold() -> Callable[[F, float], float]:
    """puncc ``SplitCP`` on precomputed predictions (``IdPredictor``, ``train=False``):
    predictions 0, targets = the residuals; the threshold is the upper end of a one-row
    interval at prediction 0. (puncc: ``np.quantile(..., method="inverted_cdf")`` at
    level ``1 - alpha`` of the residuals with ``+inf`` appended.)"""
    from deel.puncc.api.prediction import IdPredictor
    from deel.puncc.regression import SplitCP

    def threshold(residuals: F, alpha: float) -> float:
        cp = SplitCP(IdPredictor(), train=False)
        cp.fit(X_calib=np.zeros(residuals.size), y_calib=residuals)
        _, _, hi = cp.predict(np.zeros(1), alpha=alpha)
        return float(np.asarray(hi).ravel()[0])
    return threshold


def torchcp_threshold() -> Callable[[F, float], float]:
    """TorchCP ``SplitPredictor`` with the ``ABS`` score and an identity model:
    ``calibrate`` gets the calibration set as one batch ``(x = 0, y = residuals)``, the
    pair a ``DataLoader`` with ``batch_size = n`` yields (without collating row by row),
    as CPU float64 tensors; the threshold is its ``q_hat``. (TorchCP: ``torch.kthvalue``
    at rank ``ceil((n + 1)(1 - alpha))`` in floating point, ``inf`` beyond n.)"""
    import torch
    from torchcp.regression.predictor import SplitPredictor
    from torchcp.regression.score import ABS

    def threshold(residuals: F, alpha: float) -> float:
        y = torch.from_numpy(residuals)
        predictor = SplitPredictor(score_function=ABS(), model=torch.nn.Identity(),
                                   alpha=alpha, device="cpu")
        predictor.calibrate([(torch.zeros((y.shape[0], 1), dtype=y.dtype), y)], alpha=alpha)
        q = predictor.q_hat
        return float(q.reshape(-1)[0]) if isinstance(q, torch.Tensor) else float(q)
    return threshold


_LOADERS: dict[str, Callable[[], Callable[[F, float], float]]] = {
    "numpy": lambda: numpy_threshold, "puncc": puncc_threshold, "torchcp": torchcp_threshold}
_LOADED: dict[str, Callable[[F, float], float]] = {}


def threshold_of(lib: str) -> Callable[[F, float], float]:
    """The library's threshold function, imported on first use (outside any timing)."""
    if lib not in _LOADED:
        if lib not in _LOADERS:
            raise ValueError(f"unknown library {lib!r} ({', '.join(_LOADERS)})")
        _LOADED[lib] = _LOADERS[lib]()
    return _LOADED[lib]


# --- calibrate + certify: NORM scores, the library's threshold, numpy widen and clip ---

def pipeline(threshold: Callable[[F, float], float], a: dict[str, F], alpha: float,
             min_scale: float, residuals: bool) -> tuple[F, F]:
    """NORM scores ``max((ps - ts) / l, (te - pe) / l)`` with ``l = max(pe - ps, min_scale)``
    of the calibration rows, the threshold (a peer's on ``max(S, 0)``, its residuals, when
    ``residuals``), then the test intervals ``[max(ps - q l, 0), min(pe + q l, T)]``."""
    scale = np.maximum(a["cal_pe"] - a["cal_ps"], min_scale)
    s = np.maximum((a["cal_ps"] - a["cal_ts"]) / scale, (a["cal_te"] - a["cal_pe"]) / scale)
    q = threshold(np.maximum(s, 0.0) if residuals else s, alpha)
    ps, pe = a["test_ps"], a["test_pe"]
    scale = np.maximum(pe - ps, min_scale)
    return np.maximum(ps - q * scale, 0.0), np.minimum(pe + q * scale, a["test_T"])


def make_call(lib: str, kind: str, a: dict[str, F], params: dict[str, Any]) -> Callable[[], Any]:
    threshold = threshold_of(lib)
    alpha = float(params["alpha"])
    if kind == "threshold":
        residuals = a["residuals"]
        return lambda: threshold(residuals, alpha)
    if kind == "pipeline":
        min_scale, peer = float(params["min_scale"]), lib != "numpy"
        return lambda: pipeline(threshold, a, alpha, min_scale, peer)
    raise ValueError(f"unknown kind {kind!r} (threshold, pipeline)")


def _scores(case: dict[str, Any]) -> F:
    if "arange" in case:
        return np.arange(1.0, case["arange"] + 1.0)
    return np.asarray(case["scores"], dtype=np.float64)


class Worker:
    """The state between requests: loaded arrays and the cells set up so far."""

    def __init__(self) -> None:
        self.arrays: dict[str, F] = {}
        self.cells: dict[str, tuple[Callable[[], Any], dict[str, Any]]] = {}

    def hello(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "python": platform.python_version(),
                "executable": sys.executable,
                "libs": {lib: _version(lib) for lib in LIBS}}

    def handle(self, req: dict[str, Any]) -> dict[str, Any]:
        cmd = req.get("cmd")
        if cmd == "load":
            for name, path in req["arrays"].items():
                self.arrays[name] = np.load(path)
            return {}
        if cmd == "free":
            for name in req["names"]:
                self.arrays.pop(name, None)
            return {}
        if cmd == "cell":
            a = {role: self.arrays[name] for role, name in req["inputs"].items()}
            fn = make_call(req["lib"], req["kind"], a, req.get("params", {}))
            t0 = time.perf_counter()
            out = fn()
            seconds = time.perf_counter() - t0
            self.cells[req["cell"]] = (fn, req)
            return {"seconds": seconds, "result": self._result(out, req["out"])}
        if cmd == "time":
            fn, _ = self.cells[req["cell"]]
            number = int(req["number"])
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            return {"seconds": (time.perf_counter() - t0) / number}
        if cmd == "drop":
            self.cells.pop(req["cell"], None)
            return {}
        if cmd == "thresholds":
            return {"values": [self._threshold(req["lib"], c) for c in req["cases"]]}
        raise ValueError(f"unknown command {cmd!r}")

    @staticmethod
    def _result(out: Any, prefix: str) -> dict[str, Any]:
        if isinstance(out, float):
            return {"threshold": out}
        paths = {}
        for key, arr in zip(("lo", "hi"), out, strict=True):
            paths[key] = f"{prefix}_{key}.npy"
            np.save(paths[key], np.asarray(arr, dtype=np.float64))
        return paths

    @staticmethod
    def _threshold(lib: str, case: dict[str, Any]) -> float | str:
        threshold = threshold_of(lib)  # a peer not installed here fails the request
        try:
            return threshold(_scores(case), float(case["alpha"]))
        except Exception as e:  # the peer refuses this (n, alpha): reported, not fatal
            return f"raises: {type(e).__name__}: {e}"


def main() -> int:
    # Answers go to the original stdout; anything a library prints goes to stderr.
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    worker = Worker()

    def send(msg: dict[str, Any]) -> None:
        proto.write(json.dumps(msg) + "\n")
        proto.flush()

    send({"ok": True, **worker.hello()})
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            if req.get("cmd") == "quit":
                send({"ok": True})
                return 0
            send({"ok": True, **worker.handle(req)})
        except Exception as e:
            send({"ok": False, "error": f"{type(e).__name__}: {e}",
                  "traceback": traceback.format_exc()})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
