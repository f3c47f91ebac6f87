"""The paper's study protocol: a unit-level split and resamples of the pool."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

PAPER_ALPHAS: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5)


@dataclass(frozen=True)
class Protocol:
    """Split units ``cal_frac`` / ``1 - cal_frac`` into calibration pool / test with
    ``seed``; estimate variability from ``n_resamples`` draws of ``resample_frac`` of
    the pool's units; evaluate every ``alpha`` of the grid independently."""

    cal_frac: float = 0.4
    seed: int = 42
    n_resamples: int = 50
    resample_frac: float = 0.5
    alphas: tuple[float, ...] = PAPER_ALPHAS

    def __post_init__(self) -> None:
        if not 0 < self.cal_frac < 1:
            raise ValueError(f"cal_frac must be in (0, 1), got {self.cal_frac}")
        if not 0 < self.resample_frac <= 1:
            raise ValueError(f"resample_frac must be in (0, 1], got {self.resample_frac}")
        if self.n_resamples < 0 or self.n_resamples == 1:  # one resample: a spread of 0
            raise ValueError(f"n_resamples must be 0 (the whole pool once) or >= 2 (the "
                             f"spread over resamples needs two), got {self.n_resamples}")
        if not self.alphas or not all(0 < a < 1 for a in self.alphas):
            raise ValueError(f"alphas must be a non-empty list in (0, 1), got {self.alphas}")
        if len(set(self.alphas)) != len(self.alphas):  # a repeated row of every table
            raise ValueError(f"alphas must be distinct, got {self.alphas}")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["alphas"] = list(self.alphas)
        return d
