"""The online-calibration figure (needs the ``plot`` extra): rolling miss rate of ACI and
of the fixed split-conformal threshold along a replayed stream, and ACI's level alpha_t."""

from __future__ import annotations

import io

import numpy as np
from numpy.typing import NDArray

from cover.calibrate.online import AciRecord, rolling_mean


def miss_rate_figure(rec: AciRecord, split_miss: NDArray[np.bool_], *, window: int,
                     switch_step: int | None = None, title: str = "") -> bytes:
    """PNG bytes: top, the trailing-window miss rate (over ``window`` steps) of ACI's
    record ``rec`` and of the fixed split-conformal threshold (``split_miss``) against
    alpha, and the switch point, if any; bottom, ACI's working level alpha_t."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("figures need matplotlib: pip install 'cover-grounding[plot]'") \
            from exc
    t = np.arange(1, rec.miss.size + 1)
    a = float(rec.alpha)
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(7.0, 4.8), sharex=True,
                                  gridspec_kw={"height_ratios": [2.2, 1]})
    ax.plot(t, rolling_mean(split_miss, window), color="#d62728", lw=1.3,
            label=f"split conformal (fixed threshold), overall {split_miss.mean():.3f}")
    ax.plot(t, rolling_mean(rec.miss, window), color="#1f77b4", lw=1.3,
            label=f"online ACI (gamma={float(rec.gamma):g}), overall {rec.miss_rate:.3f}")
    ax.axhline(a, color="black", ls="--", lw=1, label=f"target alpha = {a:g}")
    ax2.plot(t, rec.alpha_t, color="#1f77b4", lw=1)
    ax2.axhline(a, color="black", ls="--", lw=1)
    for axis in (ax, ax2):
        if switch_step is not None:
            axis.axvline(switch_step + 0.5, color="grey", ls=":", lw=1.2)
        axis.grid(alpha=0.3)
    ax.set_ylabel(f"miss rate (last {window})")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, loc="best")
    ax.set_title(title, fontsize=9)
    ax2.set_ylabel("ACI alpha_t")
    ax2.set_xlabel("stream step t")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return buf.getvalue()
