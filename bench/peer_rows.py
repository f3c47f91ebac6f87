"""Peers in environments of their own (puncc, TorchCP): their workers and table rows.

:class:`Peers` starts one ``peer_worker.py`` per environment that ``peer_envs.py`` made
ready and builds the rows of tables a) and d) and the agreement columns from them. A
peer without an environment still gets its rows, saying why and how to create it.
Inside each environment the worker also times the numpy script when that environment's
numpy is not the bench's own, so a peer's time can be read against numpy at the same
version (puncc runs on numpy 1.x).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import peer_envs
from peer_client import PeerError, PeerWorker, RemoteCell
from stages import ALPHA, Check, Entry

from cover.scores import DEFAULT_MIN_SCALE as MIN_SCALE

#: env name -> (label in the tables, what the threshold call is)
LABELS = {
    "puncc": ("puncc", "SplitCP(IdPredictor(), train=False) fit + predict"),
    "torchcp": ("TorchCP", "SplitPredictor(ABS(), identity model) calibrate (one batch)"),
}


class Peers:
    """The running peer workers, and why the others are absent."""

    def __init__(self, names: list[str], log: Callable[[str], None] | None = None) -> None:
        self.names = [n for n in LABELS if n in names]  # table order
        self.workers: dict[str, PeerWorker] = {}
        self.missing: dict[str, str] = {}
        for name in self.names:
            info = peer_envs.ready(name)
            if info is None:
                self.missing[name] = peer_envs.missing_reason(name)
            else:
                try:
                    self.workers[name] = PeerWorker(name, str(info["python"]))
                except PeerError as e:
                    self.missing[name] = f"worker failed to start ({str(e).splitlines()[0]})"
            if log:
                log(f"peer {name}: {self.missing.get(name) or self.workers[name].libs}")

    def versions(self) -> list[str]:
        out = []
        for name, w in self.workers.items():
            torch = f"torch {w.libs['torch']}, " if w.libs.get("torch") else ""
            out.append(f"{LABELS[name][0]} {w.libs.get(name)} (own environment: {torch}numpy "
                       f"{w.libs.get('numpy')}, Python {w.info.get('python')})")
        out += [f"{LABELS[n][0]} {why}" for n, why in self.missing.items()]
        return out

    def close(self) -> None:
        for w in self.workers.values():
            w.close()

    def _own_numpy(self, w: PeerWorker) -> bool:
        return w.libs.get("numpy") != np.__version__

    @contextmanager
    def _cells(self, arrays: dict[str, Any], kind: str, params: dict[str, Any],
               rows: Callable[[str, PeerWorker], list[tuple[str, str]]], ref: str,
               check: Check) -> Iterator[list[Entry]]:
        """Stage ``arrays`` in every worker, one entry per (row, lib); freed afterwards."""
        entries: list[Entry] = []
        staged: list[tuple[PeerWorker, list[str], list[RemoteCell]]] = []
        try:
            for name in self.names:
                w = self.workers.get(name)
                if w is None:
                    entries.append(Entry(rows(name, w)[0][0], ref, None, check,
                                         why=self.missing[name]))
                    continue
                names = w.stage(arrays)
                inputs = dict(zip(arrays, names, strict=True))
                cells = []
                for label, lib in rows(name, w):
                    cell = w.cell(lib, kind, inputs, params)
                    cells.append(cell)
                    entries.append(Entry(label, ref, None, check, remote=cell))
                staged.append((w, names, cells))
            yield entries
        finally:
            for w, names, cells in staged:
                if w.proc.poll() is None:
                    for cell in cells:
                        cell.close()
                    w.free(names)

    def threshold_entries(self, residuals: Any, ref: str,
                          check: Check) -> Any:
        """Table a): each peer's threshold of the residuals ``max(S, 0)``."""
        def rows(name: str, w: PeerWorker | None) -> list[tuple[str, str]]:
            label, call = LABELS[name]
            out = [(f"{label} {call} (own environment)", name)]
            if w is not None and self._own_numpy(w):
                out.append((f"numpy float ceil + np.partition in the {label} environment "
                            f"(numpy {w.libs.get('numpy')})", "numpy"))
            return out
        return self._cells({"residuals": residuals}, "threshold", {"alpha": ALPHA}, rows,
                           ref, check)

    def pipeline_entries(self, cal: Any, test: Any, ref: str, check: Check) -> Any:
        """Table d): NORM scores, the peer's threshold on ``max(S, 0)``, numpy widen/clip."""
        def rows(name: str, w: PeerWorker | None) -> list[tuple[str, str]]:
            label, call = LABELS[name]
            out = [(f"{label} {call} (threshold) + numpy widen/clip (own environment)",
                    name)]
            if w is not None and self._own_numpy(w):
                out.append((f"numpy NORM scores + np.partition + widen/clip in the {label} "
                            f"environment (numpy {w.libs.get('numpy')})", "numpy"))
            return out
        arrays = {"cal_ps": cal.ps, "cal_pe": cal.pe, "cal_ts": cal.ts, "cal_te": cal.te,
                  "test_ps": test.ps, "test_pe": test.pe, "test_T": test.T}
        return self._cells(arrays, "pipeline", {"alpha": ALPHA, "min_scale": MIN_SCALE},
                           rows, ref, check)

    def thresholds(self, cases: list[dict[str, Any]]) -> dict[str, list[float | str]]:
        """Agreement: every peer's threshold per case; a missing peer gives its reason."""
        out: dict[str, list[float | str]] = {}
        for name in self.names:
            label, w = LABELS[name][0], self.workers.get(name)
            if w is None:
                out[label] = ["no environment"] * len(cases)
            else:
                out[label] = ["raises" if isinstance(v, str) else v
                              for v in w.thresholds(name, cases)]
        return out
