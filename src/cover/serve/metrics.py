"""Counters and latency histograms of the service, and their Prometheus text exposition
(format 0.0.4, written here: no client library needed).

Updated from the event loop only (after a request's work returns), so plain integers
suffice.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

#: Latency bucket upper bounds in seconds (Prometheus' default buckets).
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


@dataclass
class Histogram:
    """Cumulative-bucket histogram of one endpoint's latencies."""

    counts: list[int] = field(default_factory=lambda: [0] * (len(BUCKETS) + 1))
    total: float = 0.0
    n: int = 0

    def observe(self, seconds: float) -> None:
        self.counts[bisect.bisect_left(BUCKETS, seconds)] += 1
        self.total += seconds
        self.n += 1


@dataclass
class Metrics:
    """Everything ``/metrics`` and ``/v1/status`` report about traffic."""

    requests: Counter[tuple[str, int]] = field(default_factory=Counter)
    rows: Counter[str] = field(default_factory=Counter)
    latency: dict[str, Histogram] = field(default_factory=dict)
    #: Proxy mode: answers by ``cover.status`` and by parse class, upstream failures by
    #: kind, and the upstream's own latency (request sent to response read).
    proxied: Counter[str] = field(default_factory=Counter)
    parses: Counter[str] = field(default_factory=Counter)
    upstream_errors: Counter[str] = field(default_factory=Counter)
    upstream: Histogram = field(default_factory=Histogram)

    def request(self, path: str, status: int, seconds: float) -> None:
        self.requests[(path, status)] += 1
        self.latency.setdefault(path, Histogram()).observe(seconds)

    def certified(self, counts: dict[str, int]) -> None:
        for k in ("certified", "refused", "rejected"):
            self.rows[k] += counts.get(k, 0)

    def answered(self, status: str, parse: str) -> None:
        """One proxied answer, certified (or not) as ``status``, parsed as ``parse``."""
        self.proxied[status] += 1
        self.parses[parse] += 1

    def summary(self) -> dict[str, Any]:
        by_path: Counter[str] = Counter()
        for (path, _), n in self.requests.items():
            by_path[path] += n
        up = self.upstream
        return {"requests": dict(by_path), "rows": {k: self.rows[k] for k in
                                                    ("certified", "refused", "rejected")},
                "proxy": {"answers": dict(self.proxied), "parse": dict(self.parses),
                          "upstream_errors": dict(self.upstream_errors),
                          "upstream_calls": up.n,
                          "upstream_mean_seconds": round(up.total / up.n, 6) if up.n else None}}


def _num(x: float | int | None) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "NaN"
    if isinstance(x, float) and math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return repr(x) if isinstance(x, float) else str(int(x))


def _label(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _histogram(name: str, lab: str, h: Histogram) -> list[str]:
    """The bucket, sum and count lines of ``h`` with labels ``lab`` (may be empty)."""
    out, run, sep = [], 0, "," if lab else ""
    for le, c in zip([*map(str, BUCKETS), "+Inf"], h.counts, strict=True):
        run += c
        out.append(f'{name}_bucket{{{lab}{sep}le="{le}"}} {run}')
    tail = f"{{{lab}}}" if lab else ""
    return [*out, f"{name}_sum{tail} {h.total!r}", f"{name}_count{tail} {h.n}"]


def exposition(m: Metrics, gauges: list[tuple[str, str, dict[str, str], float | None]]
               ) -> str:
    """The Prometheus text of ``m`` plus ``gauges`` (``(name, help, labels, value)``)."""
    out = ["# HELP cover_requests_total HTTP requests by path and status code.",
           "# TYPE cover_requests_total counter"]
    for (path, code), n in sorted(m.requests.items()):
        out.append(f'cover_requests_total{{path="{_label(path)}",code="{code}"}} {n}')
    out += ["# HELP cover_rows_total Rows certified, refused (whole video) or rejected.",
            "# TYPE cover_rows_total counter"]
    for k in ("certified", "refused", "rejected"):
        out.append(f'cover_rows_total{{status="{k}"}} {m.rows[k]}')
    out += ["# HELP cover_request_seconds Request latency by path.",
            "# TYPE cover_request_seconds histogram"]
    for path, h in sorted(m.latency.items()):
        out += _histogram("cover_request_seconds", f'path="{_label(path)}"', h)
    for name, text, label, counts in (
            ("cover_proxy_answers_total", "Proxied answers by cover status.", "status",
             m.proxied),
            ("cover_proxy_parse_total", "Proxied answers by parse class.", "parse", m.parses),
            ("cover_upstream_errors_total", "Upstream failures by kind.", "kind",
             m.upstream_errors)):
        out += [f"# HELP {name} {text}", f"# TYPE {name} counter"]
        out += [f'{name}{{{label}="{_label(k)}"}} {n}' for k, n in sorted(counts.items())]
    out += ["# HELP cover_upstream_seconds Upstream chat-completion latency (proxy mode).",
            "# TYPE cover_upstream_seconds histogram",
            *_histogram("cover_upstream_seconds", "", m.upstream)]
    seen: set[str] = set()
    for name, text, labels, value in gauges:
        if name not in seen:
            out += [f"# HELP {name} {text}", f"# TYPE {name} gauge"]
            seen.add(name)
        lab = ",".join(f'{k}="{_label(v)}"' for k, v in labels.items())
        out.append(f"{name}{{{lab}}} {_num(value)}" if lab else f"{name} {_num(value)}")
    return "\n".join(out) + "\n"
