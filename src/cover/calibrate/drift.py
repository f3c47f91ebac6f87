"""A drift alarm: a conformal test martingale on the stream of scores (Vovk, Nouretdinov
& Gammerman 2003; Vovk 2021, "Testing randomness online").

Each new score ``s_t`` gets its smoothed conformal p-value against the scores before it,
``p_t = (#{i < t : s_i > s_t} + u_t (#{i <= t : s_i = s_t})) / t``, ``u_t`` uniform on
``[0, 1]``. If the stream is exchangeable (the traffic still looks like itself) the
``p_t`` are independent uniforms, and any betting martingale on them,
``S_t = prod_j f_j(p_j)`` with ``integral f = 1``, has ``P(sup_t S_t >= 1/delta) <= delta``
(Ville's inequality): the alarm at ``1/delta`` is false with probability at most
``delta`` over the whole stream, however long.

The betting functions are the *simple jumper* (Vovk 2021): three bettors
``f_e(p) = 1 + e (p - 1/2)``, ``e in {-1, 0, 1}``, each round a fraction ``jump`` of the
capital redistributed evenly among them. Scores growing after a shift (a worse
grounder, harder queries) give small p-values: the ``e = -1`` bettor wins.
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass, field

#: Bettors' slopes of the simple jumper.
EPSILONS = (-1.0, 0.0, 1.0)


def tie_break(key: str) -> float:
    """A uniform ``u`` in ``[0, 1)`` fixed by ``key`` (a query id): a restart that replays
    the same feedback computes the same p-values."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2.0 ** 64


@dataclass
class DriftMonitor:
    """Simple-jumper conformal test martingale with an alarm at ``1 / delta``."""

    delta: float = 0.01
    jump: float = 0.01
    scores: list[float] = field(default_factory=list)
    capital: list[float] = field(default_factory=lambda: [1 / 3] * 3)
    max_value: float = 1.0
    alarm_at: int | None = None

    def __post_init__(self) -> None:
        if not 0 < self.delta < 1:
            raise ValueError(f"delta must be in (0, 1), got {self.delta}")

    @property
    def value(self) -> float:
        """The martingale's current value ``S_t``."""
        return sum(self.capital)

    @property
    def alarm(self) -> bool:
        """Whether ``S_t`` has reached ``1 / delta`` (it stays raised: Ville bounds the
        chance that it ever does)."""
        return self.alarm_at is not None

    @property
    def t(self) -> int:
        return len(self.scores)

    def p_value(self, score: float, u: float) -> float:
        """The smoothed conformal p-value of ``score`` against the scores so far."""
        lo = bisect.bisect_left(self.scores, score)
        hi = bisect.bisect_right(self.scores, score)
        greater, equal = len(self.scores) - hi, hi - lo + 1
        return (greater + u * equal) / (len(self.scores) + 1)

    def update(self, score: float, u: float) -> float:
        """Add ``score`` (``u``: its tie-break uniform); returns its p-value."""
        p = self.p_value(score, u)
        bisect.insort(self.scores, score)
        total = self.value
        self.capital = [((1 - self.jump) * c + self.jump * total / 3) * (1 + e * (p - 0.5))
                        for c, e in zip(self.capital, EPSILONS, strict=True)]
        v = self.value
        self.max_value = max(self.max_value, v)
        if self.alarm_at is None and v >= 1 / self.delta:
            self.alarm_at = self.t
        return p
