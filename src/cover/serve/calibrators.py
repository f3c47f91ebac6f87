"""The service's calibrators: one immutable set, swapped whole on reload.

A request takes :attr:`Live.current` once and uses only that object, so it sees the
old set or the new one, never a mix (the swap is one reference assignment). A reload
that fails (a file gone, a calibrator that does not validate) keeps the old set and
says why.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from cover.calibrate.calibrator import Calibrator
from cover.errors import InputError
from cover.io.video_index import VideoIndex
from cover.stream.jsonl import CertifyKernel


@dataclass(frozen=True)
class Loaded:
    """One named calibrator with its certify kernels (full rows and compact rows)."""

    name: str
    path: str
    sha256: str
    cal: Calibrator
    kernel: CertifyKernel
    compact: CertifyKernel

    def describe(self) -> dict[str, Any]:
        cal = self.cal
        return {"name": self.name, "path": self.path, "file_sha256": self.sha256,
                "score": cal.score, "rule": cal.rule, "alpha": float(cal.alpha_fraction),
                "groups": cal.groups, "k": cal.k_, "n_calibration": cal.n_,
                "threshold": _number(cal.threshold_)}


def _number(x: Any) -> Any:
    if x is None:
        return None
    x = float(x)
    return x if np.isfinite(x) else ("inf" if x > 0 else "-inf" if x < 0 else None)


@dataclass(frozen=True)
class CalibratorSet:
    """Every calibrator the service certifies with, by name; the first is the default."""

    by_name: MappingProxyType[str, Loaded]
    default: str
    generation: int

    def get(self, name: str | None) -> Loaded:
        """The calibrator ``name`` (the default when None); InputError naming the known
        ones otherwise."""
        key = self.default if name is None else name
        got = self.by_name.get(key)
        if got is None:
            raise InputError(f"calibrator: no calibrator named {key!r} (this service has "
                             f"{', '.join(sorted(self.by_name))})")
        return got


@dataclass(frozen=True)
class Sources:
    """Where the calibrators come from and how rows are read: fixed for the process."""

    calibrators: tuple[tuple[str, str], ...]
    videos: VideoIndex | None
    videos_source: str
    clip: float
    strict: bool


def load_set(src: Sources, generation: int) -> CalibratorSet:
    """Read every calibrator file of ``src`` (all or none: any error raises)."""
    out: dict[str, Loaded] = {}
    for name, path in src.calibrators:
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise InputError(f"--calibrator {name}={path}: cannot read the file "
                             f"({exc.strerror})") from None
        cal = Calibrator.load(path)
        kernel = CertifyKernel.of(cal, videos=src.videos, videos_source=src.videos_source,
                                  clip=src.clip, strict=src.strict)
        out[name] = Loaded(name, path, hashlib.sha256(data).hexdigest(), cal, kernel,
                           dataclasses.replace(kernel, compact=True))
    return CalibratorSet(MappingProxyType(out), src.calibrators[0][0], generation)


class Live:
    """The current :class:`CalibratorSet`; :meth:`reload` builds a new one and swaps it
    in (one at a time: a lock serialises reloads, never requests)."""

    def __init__(self, src: Sources) -> None:
        self.src = src
        self.current = load_set(src, 1)
        self._lock = threading.Lock()

    def reload(self) -> CalibratorSet:
        """Read the files again and swap; the old set stays when anything fails."""
        with self._lock:
            new = load_set(self.src, self.current.generation + 1)
            self.current = new
            return new
